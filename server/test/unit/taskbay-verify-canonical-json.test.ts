import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson as packageCanonicalJson } from '../../../packages/taskbay-verify/src/canonical-json.js';
import { actionDigest, type ApprovalAction } from '../../../packages/taskbay-verify/src/digest.js';
import { canonicalJson as serverCanonicalJson, sha256Hex } from '../../src/lib/hashing.js';
import { anyValue, approvalAction } from '../fuzz/arbitraries.js';
import { canon, sha256 } from '../support/independent-digest.js';

// @taskbay/verify writes RFC 8785 canonical JSON itself (packages/taskbay-verify/src/canonical-json.ts)
// so that it needs no package. Every digest Taskbay stored before was made with the server's
// lib/hashing.ts canonicalJson (the `canonicalize` package), which the audit log and the command
// rules still use: the two must give the same text for every value, and refuse the same values.

/** The text, or that it threw. */
function outcome(canonical: (v: unknown) => string, v: unknown): { text: string } | { threw: true } {
  try {
    return { text: canonical(v) };
  } catch {
    return { threw: true };
  }
}

/** Code units across the whole range (lone surrogates, NUL, U+2028, astral pairs), as keys and strings. */
const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyString = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit }), fc.string({ unit: 'grapheme' }));
const anyNumber = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -0, 1e21, 1e-7, 2 ** 53, -(2 ** 53) - 2, 5e-324, 1.7976931348623157e308, 0.1 + 0.2));
const { value: json } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    anyNumber,
    anyString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 6 }),
  ),
}));

/**
 * Past a few thousand levels both implementations run out of stack, at a depth that depends on
 * the stack left when they are called (inside fast-check, deeper than elsewhere), not on the
 * rule: generated values deeper than this are compared by the fixed deep cases below instead.
 */
const STACK_SAFE_DEPTH = 500;

/** The nesting depth of v, counted without recursion, stopping once past `limit`. */
function depthOver(v: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  const seen = new Set<unknown>();
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (d > limit) return true;
    if (x === null || typeof x !== 'object' || seen.has(x)) continue;
    seen.add(x);
    for (const child of Object.values(x as object)) stack.push([child, d + 1]);
  }
  return false;
}

describe('@taskbay/verify canonicalJson is the server’s canonicalJson', () => {
  it('refuses alike a value nested far past any stack (100,000 levels), and gives the same text at 400', () => {
    const nest = (depth: number) => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
      return v;
    };
    expect(outcome(packageCanonicalJson, nest(100_000))).toEqual({ threw: true });
    expect(outcome(serverCanonicalJson, nest(100_000))).toEqual({ threw: true });
    expect(outcome(packageCanonicalJson, nest(400))).toEqual(outcome(serverCanonicalJson, nest(400)));
    expect(outcome(packageCanonicalJson, nest(400))).not.toEqual({ threw: true });
  });

  it('gives the same text, or refuses alike, on generated JSON (any code unit, any double)', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(outcome(packageCanonicalJson, v)).toEqual(outcome(serverCanonicalJson, v));
      }),
      { numRuns: 3000 },
    );
  });

  it('and on fast-check’s anything (undefined members, null prototypes, NaN, ±Infinity, sparse arrays) and the fuzz suite’s hostile values', () => {
    const anything = fc.anything({ withNullPrototype: true, withSparseArray: true, withBoxedValues: true, withDate: true, maxDepth: 4 });
    fc.assert(
      fc.property(fc.oneof(anything, anyValue), (v) => {
        if (depthOver(v, STACK_SAFE_DEPTH)) return;
        expect(outcome(packageCanonicalJson, v)).toEqual(outcome(serverCanonicalJson, v));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses what the server refuses: NaN, Infinity, lone surrogates (also in keys), cycles, a value that is no JSON', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    for (const v of [Number.NaN, { a: [Number.POSITIVE_INFINITY] }, 'x\ud800', { '\udc00': 1 }, cycle, undefined, Symbol('s'), () => 1, 10n]) {
      expect(outcome(serverCanonicalJson, v), String(typeof v)).toEqual({ threw: true });
      expect(outcome(packageCanonicalJson, v), String(typeof v)).toEqual({ threw: true });
    }
    // A value seen twice is not a cycle.
    const shared = { k: 'v' };
    expect(packageCanonicalJson({ a: shared, b: [shared] })).toBe(serverCanonicalJson({ a: shared, b: [shared] }));
  });

  it('matches RFC 8785’s own examples (appendix B numbers, section 3.2.3 sorting by UTF-16 code units)', () => {
    // RFC 8785 appendix B: IEEE 754 values and their canonical text.
    const numbers: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [9007199254740992, '9007199254740992'],
      [295147905179352830000, '295147905179352830000'],
      [1e21, '1e+21'],
      [1e-7, '1e-7'],
      [0.000001, '0.000001'],
      [333333333.3333333, '333333333.3333333'],
    ];
    for (const [n, text] of numbers) expect(packageCanonicalJson(n)).toBe(text);
    // RFC 8785 section 3.2.3: "\r" < "1" < "\u0080" < "ö" < "€" < "😀" < "דּ" (code units, not code points).
    const sorted = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    expect(packageCanonicalJson(sorted)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });
});

describe('the digest rule, one function for Taskbay and agents', () => {
  it('actionDigest equals SHA-256 of the server’s canonical JSON of the digest input, and of the tests’ independent one, on generated actions', () => {
    const valid = fc.oneof(
      fc.record({
        kind: fc.constant('send_message' as const),
        text: anyString,
        data: fc.option(fc.dictionary(anyString, json, { maxKeys: 4 }), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('send_data' as const),
        form: fc.dictionary(fc.string(), json, { maxKeys: 3 }),
        values: fc.dictionary(fc.string(), json, { maxKeys: 3 }),
      }),
    );
    fc.assert(
      fc.property(fc.oneof(valid, approvalAction), (generated) => {
        // The fuzz suite's actions are hostile too: only those of a kind are actions at all.
        const action = generated as ApprovalAction;
        if (!action || typeof action !== 'object' || (action.kind !== 'send_message' && action.kind !== 'send_data')) return;
        if (depthOver(action, STACK_SAFE_DEPTH)) return;
        const input =
          action.kind === 'send_message'
            ? { kind: action.kind, text: action.text, data: action.data ?? null }
            : { kind: action.kind, form: action.form, values: action.values };
        const server = outcome(serverCanonicalJson, input);
        let digest: string | null;
        try {
          digest = actionDigest(action);
        } catch {
          digest = null;
        }
        expect(digest).toBe('text' in server ? sha256Hex(server.text) : null);
      }),
      { numRuns: 2000 },
    );
    // The tests' own canonical form (support/independent-digest.ts) on plain values.
    const plain = { kind: 'send_data' as const, form: { b: [1, 'two'], a: { z: null, y: true } }, values: { é: 'x', e: -5 } };
    expect(actionDigest(plain)).toBe(sha256(canon(plain)));
  });
});
