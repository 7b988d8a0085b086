import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { FreshCache, type NotificationBarrier } from '../lib/fresh-cache.js';

// Each tenant's enabled webhook endpoints, remembered per instance, so an audit append (the
// appended-events hook, queue.ts) does not look them up: on the ingest path that was one
// statement per request, for tenants that mostly have no endpoint at all. The same scheme as the
// viewer cache: a trigger on webhook_endpoint (Migration20261203006001_webhook_endpoint_changes)
// notifies WEBHOOKS_CHANNEL with the tenant in the changing transaction; each instance's LISTEN
// loop drops that tenant's entry, and a remembered list is used only as lib/fresh-cache.ts allows,
// so an endpoint committed on any instance before the append is seen by it. Entries also end
// after a short TTL.
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

export const ENDPOINT_CACHE_TTL_MS = 60_000;
const MAX_TENANTS = 10_000;

const LOAD = 'select id, tenant_id, event_types from webhook_endpoint where enabled and tenant_id in (?) order by created_at, id';

export class WebhookEndpointCache {
  private readonly cache: FreshCache<EndpointTarget[]>;

  /** `barrier` null: nothing is remembered (every append reads the endpoints). */
  constructor(barrier: () => NotificationBarrier | null) {
    this.cache = new FreshCache(barrier, { maxEntries: MAX_TENANTS, ttlMs: ENDPOINT_CACHE_TTL_MS });
  }

  /** The enabled endpoints of these tenants, in creation order; read in `tem` for the tenants not remembered. */
  async endpointsOf(tem: EntityManager, tenants: readonly string[]): Promise<EndpointTarget[]> {
    const remembered = await this.cache.fresh(tenants);
    const missing = tenants.filter((t) => !remembered.has(t));
    const out = [...remembered.values()].flat();
    if (!missing.length) return out;
    const ticket = this.cache.ticket();
    const loaded = await sql<EndpointTarget>(tem, LOAD, [missing]);
    for (const t of missing) {
      this.cache.store(
        ticket,
        t,
        loaded.filter((e) => e.tenant_id === t),
      );
    }
    return [...out, ...loaded];
  }

  /** A tenant's endpoints changed (the WEBHOOKS_CHANNEL payload is its id). */
  invalidateTenant(tenantId: string): void {
    this.cache.invalidate(tenantId);
  }

  get size(): number {
    return this.cache.size;
  }
}
