import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RequestFacts } from '../../src/policies/choose.js';
import { compileCondition, ConditionError, conditionContext } from '../../src/policies/condition.js';
import { CONDITION_LIMITS } from '../../src/limits.js';

// docs/POLICIES.md "Examples": every condition in docs/samples/policy-conditions.json (the block
// the page embeds) compiles, matches the request it says it matches and misses the other.
// Each variable is also exercised through real requests in server/test/integration/policies/choose-and-enforce.test.ts.

interface Example {
  about: string;
  condition: string;
  matches: Partial<RequestFacts> & { agentName?: string };
  misses: Partial<RequestFacts> & { agentName?: string };
}

const EXAMPLES: Example[] = JSON.parse(readFileSync(new URL('../../../docs/samples/policy-conditions.json', import.meta.url), 'utf8'));

const BASE: RequestFacts = {
  tenantId: '00000000-0000-4000-8000-000000000000',
  agentId: '00000000-0000-4000-8000-000000000001',
  skillId: null,
  taskId: '00000000-0000-4000-8000-000000000002',
  source: 'AGENT',
  risk: 'MEDIUM',
  title: 'A request',
  summary: null,
  action: { kind: 'send_message', text: 'hello' },
};

function evaluate(condition: string, over: Example['matches']): boolean {
  const compiled = compileCondition(condition);
  const { agentName = 'some-agent', ...facts } = over;
  return compiled === null ? true : compiled(conditionContext({ ...BASE, ...facts }, agentName));
}

describe('the documented condition examples', () => {
  it('there are examples over every variable', () => {
    const all = EXAMPLES.map((e) => e.condition).join(' ');
    for (const v of ['agent.name', 'agent.id', 'skill', 'riskLevel', 'risk ', 'kind', 'source', 'title', 'text', 'task.id']) expect(all).toContain(v);
  });

  for (const e of EXAMPLES) {
    it(`${e.about}: ${e.condition}`, () => {
      expect(evaluate(e.condition, e.matches)).toBe(true);
      expect(evaluate(e.condition, e.misses)).toBe(false);
    });
  }
});

describe('what a condition may be', () => {
  it('empty matches everything', () => {
    expect(compileCondition('')).toBeNull();
    expect(compileCondition('   ')).toBeNull();
  });

  it.each([
    ['risk >', /Unexpected token/],
    ['risk > 2', /no such overload/],
    ['agent.nam == "x"', /No such key: nam/],
    ['title', /must be true or false, but it gives a string/],
    ['unknownVariable == 1', /Unknown variable/i],
    ['text.matches("(a+)+$")', /regular expressions/],
    ['["a"].exists(x, ["b"].exists(y, text.contains(x + y)))', /inside another list macro/],
    [`title == "${'x'.repeat(CONDITION_LIMITS.sourceMaxChars)}"`, /longer than 2000/],
  ])('refuses %s with the reason', (condition, reason) => {
    expect(() => compileCondition(condition)).toThrow(ConditionError);
    expect(() => compileCondition(condition)).toThrow(reason);
  });

  it('an evaluation error is thrown to the caller (choosePolicy fails closed on it)', () => {
    const compiled = compileCondition('int(title) > 3')!;
    expect(() => compiled(conditionContext(BASE, ''))).toThrow();
  });

  it('text is the summary and the action text; a form contributes its values; a command its commands', () => {
    expect(conditionContext({ ...BASE, summary: 'S' }, '').text).toBe('S\nhello');
    expect(conditionContext({ ...BASE, action: { kind: 'send_data', form: {}, values: { a: 1 } } }, '').text).toBe('{"a":1}');
    const command = conditionContext({ ...BASE, source: 'COMMAND', action: { kind: 'run_command', commands: ['ls', 'rm -rf x'] } }, '');
    expect(command.kind).toBe('command');
    expect(command.text).toBe('ls\nrm -rf x');
  });
});
