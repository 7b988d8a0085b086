import { describe, expect, it } from 'vitest';
import { AgentCardError, validateAgentCard } from '../../src/a2a/card.js';
import { parseA2uiAction } from '../../src/forms/a2ui.js';
import { cloneJson, describeType, isPlainObject, isUuid, own } from '../../src/lib/untrusted.js';
import { JSON_DEPTH_MAX } from '../../src/limits.js';

// The kit every parser of untrusted JSON uses (server/src/lib/untrusted.ts), and the one depth
// limit (JSON_DEPTH_MAX) as the agent card and A2UI parsers apply it; the A2A wire parser's
// use is in a2a-client.test.ts.

/** `levels` objects, one inside the other, around a number: nested `levels` deep. */
const nest = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

class Point {
  x = 1;
}

describe('isPlainObject, own, describeType, isUuid', () => {
  it('a plain object is one made by JSON.parse, a literal or Object.create(null); nothing else', () => {
    for (const v of [{}, JSON.parse('{"a":1}'), Object.create(null)]) expect(isPlainObject(v)).toBe(true);
    for (const v of [null, undefined, [], 'x', 1, new Point(), new Date(), new Map()]) expect(isPlainObject(v)).toBe(false);
  });

  it('own reads own keys only: an inherited key is undefined, an own __proto__ key (JSON.parse) is its value', () => {
    const parsed = JSON.parse('{"__proto__":{"title":"inherited?"},"ok":1}') as Record<string, unknown>;
    expect(own(parsed, 'ok')).toBe(1);
    expect(own(parsed, 'title')).toBeUndefined();
    expect(own(parsed, '__proto__')).toEqual({ title: 'inherited?' });
    expect(own({}, 'toString')).toBeUndefined();
  });

  it('describeType names the kind of value, never the value', () => {
    expect([null, [], 'secret', 1, {}, undefined].map(describeType)).toEqual(['null', 'an array', 'string', 'number', 'object', 'undefined']);
  });

  it('isUuid: the 8-4-4-4-12 hex form in either case, nothing around it', () => {
    expect(isUuid('0b9e7c1a-3f2d-4c5e-8a6b-1d2e3f4a5b6c')).toBe(true);
    expect(isUuid('0B9E7C1A-3F2D-4C5E-8A6B-1D2E3F4A5B6C')).toBe(true);
    for (const s of ['', '0b9e7c1a3f2d4c5e8a6b1d2e3f4a5b6c', ' 0b9e7c1a-3f2d-4c5e-8a6b-1d2e3f4a5b6c', '0b9e7c1a-3f2d-4c5e-8a6b-1d2e3f4a5b6g']) {
      expect(isUuid(s)).toBe(false);
    }
  });
});

describe('cloneJson', () => {
  const tooDeep = () => new Error('too deep');

  it('copies JSON, turns non-finite numbers into null and drops what JSON cannot hold', () => {
    const input = { a: [1, 'x', true, null, { b: Number.NaN }], c: Number.POSITIVE_INFINITY, f: () => 1, u: undefined };
    const copy = cloneJson(input, { protoKeys: 'keep', tooDeep }) as Record<string, unknown>;
    expect(copy).toEqual({ a: [1, 'x', true, null, { b: null }], c: null });
    expect(Object.keys(copy)).toEqual(['a', 'c']);
    expect(copy.a).not.toBe(input.a);
  });

  it("an own __proto__ key is kept as a plain data key ('keep') or left out ('drop'), never a prototype", () => {
    const hostile = JSON.parse('{"__proto__":{"polluted":true},"ok":1}');
    const kept = cloneJson(hostile, { protoKeys: 'keep', tooDeep }) as Record<string, unknown>;
    expect(Object.keys(kept)).toEqual(['__proto__', 'ok']);
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect('polluted' in kept).toBe(false);
    const dropped = cloneJson(hostile, { protoKeys: 'drop', tooDeep }) as Record<string, unknown>;
    expect(Object.keys(dropped)).toEqual(['ok']);
    expect('polluted' in dropped).toBe(false);
  });

  it(`keeps JSON_DEPTH_MAX (${JSON_DEPTH_MAX}) levels; one more throws the caller's error`, () => {
    expect(cloneJson(nest(JSON_DEPTH_MAX), { protoKeys: 'keep', tooDeep })).toEqual(nest(JSON_DEPTH_MAX));
    expect(() => cloneJson(nest(JSON_DEPTH_MAX + 1), { protoKeys: 'keep', tooDeep })).toThrow('too deep');
    expect(() => cloneJson([nest(JSON_DEPTH_MAX)], { protoKeys: 'drop', tooDeep })).toThrow('too deep');
  });
});

describe('the one depth limit where agent cards and A2UI actions are read', () => {
  const card = (params: unknown) => ({
    name: 'Agent',
    supportedInterfaces: [{ url: 'https://agent.example/a2a', protocolBinding: 'JSONRPC' }],
    capabilities: { extensions: [{ uri: 'urn:x', params }] },
    skills: [],
  });

  it('card extension params: JSON_DEPTH_MAX levels are kept, one more refuses the card', () => {
    expect(validateAgentCard(card(nest(JSON_DEPTH_MAX))).capabilities.extensions![0]!.params).toEqual(nest(JSON_DEPTH_MAX));
    expect(() => validateAgentCard(card({ deeper: nest(JSON_DEPTH_MAX) }))).toThrow(AgentCardError);
    expect(() => validateAgentCard(card({ deeper: nest(JSON_DEPTH_MAX) }))).toThrow('capabilities.extensions[0].params is nested too deeply');
  });

  it('an A2UI action context: JSON_DEPTH_MAX levels are sent, one more is refused', () => {
    expect(parseA2uiAction({ name: 'go', surfaceId: 's', context: nest(JSON_DEPTH_MAX) })).toMatchObject({
      ok: true,
      action: { context: nest(JSON_DEPTH_MAX) },
    });
    expect(parseA2uiAction({ name: 'go', surfaceId: 's', context: nest(JSON_DEPTH_MAX + 1) })).toEqual({
      ok: false,
      error: 'action.context is nested too deeply',
    });
  });
});
