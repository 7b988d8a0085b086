import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { FreshCache, type NotificationBarrier } from '../lib/fresh-cache.js';
import { compileCondition, ConditionError, readsAgent, type CompiledCondition } from './condition.js';
import type { PolicyRules } from './rules.js';
import type { PolicySnapshot } from './snapshot.js';

// A tenant's enabled policies, compiled, remembered per instance: opening a request (the ingest
// path, server/test/integration/approvals/ingest-path.test.ts) spends no statement on choosing its policy.
// Any change to a policy row notifies POLICY_CHANNEL with the tenant's id when it commits (trigger
// policy_change, Migration20261203001000_policies); each instance's LISTEN loop drops that
// tenant's entry, and an entry is used only as lib/fresh-cache.ts allows. So a policy change
// committed before a request opens applies to it on every instance.

export const POLICY_CHANNEL = 'taskbay_policies';

export interface LoadedPolicy {
  snapshot: PolicySnapshot;
  /** Undefined: the stored condition no longer compiles (then it fails closed, like an evaluation error). */
  condition: CompiledCondition | undefined;
  compileError: string | null;
  readsAgent: boolean;
}

export const POLICY_CACHE_MAX_TENANTS = 1000;

export class PolicyCache {
  private readonly cache: FreshCache<LoadedPolicy[]>;

  /** `barrier` null: nothing is remembered (before the LISTEN loop runs). */
  constructor(barrier: () => NotificationBarrier | null) {
    this.cache = new FreshCache(barrier, { maxEntries: POLICY_CACHE_MAX_TENANTS });
  }

  async resolve(tenantId: string, load: () => Promise<LoadedPolicy[]>): Promise<LoadedPolicy[]> {
    const hit = (await this.cache.fresh([tenantId])).get(tenantId);
    if (hit) return hit;
    const ticket = this.cache.ticket();
    const policies = await load();
    this.cache.store(ticket, tenantId, policies);
    return policies;
  }

  /** A policy of the tenant changed (the POLICY_CHANNEL payload is the tenant's id). */
  invalidateTenant(tenantId: string): void {
    this.cache.invalidate(tenantId);
  }

  has(tenantId: string): boolean {
    return this.cache.has(tenantId);
  }
}

/** The tenant's enabled policies in order, each at its current version: one statement. */
export async function loadPolicies(em: EntityManager, tenantId: string): Promise<LoadedPolicy[]> {
  const rows = await sql<{ id: string; name: string; version: number; condition: string; rules: PolicyRules }>(
    em,
    `select p.id, p.name, v.version, v.condition, v.rules
       from policy p join policy_version v on v.policy_id = p.id and v.version = p.current_version
      where p.tenant_id = ? and p.enabled
      order by p.position, p.created_at, p.id`,
    [tenantId],
  );
  return rows.map((r) => {
    let condition: CompiledCondition | undefined;
    let compileError: string | null = null;
    try {
      condition = compileCondition(r.condition);
    } catch (e) {
      compileError = e instanceof ConditionError ? e.message : String(e);
    }
    const rules = typeof r.rules === 'string' ? (JSON.parse(r.rules) as PolicyRules) : r.rules;
    return {
      snapshot: { policyId: r.id, name: r.name, version: r.version, ...rules },
      condition,
      compileError,
      readsAgent: readsAgent(r.condition),
    };
  });
}

const EXTENSION = 'taskbay.policyCache';

/** Makes `cache` the one choosePolicy uses on this ORM's entity managers (startInstance). */
export function registerPolicyCache(orm: { config: { registerExtension(name: string, cb: () => unknown): void } }, cache: PolicyCache) {
  orm.config.registerExtension(EXTENSION, () => cache);
}

/** The tenant's policies, through the instance's cache when one is registered. */
export function tenantPolicies(em: EntityManager, tenantId: string): Promise<LoadedPolicy[]> {
  const cache = em.config.getExtension<PolicyCache>(EXTENSION);
  const load = () => loadPolicies(em, tenantId);
  return cache ? cache.resolve(tenantId, load) : load();
}
