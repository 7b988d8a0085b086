import type { ASTNode } from '@marcbachmann/cel-js';
import { CONDITION_LIMITS } from '../limits.js';

// The worst case of a condition, found from its syntax before it is ever evaluated (when it is
// saved and when an instance loads it): the most work an evaluation can do and the largest value
// it can build, over the largest inputs a condition is evaluated on (CONDITION_LIMITS). It counts
// in the units the evaluation meter charges (condition-budget.ts: a step costs stepCost, a value
// its size), and it must never count less than the meter: server/test/unit/condition-cost.test.ts
// evaluates conditions on worst-case requests and compares.
//
// This walk is also the list of what a condition may call: every function has a model of how
// large its result can be, and one without a model is refused. Refused outright:
// - `matches` (regular expressions): a backtracking pattern over agent text runs for seconds;
// - `lastIndexOf`: V8 searches backwards character by character, seconds on 100 KB strings;
// - the bytes, time and duration functions: no variable is a time or bytes, and `duration`
//   parses with a backtracking pattern.
// A list macro inside another is refused (its work would be the product of two list sizes), and
// join's separator must be a short string literal (the output grows by it per element). Every
// other function's time is linear in the sizes of its arguments and its result, which the meter
// charges.
//
// Sizes: a string is 1 + its length in UTF-16 code units, a list or map 1 + the sizes of its
// elements (keys and values), anything else 1. Inside a list macro, a bound is linear in the size
// v of the element the macro is at (Lin: c + k·v), so one pass over a split string costs the
// string's size, not its size squared.

const L = CONDITION_LIMITS;

interface Lin {
  c: number;
  k: number;
}

interface Bound {
  /** The value's size (see above). */
  size: Lin;
  /** A string's characters, a list's or map's elements: what a list macro, split or join sees. */
  count: Lin;
  /** Any element of a list, key or value of a map; null for a scalar or a string. */
  item: Bound | null;
  /** What evaluating it costs, its sub-expressions included. */
  work: Lin;
}

export interface ConditionCost {
  /** The most work one evaluation can do. */
  work: number;
  /** The largest value one step can produce. */
  largestValue: number;
}

export class ConditionCostError extends Error {}

const lin = (c: number, k = 0): Lin => ({ c, k });
const ZERO = lin(0);
const add = (...xs: Lin[]): Lin => xs.reduce((a, b) => ({ c: a.c + b.c, k: a.k + b.k }), ZERO);
const scale = (x: Lin, f: number): Lin => ({ c: x.c * f, k: x.k * f });
const maxLin = (a: Lin, b: Lin): Lin => ({ c: Math.max(a.c, b.c), k: Math.max(a.k, b.k) });

function maxBound(a: Bound | null, b: Bound | null): Bound | null {
  if (!a) return b;
  if (!b) return a;
  return { size: maxLin(a.size, b.size), count: maxLin(a.count, b.count), item: maxBound(a.item, b.item), work: maxLin(a.work, b.work) };
}

const scalar = (): Omit<Bound, 'work'> => ({ size: lin(1), count: ZERO, item: null });
const string = (chars: number): Omit<Bound, 'work'> => ({ size: lin(1 + chars), count: lin(chars), item: null });

/**
 * A condition language's variables (condition.ts: policy conditions, and the command rules of
 * hooks/rules.ts): a string with the most characters it is evaluated on, an int, or a map of
 * string fields with theirs.
 */
export type VariableSpec = { type: 'string'; maxChars: number } | { type: 'int' } | { type: 'map'; fields: Readonly<Record<string, number>> };
export type VariableSpecs = Readonly<Record<string, VariableSpec>>;

/** The variables at their largest; a map's fields too. */
export interface VariableBounds {
  values: Record<string, Omit<Bound, 'work'>>;
  fields: Record<string, Record<string, Omit<Bound, 'work'>>>;
}

