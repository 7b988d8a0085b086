import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream, type AuditEventInput, type AuditEventType, type AuditPayload } from '../audit/module.js';
import { requireAdmin, type Access } from '../access.js';
import { User } from '../auth/entities.js';
import { badInput, notFound } from '../errors.js';
import { ReviewerGroup } from '../groups/entities.js';
import { sql } from '../db/sql.js';
import { canonicalJson } from '../lib/hashing.js';
import { isUuid } from '../lib/untrusted.js';
import { CONDITION_LIMITS, POLICY_LIMITS } from '../limits.js';
import { compileCondition, ConditionError } from './condition.js';
import { fmt } from './condition-cost.js';
import { Policy, PolicyVersion, type PolicyRow, type PolicyVersionRow } from './entities.js';
import { checkedName, checkedRules, type PolicyRules, type RulesInput } from './rules.js';

// Managing a tenant's approval policies (admins only; docs/POLICIES.md). Every input is checked
// before anything is written: a condition that does not compile, a rule out of range, a group
// or person not of the tenant is BAD_USER_INPUT and changes nothing. Changing the condition or
// the rules writes the next version; renaming, enabling, disabling and reordering do not.
// Every change is an audit event in the tenant's stream, carrying the version it made.

export interface PolicyInput extends RulesInput {
  name?: string | null;
  condition?: string | null;
  enabled?: boolean | null;
}

function checkedCondition(raw: string | null | undefined): string {
  const condition = raw?.trim() ?? '';
  try {
    compileCondition(condition);
  } catch (e) {
    if (e instanceof ConditionError) throw badInput(`condition: ${e.message}`, { field: 'condition' });
    throw e;
  }
  return condition;
}

/** A condition's worst-case work (condition-cost.ts); 0 for one that does not compile (it is never evaluated). */
function worstCase(condition: string): number {
  try {
    return compileCondition(condition)?.cost.work ?? 0;
  } catch {
    return 0;
  }
}

/**
 * All the enabled conditions of a tenant are tried for one request under one budget
 * (policies/choose.ts): together, at worst, they must fit it, or a large request could run out
 * and fail closed. Checked when a condition is saved or a policy enabled.
 */
async function checkTenantConditionCost(tem: EntityManager, tenantId: string, policyId: string | null, condition: string) {
  const others = await sql<{ condition: string }>(
    tem,
    `select v.condition from policy p join policy_version v on v.policy_id = p.id and v.version = p.current_version
      where p.tenant_id = ? and p.enabled and p.id is distinct from ?::uuid`,
    [tenantId, policyId],
  );
  const own = worstCase(condition);
  const total = others.reduce((sum, o) => sum + worstCase(o.condition), own);
  if (total > CONDITION_LIMITS.workMax) {
    throw badInput(
      `condition: this condition could cost up to ${fmt(own)} units of work on a large request, and with the tenant's other enabled conditions ${fmt(total)}; ` +
        `all of them together may spend ${fmt(CONDITION_LIMITS.workMax)} on one request (docs/POLICIES.md "Cost bounds"). Simplify a condition or disable a policy`,
      { field: 'condition' },
    );
  }
}

/** Groups and people the rules name must be the tenant's. */
async function checkReferences(em: EntityManager, tenantId: string, rules: PolicyRules) {
  const groupIds = [...rules.quorum.fromGroupIds, ...(rules.escalation?.toGroupId ? [rules.escalation.toGroupId] : [])];
  if (groupIds.some((id) => !isUuid(id))) throw badInput('a group id is not a reviewer group of this tenant');
  const unique = [...new Set(groupIds)];
  if (unique.length && (await em.count(ReviewerGroup, { id: { $in: unique }, tenantId })) !== unique.length) {
    throw badInput('a group id is not a reviewer group of this tenant');
  }
  const userId = rules.escalation?.toUserId;
  if (userId && (!isUuid(userId) || !(await em.count(User, { id: userId, tenantId })))) {
    throw badInput('escalation.toUserId is not a user of this tenant');
  }
}

