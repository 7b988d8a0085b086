import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONDITION_LIMITS } from '../../src/limits.js';
import { ConditionBudget, ConditionBudgetExceeded } from '../../src/policies/condition-budget.js';
import { compileCondition, ConditionError, conditionContext, meteredCondition, type ConditionContext } from '../../src/policies/condition.js';
import { REVIEWER_CONDITION } from '../support/policies.js';

// Issue 22 finding 4: a policy condition's cost is bounded in time and space (docs/POLICIES.md
// "Cost bounds"). When it is saved (and loaded), its worst case over the largest inputs must fit
// the budget (policies/condition-cost.ts); every evaluation runs metered (condition-budget.ts).
// The two must agree: the static bound may never be below what the meter charges, or a
// condition saved as affordable could still be stopped (and fail closed) on some request.

const L = CONDITION_LIMITS;

const request = (text: string): ConditionContext =>
  conditionContext(
    {
      tenantId: 't',
      agentId: null,
      skillId: null,
      taskId: null,
      source: 'AGENT',
      risk: 'LOW',
      title: 'A request',
      summary: null,
      action: { kind: 'send_message', text },
    },
    '',
  );

/** Every variable at the largest size a condition is evaluated on, made of `fill`. */
function largest(fill: string): ConditionContext {
  const of = (n: number) => fill.repeat(Math.ceil(n / fill.length)).slice(0, n);
  const field = of(L.fieldMaxChars);
  return {
    agent: { id: field, name: field },
    skill: field,
    risk: field,
    riskLevel: 4n,
    kind: field,
    source: field,
    title: field,
    text: of(L.textMaxChars),
    task: { id: field },
  };
}

// Fillers that make splits longest (one separator per character), words short, and case mapping
// grow the text (U+0390 upper-cases to three code units, U+0130 lower-cases to two).
const WORST = ['x', ' ', '\n', 'a,b ', '\u0390\u0130'].map(largest);

const SAMPLES: string[] = JSON.parse(readFileSync(new URL('../../../docs/samples/policy-conditions.json', import.meta.url), 'utf8')).map(
  (e: { condition: string }) => e.condition,
);

const CORPUS = [
  ...SAMPLES,
  'text.contains("DROP TABLE") && title.startsWith("Deploy")',
  'title.split(" ").exists(w, w == "prod")',
  'title.split(",").map(w, w.trim()).exists(w, w == "x")',
  'title.split(" ").map(w, w + w).join("-").size() > 3',
  'title.split("").filter(c, c == "x").size() > 2',
  'title.split(" ").map(w, w.size() > 3, w.upperAscii()).exists_one(w, w == "PROD")',
  'cel.bind(t, title.lowerAscii(), t.contains("prod") || t.endsWith("x"))',
  'cel.bind(a, title + title, cel.bind(b, a + a, b.size() > 10))',
  '[title, skill, agent.name].exists(s, s.contains("x"))',
  '{"a": title, "b": skill}.exists(k, k == "a")',
  '{"a": title}["a"].size() > 1',
  'size([1, 2, 3] + [riskLevel]) == 4',
  'string(riskLevel) + title != ""',
  'int("12") + riskLevel > 3 && double("1.5") < 2.0',
  'text.indexOf("rm -rf") >= 0 || text.substring(0, 10) == "x"',
  'has(agent.name) && agent.name.size() > 0',
  'type(title) == string && dyn(riskLevel) == 4',
  'text.split("x", 3).size() >= 1',
  'title.split(" ").all(w, w.size() < 100)',
  'kind in ["send_message", "command"] && source != "USER"',
  '!(riskLevel < 2) ? title.upperAscii().startsWith("A") : text.endsWith("z")',
  'text.lowerAscii().contains("delete") || text.upperAscii().contains("DROP")',
  '[1, 2, 3].map(x, x * 2).exists(y, y == riskLevel)',
  'title.split(" ").map(w, [w, w]).size() > 0',
  'cel.bind(l, title.split(" "), l.size() > 1 && l[0] == "x")',
  'b"abc".size() == 3 && string(b"hi") == "hi"',
  'text.split("").size() > 5',
  'text.split(" ").join(",").size() > 0',
  'title.split(" ").map(w, w.lowerAscii()).join(" ").contains("prod")',
  '[text, text, title].map(s, s.lowerAscii()).join("").size() > 0',
  'agent.id == task.id || skill.startsWith(agent.name)',
  'uint(riskLevel) > 1u && string(1.5) != ""',
];

