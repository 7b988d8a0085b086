import { JSON_DEPTH_MAX } from '../limits.js';

// Reading untrusted JSON (an agent's answers, cards and forms, a hook's payload, a person's
// input): the small checks every parser uses, once. Nothing here spreads or mutates its input,
// and keys are read as own keys only, so an own `__proto__` key (JSON.parse makes one) is never
// followed into a prototype. The console bundles this file: no Node built-ins.

/** A plain object (prototype Object.prototype or null): not null, not an array, not a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The value of an own key, else undefined: never an inherited one. */
export function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** What kind of JSON value this is, for an error message that must not echo the value: null, an array, or its typeof. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its 8-4-4-4-12 hex form, either case (every row id in Taskbay is one). */
export function isUuid(s: string): boolean {
  return UUID.test(s);
}

/**
 * True when a JSON value nests objects/arrays deeper than `max` (the top-level object is 1).
 * Iterative, and stops at the first path that is too deep.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

export interface CloneJsonOptions {
  /** An own `__proto__` key: kept as a plain data key (agent content, whose digests cover the data as sent) or left out (cards, A2UI). */
  protoKeys: 'keep' | 'drop';
  /** The error for a value nested deeper than JSON_DEPTH_MAX, in the caller's words. */
  tooDeep: () => Error;
}

/**
 * A deep copy of a JSON value, at most JSON_DEPTH_MAX levels of arrays and objects below the
 * value (deeper throws `tooDeep()`): non-finite numbers become null, values JSON cannot hold are
 * dropped (undefined at the top). Keys are defined, never assigned, so no key can set the
 * copy's prototype.
 */
export function cloneJson(value: unknown, options: CloneJsonOptions): unknown {
  return copy(value, options, 0);
}

function copy(v: unknown, options: CloneJsonOptions, depth: number): unknown {
  if (depth > JSON_DEPTH_MAX) throw options.tooDeep();
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map((x) => copy(x, options, depth + 1));
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      if (key === '__proto__' && options.protoKeys === 'drop') continue;
      const val = copy(v[key], options, depth + 1);
      if (val !== undefined) Object.defineProperty(out, key, { value: val, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return undefined;
}
