import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../agents/entities.js';
import { tenantPolicies } from './cache.js';
import { ConditionBudget } from './condition-budget.js';
import { conditionContext, conditionErrorMessage, type ConditionContext, type RequestFacts } from './condition.js';
import { DEFAULT_POLICY, type FailClosed, type PolicySnapshot } from './snapshot.js';
import { failClosed } from './strictest.js';

// Chooses the policy of a request as it opens: the first enabled policy of the tenant (by
// position) whose condition matches the request, else the built-in default. Called from the one
// place a PENDING request is written (approvals/service.ts insertPendingApproval), in its
// transaction. Policies come from the instance's cache (policies/cache.ts): no statement while
// cached, except reading the agent's name when a condition mentions `agent` (often already in
// the transaction's identity map). All the conditions tried for one request share one budget
// (condition-budget.ts), so choosing costs at most CONDITION_LIMITS.workMax.
//
// A condition that fails (say int("x"), a spent budget, or a stored condition that no longer
// compiles) fails closed: nobody knows whether its policy was meant to apply, so the request
// could have had that policy or whatever the policies after it choose. The ones after it are
// still tried; the request gets the strictest of all it could have had (policies/strictest.ts),
// and its snapshot and opening event say which and why (docs/POLICIES.md "When a condition fails").

export type { RequestFacts } from './condition.js';

export async function choosePolicy(tem: EntityManager, facts: RequestFacts): Promise<PolicySnapshot> {
  const policies = await tenantPolicies(tem, facts.tenantId);
  if (!policies.length) return DEFAULT_POLICY;
  const budget = new ConditionBudget();
  const failed: FailClosed['failed'] = [];
  const couldApply: PolicySnapshot[] = [];
  let context: ConditionContext | null = null;
  let agentName: string | null = null;
  for (const p of policies) {
    let error: string | null = null;
    let matched = false;
    if (p.condition === null) matched = true;
    else if (p.condition === undefined) error = `it does not compile: ${p.compileError ?? 'unknown error'}`;
    else {
      if (p.readsAgent && agentName === null) {
        agentName = facts.agentId ? ((await tem.findOne(Agent, { id: facts.agentId }))?.name ?? '') : '';
        context = null;
      }
      context ??= conditionContext(facts, agentName ?? '');
      try {
        matched = p.condition(context, budget);
      } catch (e) {
        error = conditionErrorMessage(e);
      }
    }
    if (error !== null) {
      const { policyId, name, version } = p.snapshot;
      failed.push({ policyId: policyId!, name, version, error: error.slice(0, 500) });
      couldApply.push(p.snapshot);
    } else if (matched) {
      return failed.length ? failClosed([...couldApply, p.snapshot], failed) : p.snapshot;
    }
  }
  return failed.length ? failClosed([...couldApply, DEFAULT_POLICY], failed) : DEFAULT_POLICY;
}

/** How a request's opening event records its policy: id, name, version, and when a condition failed, which and why these rules apply. */
export function policyRecord(p: PolicySnapshot): Record<string, unknown> {
  return {
    id: p.policyId,
    name: p.name,
    version: p.version,
    ...(p.conditionError ? { conditionError: p.conditionError } : {}),
    ...(p.failClosed ? { failClosed: p.failClosed } : {}),
  };
}