export function variableBounds(specs: VariableSpecs): VariableBounds {
  const values: VariableBounds['values'] = {};
  const fields: VariableBounds['fields'] = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type === 'string') values[name] = string(spec.maxChars);
    else if (spec.type === 'int') values[name] = scalar();
    else {
      const entries = Object.entries(spec.fields).map(([key, max]) => [key, string(max)] as const);
      fields[name] = Object.fromEntries(entries);
      const size = 1 + entries.reduce((s, [key, b]) => s + 1 + key.length + b.size.c, 0);
      values[name] = { size: lin(size), count: lin(entries.length), item: entries.map(([, b]) => ({ ...b, work: ZERO })).reduce(maxBound, null) };
    }
  }
  return { values, fields };
}

/** Type names and other constants of the library (`int`, `cel`): small. */
const CONSTANT = { size: lin(64), count: lin(64), item: null };

const REFUSED: Record<string, string> = {
  matches: 'regular expressions (matches) are not allowed in policy conditions: use contains, startsWith, endsWith or in',
  lastIndexOf: 'lastIndexOf is not allowed in policy conditions (its search is slow on long text): use indexOf or contains',
};

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

type Model = (receiver: Bound | null, args: Bound[], node: ASTNode) => Omit<Bound, 'work'>;

const first = (receiver: Bound | null, args: Bound[]): Bound => (receiver ?? args[0])!;

/** What each function may return, at most (receiver: the value before the dot, when called as a method). */
const FUNCTIONS: Record<string, Model> = {
  size: scalar,
  contains: scalar,
  startsWith: scalar,
  endsWith: scalar,
  indexOf: scalar,
  int: scalar,
  uint: scalar,
  double: scalar,
  bool: scalar,
  type: scalar,
  dyn: (r, a) => first(r, a),
  trim: (r, a) => first(r, a),
  substring: (r, a) => first(r, a),
  // Unicode case mapping can lengthen a string, three times at most (U+0390 upper-cases to three code units).
  lowerAscii: (r, a) => ({ size: scale(first(r, a).size, 3), count: scale(first(r, a).count, 3), item: null }),
  upperAscii: (r, a) => ({ size: scale(first(r, a).size, 3), count: scale(first(r, a).count, 3), item: null }),
  // A number or bool as text, or a string (or bytes) as it is.
  string: (r, a) => ({ size: maxLin(first(r, a).size, lin(33)), count: maxLin(first(r, a).count, lin(32)), item: null }),
  // At most one more part than the string has characters; the parts share its characters.
  split: (r, a) => {
    const s = first(r, a);
    return { size: add(scale(s.count, 2), lin(2)), count: add(s.count, lin(1)), item: { size: s.size, count: s.count, item: null, work: ZERO } };
  },
  join: (r, _a, node) => {
    const list = r!;
    const sep = separatorLength(node);
    const size = add(list.size, scale(list.count, sep));
    return { size, count: size, item: null };
  },
};

function separatorLength(node: ASTNode): number {
  const args = node.op === 'rcall' ? node.args[2] : [];
  if (!args.length) return 0;
  const sep = args[0]!;
  if (sep.op !== 'value' || typeof sep.args !== 'string' || sep.args.length > L.joinSeparatorMaxChars) {
    throw new ConditionCostError(
      `join's separator must be a string literal of at most ${L.joinSeparatorMaxChars} characters (the result grows by it for every element)`,
    );
  }
  return sep.args.length;
}

interface Scope {
  names: ReadonlyMap<string, Omit<Bound, 'work'>>;
  /** Inside a list macro: the largest size of its element (v's range); null outside one. */
  vmax: number | null;
}

interface Walk {
  source: string;
  bounds: VariableBounds;
  largest: { size: number; node: ASTNode } | null;
}

/**
 * The worst case of a parsed, type-checked condition. Throws ConditionCostError naming the part
 * of the condition that is not allowed or costs too much.
 */
export function conditionCost(ast: ASTNode, source: string, bounds: VariableBounds): ConditionCost {
  const walk: Walk = { source, bounds, largest: null };
  const b = estimate(ast, { names: new Map(), vmax: null }, walk);
  const largestValue = walk.largest?.size ?? 0;
  if (largestValue > L.valueSizeMax) {
    throw new ConditionCostError(
      `${quote(walk, walk.largest!.node)} can build a value of ${fmt(largestValue)} characters or elements on a large request; a condition may build at most ${fmt(L.valueSizeMax)}`,
    );
  }
  return { work: b.work.c, largestValue };
}

