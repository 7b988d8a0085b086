import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../agents/entities.js';
import { tenantPolicies } from './cache.js';
import { conditionContext, type ConditionContext, type RequestFacts } from './condition.js';
import { DEFAULT_POLICY, type PolicySnapshot } from './snapshot.js';

// Chooses the policy of a request as it opens: the first enabled policy of the tenant (by
// position) whose condition matches the request, else the built-in default. Called from the one
// place a PENDING request is written (approvals/service.ts insertPendingApproval), in its
// transaction. Policies come from the instance's cache (policies/cache.ts): no statement while
// cached, except reading the agent's name when a condition mentions `agent` (often already in
// the transaction's identity map).
//
// A condition that fails while evaluating (say int("x"), or a stored condition that no longer
// compiles) fails closed: its policy applies, as if it matched, and the snapshot records the
// error (conditionError), which the request's opening event carries. A policy is a restriction,
// so an error must not let a request skip it (docs/POLICIES.md "When a condition fails").

export type { RequestFacts } from './condition.js';

export async function choosePolicy(tem: EntityManager, facts: RequestFacts): Promise<PolicySnapshot> {
  const policies = await tenantPolicies(tem, facts.tenantId);
  if (!policies.length) return DEFAULT_POLICY;
  let context: ConditionContext | null = null;
  let agentName: string | null = null;
  for (const p of policies) {
    if (p.condition === null) return p.snapshot;
    if (p.condition === undefined) return { ...p.snapshot, conditionError: p.compileError ?? 'the condition does not compile' };
    if (p.readsAgent && agentName === null) {
      agentName = facts.agentId ? ((await tem.findOne(Agent, { id: facts.agentId }))?.name ?? '') : '';
      context = null;
    }
    context ??= conditionContext(facts, agentName ?? '');
    try {
      if (p.condition(context)) return p.snapshot;
    } catch (e) {
      return { ...p.snapshot, conditionError: String((e as Error)?.message ?? e).slice(0, 500) };
    }
  }
  return DEFAULT_POLICY;
}

/** How a request's opening event records its policy: id, name, version, and a condition error if one made it apply. */
export function policyRecord(p: PolicySnapshot): Record<string, unknown> {
  return { id: p.policyId, name: p.name, version: p.version, ...(p.conditionError ? { conditionError: p.conditionError } : {}) };
}