/** A small seeded generator of conditions (mulberry32), for the same comparison on shapes nobody wrote by hand. */
function generated(count: number, seed = 22): string[] {
  let s = seed;
  const rnd = () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const str = (d: number, v: string | null): string => {
    const leaves = ['text', 'title', 'agent.name', 'skill', '"x"', '"a b"', ...(v ? [v, v] : [])];
    if (d <= 0) return pick(leaves);
    return pick([
      () => pick(leaves),
      () => `${str(d - 1, v)} + ${str(d - 1, v)}`,
      () => `${str(d - 1, v)}.lowerAscii()`,
      () => `${str(d - 1, v)}.upperAscii()`,
      () => `${str(d - 1, v)}.trim()`,
      () => `string(${int(d - 1, v)})`,
      () => `${list(d - 1, v)}.join()`,
      () => `${list(d - 1, v)}.join(",")`,
      () => `(${bool(d - 1, v)} ? ${str(d - 1, v)} : ${str(d - 1, v)})`,
      () => `cel.bind(z, ${str(d - 1, v)}, z + z)`,
    ])();
  };
  const list = (d: number, v: string | null): string => {
    const options = [() => `${str(d - 1, v)}.split(" ")`, () => `${str(d - 1, v)}.split("")`, () => `[${str(d - 1, v)}, ${str(d - 1, v)}]`];
    if (d > 0) options.push(() => `${list(d - 1, v)} + ${list(d - 1, v)}`);
    if (d > 0 && !v)
      options.push(
        () => `${list(d - 1, null)}.map(e, ${str(d - 1, 'e')})`,
        () => `${list(d - 1, null)}.filter(e, ${bool(d - 1, 'e')})`,
      );
    return pick(options)();
  };
  const int = (d: number, v: string | null): string =>
    pick([() => `size(${str(d - 1, v)})`, () => `${str(d - 1, v)}.indexOf(${str(d - 1, v)})`, () => 'riskLevel', () => '7', () => `size(${list(d - 1, v)})`])();
  const bool = (d: number, v: string | null): string => {
    const options = [
      () => `${str(d - 1, v)}.contains(${str(d - 1, v)})`,
      () => `${str(d - 1, v)}.startsWith(${str(d - 1, v)})`,
      () => `${str(d - 1, v)} == ${str(d - 1, v)}`,
      () => `${int(d - 1, v)} > ${int(d - 1, v)}`,
      () => `${str(d - 1, v)} in ${list(d - 1, v)}`,
    ];
    if (d > 0)
      options.push(
        () => `(${bool(d - 1, v)} && ${bool(d - 1, v)})`,
        () => `(${bool(d - 1, v)} || ${bool(d - 1, v)})`,
        () => `!${bool(d - 1, v)}`,
      );
    if (d > 0 && !v)
      options.push(
        () => `${list(d - 1, null)}.exists(e, ${bool(d - 1, 'e')})`,
        () => `${list(d - 1, null)}.all(e, ${bool(d - 1, 'e')})`,
      );
    return pick(options)();
  };
  return Array.from({ length: count }, () => bool(3, null));
}

function metered(condition: ReturnType<typeof meteredCondition>, context: ConditionContext) {
  const budget = new ConditionBudget();
  let error: unknown = null;
  try {
    condition(context, budget);
  } catch (e) {
    error = e;
  }
  return { budget, error };
}

describe('the static bound is never below what the meter charges', () => {
  it.each(CORPUS)('%s', (source) => {
    const condition = compileCondition(source)!;
    expect(condition.cost.work).toBeLessThanOrEqual(L.workMax);
    for (const context of WORST) {
      const { budget, error } = metered(condition, context);
      expect(error, String(error)).not.toBeInstanceOf(ConditionBudgetExceeded);
      expect(budget.spent).toBeLessThanOrEqual(condition.cost.work);
      expect(budget.largestValue).toBeLessThanOrEqual(condition.cost.largestValue);
    }
  });

  it('on 400 generated conditions (those that compile), on the largest requests', () => {
    let compiled = 0;
    for (const source of generated(400)) {
      let condition: ReturnType<typeof compileCondition>;
      try {
        condition = compileCondition(source);
      } catch (e) {
        expect(e, source).toBeInstanceOf(ConditionError);
        continue;
      }
      compiled++;
      for (const context of WORST.slice(0, 3)) {
        const { budget, error } = metered(condition!, context);
        expect(error, `${source}: ${String(error)}`).not.toBeInstanceOf(ConditionBudgetExceeded);
        expect(budget.spent, source).toBeLessThanOrEqual(condition!.cost.work);
        expect(budget.largestValue, source).toBeLessThanOrEqual(condition!.cost.largestValue);
      }
    }
    // The comparison must have been made on a good share of them.
    expect(compiled).toBeGreaterThan(100);
  });
});