/** The part of the source a node spans, shortened. */
function quote(walk: Walk, node: ASTNode): string {
  const text = walk.source.slice(node.start, node.end);
  return `\`${text.length > 80 ? `${text.slice(0, 77)}...` : text}\``;
}

/** 1,234,567 (not toLocaleString: its first call loads ICU data, tens of milliseconds on a request's path). */
export const fmt = (n: number) => (Number.isFinite(n) ? String(Math.round(n)).replace(/\B(?=(\d{3})+$)/g, ',') : 'unbounded');

const at = (x: Lin, scope: Scope) => x.c + x.k * (scope.vmax ?? 0);

function done(node: ASTNode, scope: Scope, walk: Walk, value: Omit<Bound, 'work'>, work: Lin): Bound {
  const size = at(value.size, scope);
  if (!walk.largest || size > walk.largest.size) walk.largest = { size, node };
  return { ...value, work: add(work, lin(L.stepCost), value.size) };
}

function estimate(node: ASTNode, scope: Scope, walk: Walk): Bound {
  switch (node.op) {
    case 'value': {
      const v = node.args;
      return done(node, scope, walk, typeof v === 'string' || v instanceof Uint8Array ? string(v.length) : scalar(), ZERO);
    }
    case 'id': {
      const name = node.args;
      return done(
        node,
        scope,
        walk,
        scope.names.get(name) ?? (Object.hasOwn(walk.bounds.values, name) ? walk.bounds.values[name] : undefined) ?? CONSTANT,
        ZERO,
      );
    }
    case '.':
    case '.?': {
      const [left, name] = node.args;
      const l = estimate(left, scope, walk);
      const known =
        left.op === 'id' && !scope.names.has(left.args)
          ? Object.hasOwn(walk.bounds.fields, left.args)
            ? walk.bounds.fields[left.args]![name]
            : undefined
          : undefined;
      return done(node, scope, walk, known ?? l.item ?? l, l.work);
    }
    case '[]':
    case '[?]': {
      const [left, index] = node.args;
      const l = estimate(left, scope, walk);
      const i = estimate(index, scope, walk);
      return done(node, scope, walk, l.item ?? l, add(l.work, i.work));
    }
    case '!_':
    case '-_':
      return done(node, scope, walk, scalar(), estimate(node.args, scope, walk).work);
    case '?:': {
      const [c, a, b] = node.args.map((n) => estimate(n, scope, walk)) as [Bound, Bound, Bound];
      return done(node, scope, walk, maxBound(a, b)!, add(c.work, maxLin(a.work, b.work)));
    }
    case 'list': {
      const items = node.args.map((n) => estimate(n, scope, walk));
      const size = add(lin(1), ...items.map((i) => i.size));
      return done(node, scope, walk, { size, count: lin(items.length), item: items.reduce<Bound | null>(maxBound, null) }, add(...items.map((i) => i.work)));
    }
    case 'map': {
      const parts = node.args.flatMap(([k, v]) => [estimate(k, scope, walk), estimate(v, scope, walk)]);
      const size = add(lin(1), ...parts.map((i) => i.size));
      return done(
        node,
        scope,
        walk,
        { size, count: lin(node.args.length), item: parts.reduce<Bound | null>(maxBound, null) },
        add(...parts.map((i) => i.work)),
      );
    }
    case '+': {
      const [l, r] = node.args.map((n) => estimate(n, scope, walk)) as [Bound, Bound];
      return done(node, scope, walk, { size: add(l.size, r.size), count: add(l.count, r.count), item: maxBound(l.item, r.item) }, add(l.work, r.work));
    }
    case 'call':
      return call(node, node.args[0], null, node.args[1], scope, walk);
    case 'rcall':
      return call(node, node.args[0], node.args[1], node.args[2], scope, walk);
    default: {
      // Comparisons, logic and arithmetic: a bool or a number.
      const [l, r] = (node.args as ASTNode[]).map((n) => estimate(n, scope, walk)) as [Bound, Bound];
      return done(node, scope, walk, scalar(), add(l.work, r.work));
    }
  }
}

