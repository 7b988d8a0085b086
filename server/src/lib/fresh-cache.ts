// What an instance remembers of rows other instances may change (viewers, a tenant's policies, a
// tenant's webhook endpoints), with one freshness rule for all of them. A trigger notifies a
// channel when such a row changes; each instance's LISTEN loop drops the entries it names. A
// remembered value is used only after a round trip on the LISTEN connection that began after it
// was asked for (the barrier's sync(), shared by the callers waiting meanwhile): Postgres
// delivers a connection's notifications before answering it, so a change committed before the
// ask has been applied by then. Values loaded while an invalidation ran, or across a replaced
// LISTEN connection (notifications may have been missed in between), are not stored.
//
// Within one HTTP request the first such round trip serves every cache the request asks (the
// viewer at its start, then the tenant's policies and webhook endpoints inside its transaction):
// what committed before the request arrived counts, once. A round trip per ask would queue each
// behind the LISTEN loop's own event reads: three per createApproval, about a third of its time
// at one client.

import { requestScope } from '../log.js';

/** One round trip for the whole of the current HTTP request; a new one outside a request. */
function syncOnceWithinRequest(barrier: NotificationBarrier): Promise<number | null> {
  const proofs = requestScope()?.freshness;
  if (!proofs) return barrier.sync();
  let proof = proofs.get(barrier);
  if (!proof) {
    proof = barrier.sync();
    proofs.set(barrier, proof);
  }
  return proof;
}

/** What the cache needs of the LISTEN loop (events/listener.ts EventListener). */
export interface NotificationBarrier {
  /** The current LISTEN connection's number; null while there is none. */
  readonly generation: number | null;
  /** Resolves once a round trip begun now has come back (the generation then), null if none could. */
  sync(): Promise<number | null>;
}

interface Entry<V> {
  value: V;
  until: number;
  generation: number;
}

/** Taken before a load: the load's result is stored only if nothing was invalidated meanwhile. */
export interface LoadTicket {
  readonly generation: number;
  readonly epoch: number;
}

export class FreshCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Bumped by every invalidation: a load that overlapped one is not stored. */
  private epoch = 0;

  /** `barrier` returns null while nothing may be remembered (no LISTEN loop): every ask loads. */
  constructor(
    private readonly barrier: () => NotificationBarrier | null,
    private readonly opts: { maxEntries: number; ttlMs?: number },
  ) {}

  /** The remembered values of `keys` that are still valid, after one round trip (none when nothing is remembered). */
  async fresh(keys: readonly string[]): Promise<Map<string, V>> {
    const out = new Map<string, V>();
    const barrier = this.barrier();
    if (!barrier) return out;
    const now = Date.now();
    const hits = keys.flatMap((key) => {
      const entry = this.entries.get(key);
      return entry && entry.until > now ? [[key, entry] as const] : [];
    });
    if (!hits.length) return out;
    const generation = await syncOnceWithinRequest(barrier);
    for (const [key, entry] of hits) {
      if (generation !== null && entry.generation === generation && this.entries.get(key) === entry) out.set(key, entry.value);
    }
    return out;
  }

  /** Before loading what `fresh` did not have; null when the result may not be remembered. */
  ticket(): LoadTicket | null {
    const generation = this.barrier()?.generation ?? null;
    return generation === null ? null : { generation, epoch: this.epoch };
  }

  /** Remembers a loaded value unless an invalidation or a new LISTEN connection came since its ticket; `endsAt` caps its life (epoch ms). */
  store(ticket: LoadTicket | null, key: string, value: V, endsAt?: number): void {
    if (!ticket || ticket.epoch !== this.epoch || ticket.generation !== this.barrier()?.generation) return;
    const until = Math.min(Date.now() + (this.opts.ttlMs ?? Number.POSITIVE_INFINITY), endsAt ?? Number.POSITIVE_INFINITY);
    this.entries.delete(key);
    this.entries.set(key, { value, until, generation: ticket.generation });
    // Oldest first out (Map keeps insertion order).
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.opts.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  /** Drops one key found to be gone by a load (no invalidation: loads running meanwhile may still store). */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets one key (a notification named it, or it is known to be gone). */
  invalidate(key: string): void {
    this.epoch++;
    this.entries.delete(key);
  }

  /** Forgets every entry whose value matches (a notification that names something inside the values). */
  invalidateWhere(matches: (value: V) => boolean): void {
    this.epoch++;
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
