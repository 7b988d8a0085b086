import { describe, expect, it } from 'vitest';
import { FreshCache, type NotificationBarrier } from '../../src/lib/fresh-cache.js';
import { inRequestScope } from '../../src/log.js';

// The one freshness rule of the per-instance caches (viewers, policies, webhook endpoints).

function fakeBarrier() {
  const b = {
    generation: 1 as number | null,
    syncs: 0,
    /** What the LISTEN loop applies before the round trip returns (a notification arriving first). */
    beforeAnswer: null as (() => void) | null,
    async sync() {
      b.syncs++;
      b.beforeAnswer?.();
      return b.generation;
    },
  };
  return b satisfies NotificationBarrier;
}

describe('FreshCache', () => {
  it('asks the LISTEN connection nothing while nothing is remembered, and one round trip for several keys', async () => {
    const b = fakeBarrier();
    const c = new FreshCache<string>(() => b, { maxEntries: 10 });
    expect((await c.fresh(['a', 'b'])).size).toBe(0);
    expect(b.syncs).toBe(0);
    const t = c.ticket();
    c.store(t, 'a', 'A');
    c.store(t, 'b', 'B');
    expect([...(await c.fresh(['a', 'b', 'x'])).entries()]).toEqual([
      ['a', 'A'],
      ['b', 'B'],
    ]);
    expect(b.syncs).toBe(1);
  });

  it('does not use an entry a notification dropped before the round trip came back', async () => {
    const b = fakeBarrier();
    const c = new FreshCache<string>(() => b, { maxEntries: 10 });
    c.store(c.ticket(), 'a', 'A');
    b.beforeAnswer = () => c.invalidate('a');
    expect((await c.fresh(['a'])).has('a')).toBe(false);
  });

  it('does not store a load that overlapped an invalidation, nor one across a replaced LISTEN connection', async () => {
    const b = fakeBarrier();
    const c = new FreshCache<string>(() => b, { maxEntries: 10 });
    const before = c.ticket();
    c.invalidate('other');
    c.store(before, 'a', 'A');
    expect(c.has('a')).toBe(false);
    const t = c.ticket();
    b.generation = 2;
    c.store(t, 'a', 'A');
    expect(c.has('a')).toBe(false);
    // An entry stored under connection 2 is not used once connection 3 replaced it.
    c.store(c.ticket(), 'a', 'A');
    b.generation = 3;
    expect((await c.fresh(['a'])).has('a')).toBe(false);
  });

  it('remembers nothing without a LISTEN loop; entries end at their TTL or their own end; oldest out first', async () => {
    const none = new FreshCache<string>(() => null, { maxEntries: 10 });
    none.store(none.ticket(), 'a', 'A');
    expect(none.size).toBe(0);
    const b = fakeBarrier();
    const c = new FreshCache<string>(() => b, { maxEntries: 2, ttlMs: 60_000 });
    c.store(c.ticket(), 'ended', 'E', Date.now() - 1);
    expect((await c.fresh(['ended'])).has('ended')).toBe(false);
    c.store(c.ticket(), 'a', 'A');
    c.store(c.ticket(), 'b', 'B');
    c.store(c.ticket(), 'c', 'C');
    expect([c.has('a'), c.has('b'), c.has('c')]).toEqual([false, true, true]);
    c.invalidateWhere((v) => v === 'B');
    expect(c.has('b')).toBe(false);
  });

  it('within one HTTP request, one round trip serves every cache; a subscription scope and no scope ask each time', async () => {
    const b = fakeBarrier();
    const viewers = new FreshCache<string>(() => b, { maxEntries: 10 });
    const policies = new FreshCache<string>(() => b, { maxEntries: 10 });
    viewers.store(viewers.ticket(), 'token', 'ada');
    policies.store(policies.ticket(), 'tenant', 'rules');
    const askBoth = async () => [(await viewers.fresh(['token'])).get('token'), (await policies.fresh(['tenant'])).get('tenant')];
    expect(await inRequestScope({ reqId: 'r1', freshness: new Map() }, askBoth)).toEqual(['ada', 'rules']);
    expect(b.syncs).toBe(1);
    // A request's proof is its own: the next request makes a new round trip.
    await inRequestScope({ reqId: 'r2', freshness: new Map() }, askBoth);
    expect(b.syncs).toBe(2);
    await inRequestScope({ reqId: 'subscription' }, askBoth);
    expect(b.syncs).toBe(4);
    await askBoth();
    expect(b.syncs).toBe(6);
  });
});