function call(node: ASTNode, name: string, receiverNode: ASTNode | null, argNodes: ASTNode[], scope: Scope, walk: Walk): Bound {
  if (REFUSED[name]) throw new ConditionCostError(REFUSED[name]);
  if (receiverNode && MACROS.has(name)) return listMacro(node, name, receiverNode, argNodes, scope, walk);
  if (receiverNode?.op === 'id' && receiverNode.args === 'cel' && name === 'bind') {
    const [variable, valueNode, body] = argNodes as [ASTNode, ASTNode, ASTNode];
    const value = estimate(valueNode, scope, walk);
    const names = new Map(scope.names).set(variable.args as string, value);
    const result = estimate(body, { ...scope, names }, walk);
    return done(node, scope, walk, result, add(value.work, result.work));
  }
  if (!receiverNode && name === 'has') {
    const arg = estimate(argNodes[0]!, scope, walk);
    return done(node, scope, walk, scalar(), arg.work);
  }
  const model = FUNCTIONS[name];
  if (!model) throw new ConditionCostError(`${name}() is not available in policy conditions`);
  const receiver = receiverNode ? estimate(receiverNode, scope, walk) : null;
  const args = argNodes.map((n) => estimate(n, scope, walk));
  return done(node, scope, walk, model(receiver, args, node), add(receiver?.work ?? ZERO, ...args.map((a) => a.work)));
}

/**
 * all, exists, exists_one, map and filter: one pass over the list, each element bound to the
 * macro's variable (of size v). The evaluation's steps per element besides the predicate and the
 * transform are those of the library's expansion (macros.js): a ternary and a literal, or a push
 * onto the result.
 */
function listMacro(node: ASTNode, name: string, receiverNode: ASTNode, argNodes: ASTNode[], scope: Scope, walk: Walk): Bound {
  if (scope.vmax !== null) {
    throw new ConditionCostError(`${name}() inside another list macro is not allowed in policy conditions (it bounds the work of one request)`);
  }
  const list = estimate(receiverNode, scope, walk);
  const n = list.count.c;
  const elementsSize = Math.max(0, list.size.c - 1);
  const element = list.item ?? { ...list, work: ZERO };
  const variable = argNodes[0]!;
  if (variable.op !== 'id') throw new ConditionCostError(`${name}()'s first argument must be a variable name`);
  const inner: Scope = {
    names: new Map(scope.names).set(variable.args, { size: lin(0, 1), count: lin(0, 1), item: element.item }),
    vmax: element.size.c,
  };
  const [predicate, transform] =
    name === 'map' && argNodes.length === 2
      ? [null, estimate(argNodes[1]!, inner, walk)]
      : [estimate(argNodes[1]!, inner, walk), argNodes[2] ? estimate(argNodes[2], inner, walk) : null];
  const S = lin(L.stepCost);
  let step: Lin;
  let result: Omit<Bound, 'work'>;
  const total = (x: Lin) => x.c * n + x.k * elementsSize;
  if (name === 'map') {
    const t = transform!;
    step = predicate ? add(S, predicate.work, S, t.work) : add(S, t.work);
    const itemAtMost = (x: Lin) => lin(x.c + x.k * element.size.c);
    result = {
      size: lin(1 + total(t.size)),
      count: lin(n),
      item: { size: itemAtMost(t.size), count: itemAtMost(t.count), item: t.item, work: ZERO },
    };
  } else if (name === 'filter') {
    step = add(S, predicate!.work, S, S, lin(0, 1));
    result = { size: list.size, count: list.count, item: list.item };
  } else {
    // all, exists, exists_one: a ternary (a bool or a count) and its branch, a literal or the count.
    step = add(S, lin(1), predicate!.work, S, lin(1));
    result = scalar();
  }
  // The list, the accumulator's first value, then every element.
  const work = add(list.work, lin(L.stepCost + 1), lin(total(step)));
  return done(node, scope, walk, result, work);
}
