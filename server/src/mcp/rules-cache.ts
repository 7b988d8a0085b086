import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { FreshCache, type NotificationBarrier } from '../lib/fresh-cache.js';
import type { McpCallRule } from './call-rules.js';

// Each MCP server's call rules, remembered per instance, so a passed tools/call sends no
// statement for them (it was one pool statement per call, the only one). The scheme of the viewer
// and webhook caches (lib/fresh-cache.ts): setMcpServerRules, the one writer of the rules
// (upstreams.ts), and removeMcpServer notify MCP_UPSTREAMS_CHANNEL with the server's id in its transaction; every
// instance's LISTEN loop drops that entry, and a remembered list is used only after a round trip
// on the LISTEN connection begun within the request (the one the viewer's check already made), so
// rules committed on any instance before the call arrived are the rules it is judged by. Entries
// also end after a TTL, for a change no notification told of (SQL by hand).

export const MCP_UPSTREAMS_CHANNEL = 'taskbay_mcp_upstreams';
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export class UpstreamRulesCache {
  private readonly cache: FreshCache<McpCallRule[]>;

  /** `barrier` null: nothing is remembered (every call reads its rules). */
  constructor(barrier: () => NotificationBarrier | null) {
    this.cache = new FreshCache(barrier, { maxEntries: MAX_ENTRIES, ttlMs: TTL_MS });
  }

  /** The server's rules as they are now; null when the server is no longer registered. `em` is made only for a read. */
  async rulesOf(em: () => EntityManager, upstreamId: string): Promise<McpCallRule[] | null> {
    const hit = (await this.cache.fresh([upstreamId])).get(upstreamId);
    if (hit) return hit;
    const ticket = this.cache.ticket();
    const [row] = await sql<{ rules: McpCallRule[] }>(em(), 'select rules from mcp_upstream where id = ? and removed_at is null', [upstreamId]);
    if (!row) {
      this.cache.delete(upstreamId);
      return null;
    }
    this.cache.store(ticket, upstreamId, row.rules);
    return row.rules;
  }

  invalidate(upstreamId: string): void {
    this.cache.invalidate(upstreamId);
  }
}

const caches = new WeakMap<MikroORM, UpstreamRulesCache>();

/** Made when the module starts on this ORM's instance (module.ts); its LISTEN channel invalidates it. */
export function startRulesCache(orm: MikroORM, barrier: () => NotificationBarrier | null): UpstreamRulesCache {
  const cache = new UpstreamRulesCache(barrier);
  caches.set(orm, cache);
  return cache;
}

/** This instance's cache; one that remembers nothing if the module was not started on it. */
export function rulesCacheOf(orm: MikroORM): UpstreamRulesCache {
  let cache = caches.get(orm);
  if (!cache) {
    cache = new UpstreamRulesCache(() => null);
    caches.set(orm, cache);
  }
  return cache;
}

/** Tells every instance (at commit) that this server's rules changed; call it in the changing transaction. */
export async function notifyRulesChanged(tem: EntityManager, upstreamId: string): Promise<void> {
  await sql(tem, 'select pg_notify(?, ?)', [MCP_UPSTREAMS_CHANNEL, upstreamId]);
}