describe('refused when saved, naming the problem', () => {
  it("the reviewer's 158-character condition (split, map, join after cel.bind doubling)", () => {
    expect(REVIEWER_CONDITION).toHaveLength(158);
    expect(() => compileCondition(REVIEWER_CONDITION)).toThrow(ConditionError);
    expect(() => compileCondition(REVIEWER_CONDITION)).toThrow(
      /`q\.split\(""\)\.map\(c, c \+ q\)` can build a value of [\d,]+ characters or elements on a large request; a condition may build at most 1,048,576/,
    );
  });

  it.each([
    ['cel.bind(a, text + text, cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, d.size() > 0))))', /`c \+ c` can build a value/],
    ['text.split("").map(c, c + text).size() > 0', /`text\.split\(""\)\.map\(c, c \+ text\)` can build a value/],
    ['text.split("\\n").exists(l, l.startsWith("rm"))', /could cost up to [\d,]+ units of work, and a request's conditions may spend 16,000,000/],
    ['text.split("").join(text).size() > 0', /join's separator must be a string literal of at most 16 characters/],
    ['title.split("").join("0123456789abcdefg").size() > 0', /join's separator must be a string literal of at most 16 characters/],
    ['text.lastIndexOf(title) > 0', /lastIndexOf is not allowed/],
    ['text.matches("(a+)+$")', /regular expressions/],
    ['duration(title) > duration("1s")', /duration\(\) is not available/],
    ['timestamp(title) > timestamp("2024-01-01T00:00:00Z")', /timestamp\(\) is not available/],
    ['b"ab".hex() == "6162"', /hex\(\) is not available/],
    ['bytes(text).size() > 0', /bytes\(\) is not available/],
    ['["a"].exists(x, ["b"].exists(y, text.contains(x + y)))', /inside another list macro/],
    ['taskbay_metered(true)', /taskbay_metered\(\) is not available/],
  ])('%s', (source, reason) => {
    expect(() => compileCondition(source)).toThrow(ConditionError);
    expect(() => compileCondition(source)).toThrow(reason);
  });
});

describe('the meter stops an evaluation the static bound never saw (a condition stored behind the API)', () => {
  it("stops the reviewer's condition on a 20,000-character request before it builds its value", () => {
    const condition = meteredCondition(REVIEWER_CONDITION);
    const budget = new ConditionBudget();
    expect(() => condition(request('x'.repeat(20_000)), budget)).toThrow(ConditionBudgetExceeded);
    expect(() => condition(request('x'.repeat(20_000)), new ConditionBudget())).toThrow(/a value of the condition grew past 1,048,576/);
    // The last step charged is at most one value past the limit.
    expect(budget.spent).toBeLessThanOrEqual(L.workMax);
    expect(budget.largestValue).toBeLessThanOrEqual(L.valueSizeMax + 20_001);
  });

  it('stops when the request budget is spent, and every later condition of the request fails at once', () => {
    const budget = new ConditionBudget({ ...L, workMax: 50_000 });
    const scan = meteredCondition('text.split("").exists(c, c == "y")');
    expect(() => scan(request('x'.repeat(20_000)), budget)).toThrow(/evaluation budget of this request's conditions \(50,000 units\) is spent/);
    const spent = budget.spent;
    expect(spent).toBeLessThanOrEqual(50_000 + L.valueSizeMax);
    const cheap = compileCondition('riskLevel >= 1')!;
    expect(() => cheap(request('x'), budget)).toThrow(ConditionBudgetExceeded);
    expect(budget.spent).toBe(spent);
    // A request's own budget is fresh.
    expect(cheap(request('x'))).toBe(true);
  });

  it('a failure the library catches inside || still fails the evaluation (no true after a spent budget)', () => {
    const condition = meteredCondition('title.split("").map(c, c + title).size() > 0 || true');
    const small = { ...L, valueSizeMax: 1000 };
    expect(() => condition(largest('x'), new ConditionBudget(small))).toThrow(/grew past 1,000/);
    expect(condition(largest('x'), new ConditionBudget())).toBe(true);
  });

  it('a condition is not evaluated on a variable longer than the static bound assumes; one that does not read it is', () => {
    const context = { ...largest('x'), text: 'x'.repeat(L.textMaxChars + 1) };
    expect(() => compileCondition('text.contains("DROP")')!(context)).toThrow(
      /the request's text is longer than the 131,072 characters a condition is evaluated on/,
    );
    expect(compileCondition('riskLevel >= 3')!(context)).toBe(true);
    const title = { ...largest('x'), agent: { id: '', name: 'n'.repeat(L.fieldMaxChars + 1) } };
    expect(() => compileCondition('agent.name == "x"')!(title)).toThrow(/the request's agent is longer/);
  });
});
