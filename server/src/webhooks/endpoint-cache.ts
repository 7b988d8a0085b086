import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';

// Each tenant's enabled webhook endpoints, remembered per instance, so an audit append (the
// appended-events hook, queue.ts) does not look them up: on the ingest path that was one
// statement per request, for tenants that mostly have no endpoint at all. The same scheme as the
// viewer cache (auth/viewer-cache.ts): a trigger on webhook_endpoint
// (Migration20261203006001_webhook_endpoint_changes) notifies WEBHOOKS_CHANNEL with the tenant in
// the changing transaction; each instance's LISTEN loop drops that tenant's entry. A remembered
// list is used only after a round trip on the LISTEN connection that began after the append
// asked (EventListener.sync, shared by the appends waiting meanwhile): Postgres delivers a
// connection's notifications before answering it, so an endpoint committed on any instance
// before the append is seen by it. Without a listening connection, or after it was replaced,
// the list is read again. Entries also end after a short TTL.
//
// The list is read in the appending transaction. The transactions that change endpoints
// (service.ts) append only events no webhook tells, so they never read (or remember) their own
// uncommitted change.

export const WEBHOOKS_CHANNEL = 'taskbay_webhooks';

export interface EndpointTarget {
  id: string;
  tenant_id: string;
  event_types: string[];
}

/** What the cache needs of the LISTEN loop (events/listener.ts EventListener). */
export interface WebhookNotificationBarrier {
  readonly generation: number | null;
  sync(): Promise<number | null>;
}

interface Entry {
  endpoints: EndpointTarget[];
  until: number;
  generation: number;
}

export const ENDPOINT_CACHE_TTL_MS = 60_000;
const MAX_TENANTS = 10_000;

const LOAD = 'select id, tenant_id, event_types from webhook_endpoint where enabled and tenant_id in (?) order by created_at, id';

export class WebhookEndpointCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a load that overlapped one is not stored. */
  private epoch = 0;

  /** `barrier` null: nothing is remembered (every append reads the endpoints). */
  constructor(private readonly barrier: () => WebhookNotificationBarrier | null) {}

  /** The enabled endpoints of these tenants, in creation order; read in `tem` for the tenants not remembered. */
  async endpointsOf(tem: EntityManager, tenants: readonly string[]): Promise<EndpointTarget[]> {
    const barrier = this.barrier();
    const out: EndpointTarget[] = [];
    let missing = [...tenants];
    if (barrier) {
      const hits = tenants.map((t) => [t, this.entries.get(t)] as const).filter(([, e]) => e && e.until > Date.now());
      if (hits.length) {
        const generation = await barrier.sync();
        // The barrier has applied every endpoint change committed before this append asked.
        const valid = hits.filter(([t, e]) => generation !== null && e!.generation === generation && this.entries.get(t) === e);
        for (const [, e] of valid) out.push(...e!.endpoints);
        const served = new Set(valid.map(([t]) => t));
        missing = missing.filter((t) => !served.has(t));
      }
    }
    if (!missing.length) return out;
    const generation = barrier?.generation ?? null;
    const epoch = this.epoch;
    const loaded = await sql<EndpointTarget>(tem, LOAD, [missing]);
    if (generation !== null && generation === barrier?.generation && epoch === this.epoch) {
      for (const t of missing)
        this.store(
          t,
          loaded.filter((e) => e.tenant_id === t),
          generation,
        );
    }
    return [...out, ...loaded];
  }

  /** A tenant's endpoints changed (the WEBHOOKS_CHANNEL payload is its id). */
  invalidateTenant(tenantId: string): void {
    this.epoch++;
    this.entries.delete(tenantId);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(tenantId: string, endpoints: EndpointTarget[], generation: number) {
    this.entries.delete(tenantId);
    this.entries.set(tenantId, { endpoints, until: Date.now() + ENDPOINT_CACHE_TTL_MS, generation });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= MAX_TENANTS) break;
      this.entries.delete(oldest);
    }
  }
}