const lower = (rules: PolicyRules): PolicyRules => ({
  ...rules,
  quorum: { ...rules.quorum, fromGroupIds: rules.quorum.fromGroupIds.map((g) => g.toLowerCase()) },
  escalation: rules.escalation
    ? { ...rules.escalation, toGroupId: rules.escalation.toGroupId?.toLowerCase() ?? null, toUserId: rules.escalation.toUserId?.toLowerCase() ?? null }
    : null,
});

async function audit<T extends AuditEventType>(tem: EntityManager, access: Access, type: T, data: AuditPayload<T>) {
  const tenantId = access.viewer.tenantId;
  const event: AuditEventInput<T> = { tenantId, stream: stream.tenant(tenantId), type, actor: { type: 'user', id: access.viewer.userId }, data };
  await appendEvents(tem, [event]);
}

export function listPolicies(em: EntityManager, access: Access): Promise<PolicyRow[]> {
  requireAdmin(access, 'manages policies');
  return em.find(Policy, { tenantId: access.viewer.tenantId }, { orderBy: { position: 'asc', createdAt: 'asc', id: 'asc' } });
}

export async function findPolicy(em: EntityManager, access: Access, id: string): Promise<PolicyRow> {
  requireAdmin(access, 'manages policies');
  const policy = isUuid(id) ? await em.findOne(Policy, { id: id.toLowerCase(), tenantId: access.viewer.tenantId }, { refresh: true }) : null;
  if (!policy) throw notFound('policy');
  return policy;
}

export function policyVersions(em: EntityManager, policyId: string): Promise<PolicyVersionRow[]> {
  return em.find(PolicyVersion, { policyId }, { orderBy: { version: 'desc' } });
}

export async function currentVersion(em: EntityManager, policy: PolicyRow): Promise<PolicyVersionRow> {
  return em.findOneOrFail(PolicyVersion, { policyId: policy.id, version: policy.currentVersion });
}

export async function createPolicy(em: EntityManager, access: Access, input: PolicyInput & { name: string }) {
  requireAdmin(access, 'manages policies');
  const tenantId = access.viewer.tenantId;
  const name = checkedName(input.name);
  const condition = checkedCondition(input.condition);
  const rules = lower(checkedRules(input));
  await checkReferences(em, tenantId, rules);
  return em.transactional(async (tem) => {
    const existing = await tem.find(Policy, { tenantId }, { fields: ['name', 'position'] });
    if (existing.length >= POLICY_LIMITS.policiesPerTenantMax) throw badInput(`a tenant has at most ${POLICY_LIMITS.policiesPerTenantMax} policies`);
    if (existing.some((p) => p.name === name)) throw badInput(`a policy named ${JSON.stringify(name)} exists`);
    if (input.enabled ?? true) await checkTenantConditionCost(tem, tenantId, null, condition);
    const position = existing.reduce((max, p) => Math.max(max, p.position + 1), 0);
    const policy = tem.create(Policy, { id: randomUUID(), tenantId, name, position, enabled: input.enabled ?? true, currentVersion: 1 });
    tem.create(PolicyVersion, { id: randomUUID(), policyId: policy.id, version: 1, condition, rules, createdById: access.viewer.userId });
    await tem.flush();
    await audit(tem, access, 'policy.created', { policyId: policy.id, name, version: 1, position, enabled: policy.enabled, condition, rules });
    return policy;
  });
}

/**
 * Changes a policy. A new condition or new rules write the next version (open requests keep
 * theirs); a new name or enabled flag changes the policy row only.
 */
