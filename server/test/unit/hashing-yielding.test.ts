import { describe, expect, it } from 'vitest';
import { canonicalSha256, canonicalSha256Yielding } from '../../src/lib/hashing.js';

// lib/hashing.ts canonicalSha256Yielding: the same hash as canonicalSha256 (RFC 8785 through
// `canonicalize`) for every JSON shape, and the event loop turns while a large value is hashed.

function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

function value(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 3 || r < 0.35) {
    const leaves = [null, true, false, 0, -0, 1e21, 0.1, -5.5, 2 ** 53, '', 'é', 'z', '\u{1F600}', 'a"b\\c\n', '\u2028', 'ä\u0301'];
    return leaves[Math.floor(rand() * leaves.length)];
  }
  const n = Math.floor(rand() * 6);
  if (r < 0.6) return Array.from({ length: n }, () => (rand() < 0.1 ? undefined : value(rand, depth + 1)));
  const o: Record<string, unknown> = {};
  const keys = ['b', 'a', 'é', 'z', 'Z', '\u{1F600}', '\uFB33', '1', '10', '2', ''];
  for (let i = 0; i < n; i++) o[keys[Math.floor(rand() * keys.length)]!] = rand() < 0.1 ? undefined : value(rand, depth + 1);
  return o;
}

describe('canonicalSha256Yielding', () => {
  it('hashes every shape as canonicalSha256 does', async () => {
    const rand = random(42);
    for (let i = 0; i < 500; i++) {
      const v = value(rand, 0);
      expect(await canonicalSha256Yielding(v), JSON.stringify(v)).toBe(canonicalSha256(v));
    }
    const at = new Date('2026-12-01T04:00:00.000Z');
    const withDates = { at, nested: [{ at }, { at: null }], empty: {}, none: [] };
    expect(await canonicalSha256Yielding(withDates)).toBe(canonicalSha256(withDates));
  });

  it('lets the event loop turn while it hashes a checkpoint of 10,000 streams, with the same result', async () => {
    const heads: Record<string, { seq: number; hash: string }> = {};
    for (let i = 0; i < 10_000; i++) heads[`approval:${i.toString(16).padStart(8, '0')}-stream`] = { seq: i * 10, hash: 'f'.repeat(64) };
    const body = { tenantId: 't', firstSignedEventSeq: 1, at: '2026-12-01T04:00:00.000Z', heads, prevHash: null };
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const yielding = await canonicalSha256Yielding(body, 1);
    clearInterval(timer);
    expect(yielding).toBe(canonicalSha256(body));
    expect(ticks).toBeGreaterThan(0);
  });

  it('refuses what canonicalize refuses', async () => {
    await expect(canonicalSha256Yielding({ a: [Number.NaN] })).rejects.toThrow();
    await expect(canonicalSha256Yielding({ a: { b: '\uD800' } })).rejects.toThrow();
  });
});