export async function updatePolicy(em: EntityManager, access: Access, id: string, input: PolicyInput) {
  const found = await findPolicy(em, access, id);
  const name = input.name != null ? checkedName(input.name) : null;
  const condition = input.condition != null ? checkedCondition(input.condition) : null;
  return em.transactional(async (tem) => {
    const policy = await tem.findOneOrFail(Policy, { id: found.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const current = await currentVersion(tem, policy);
    const rules = lower(checkedRules(input, current.rules));
    await checkReferences(tem, policy.tenantId, rules);
    const changes: Omit<AuditPayload<'policy.updated'>, 'policyId' | 'name' | 'version'> = {};
    if (name !== null && name !== policy.name) {
      if (await tem.count(Policy, { tenantId: policy.tenantId, name, id: { $ne: policy.id } })) throw badInput(`a policy named ${JSON.stringify(name)} exists`);
      changes.from = policy.name;
      policy.name = name;
    }
    if (input.enabled != null && input.enabled !== policy.enabled) {
      policy.enabled = input.enabled;
      changes.enabled = input.enabled;
    }
    const nextCondition = condition ?? current.condition;
    if (policy.enabled && (nextCondition !== current.condition || changes.enabled === true)) {
      await checkTenantConditionCost(tem, policy.tenantId, policy.id, nextCondition);
    }
    if (nextCondition !== current.condition || canonicalJson(rules) !== canonicalJson(current.rules)) {
      policy.currentVersion += 1;
      tem.create(PolicyVersion, {
        id: randomUUID(),
        policyId: policy.id,
        version: policy.currentVersion,
        condition: nextCondition,
        rules,
        createdById: access.viewer.userId,
      });
      Object.assign(changes, { condition: nextCondition, rules });
    }
    if (!Object.keys(changes).length) return policy;
    policy.updatedAt = new Date();
    await tem.flush();
    await audit(tem, access, 'policy.updated', { policyId: policy.id, name: policy.name, version: policy.currentVersion, ...changes });
    return policy;
  });
}

export async function setPolicyEnabled(em: EntityManager, access: Access, id: string, enabled: boolean) {
  const found = await findPolicy(em, access, id);
  return em.transactional(async (tem) => {
    const policy = await tem.findOneOrFail(Policy, { id: found.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (policy.enabled === enabled) return policy;
    if (enabled) await checkTenantConditionCost(tem, policy.tenantId, policy.id, (await currentVersion(tem, policy)).condition);
    policy.enabled = enabled;
    policy.updatedAt = new Date();
    await tem.flush();
    await audit(tem, access, enabled ? 'policy.enabled' : 'policy.disabled', { policyId: policy.id, name: policy.name, version: policy.currentVersion });
    return policy;
  });
}

/** Puts the tenant's policies in the order given: every policy of the tenant, once. */
export async function reorderPolicies(em: EntityManager, access: Access, ids: readonly string[]) {
  requireAdmin(access, 'manages policies');
  const tenantId = access.viewer.tenantId;
  const wanted = ids.map((i) => i.toLowerCase());
  return em.transactional(async (tem) => {
    const policies = await tem.find(Policy, { tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { id: 'asc' } });
    const byId = new Map(policies.map((p) => [p.id, p]));
    if (new Set(wanted).size !== wanted.length || wanted.length !== policies.length || wanted.some((i) => !byId.has(i))) {
      throw badInput('ids must name every policy of the tenant exactly once');
    }
    wanted.forEach((id, position) => {
      const p = byId.get(id)!;
      if (p.position !== position) {
        p.position = position;
        p.updatedAt = new Date();
      }
    });
    await tem.flush();
    await audit(tem, access, 'policy.reordered', { order: wanted });
    return wanted.map((id) => byId.get(id)!);
  });
}

/** Removes a policy and its versions; requests opened under it keep their snapshot. */
export async function deletePolicy(em: EntityManager, access: Access, id: string): Promise<void> {
  const found = await findPolicy(em, access, id);
  await em.transactional(async (tem) => {
    await tem.nativeDelete(Policy, { id: found.id });
    await audit(tem, access, 'policy.deleted', { policyId: found.id, name: found.name, version: found.currentVersion });
  });
}
