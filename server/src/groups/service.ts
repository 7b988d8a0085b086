import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream, type AuditEventInput, type AuditEventType, type AuditPayload } from '../audit/module.js';
import { requireAdmin, type Access } from '../access.js';
import { User } from '../auth/entities.js';
import { sql } from '../db/sql.js';
import { badInput, notFound } from '../errors.js';
import { isUuid } from '../lib/untrusted.js';
import { codePointLength, GROUP_LIMITS } from '../limits.js';
import { ReviewerGroup, ReviewerGroupMember, type ReviewerGroupRow } from './entities.js';

// Reviewer groups, managed by admins (docs/POLICIES.md "Groups"): a policy's quorum can count
// only members of named groups, and an escalation can assign a request to a group. Every change
// is an audit event in the tenant's stream. A group a policy's current version names cannot be
// deleted (change the policy first); requests keep the group ids frozen in their snapshot.

function checkedGroupName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badInput('a group needs a name');
  if (codePointLength(name, GROUP_LIMITS.nameMax) > GROUP_LIMITS.nameMax) throw badInput(`name is longer than ${GROUP_LIMITS.nameMax} characters`);
  return name;
}

async function audit<T extends AuditEventType>(tem: EntityManager, access: Access, type: T, data: AuditPayload<T>) {
  const tenantId = access.viewer.tenantId;
  const event: AuditEventInput<T> = { tenantId, stream: stream.tenant(tenantId), type, actor: { type: 'user', id: access.viewer.userId }, data };
  await appendEvents(tem, [event]);
}

export function listGroups(em: EntityManager, access: Access): Promise<ReviewerGroupRow[]> {
  requireAdmin(access, 'manages reviewer groups');
  return em.find(ReviewerGroup, { tenantId: access.viewer.tenantId }, { orderBy: { name: 'asc', id: 'asc' } });
}

export async function findGroup(em: EntityManager, access: Access, id: string): Promise<ReviewerGroupRow> {
  requireAdmin(access, 'manages reviewer groups');
  const group = isUuid(id) ? await em.findOne(ReviewerGroup, { id: id.toLowerCase(), tenantId: access.viewer.tenantId }, { refresh: true }) : null;
  if (!group) throw notFound('reviewer group');
  return group;
}

/** The members' user ids of groups, in the order they were added. */
export async function membersOf(em: EntityManager, groupIds: readonly string[]): Promise<Map<string, string[]>> {
  const rows = groupIds.length ? await em.find(ReviewerGroupMember, { groupId: { $in: [...groupIds] } }, { orderBy: { addedAt: 'asc', id: 'asc' } }) : [];
  const out = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  for (const r of rows) out.get(r.groupId)?.push(r.userId);
  return out;
}

async function nameTaken(em: EntityManager, tenantId: string, name: string, exceptId?: string) {
  const same = await em.findOne(ReviewerGroup, { tenantId, name });
  return !!same && same.id !== exceptId;
}

export async function createGroup(em: EntityManager, access: Access, input: { name: string; memberIds?: readonly string[] | null }) {
  requireAdmin(access, 'manages reviewer groups');
  const tenantId = access.viewer.tenantId;
  const name = checkedGroupName(input.name);
  const memberIds = await checkedMembers(em, tenantId, input.memberIds ?? []);
  return em.transactional(async (tem) => {
    if ((await tem.count(ReviewerGroup, { tenantId })) >= GROUP_LIMITS.groupsPerTenantMax) {
      throw badInput(`a tenant has at most ${GROUP_LIMITS.groupsPerTenantMax} reviewer groups`);
    }
    if (await nameTaken(tem, tenantId, name)) throw badInput(`a group named ${JSON.stringify(name)} exists`);
    const group = tem.create(ReviewerGroup, { id: randomUUID(), tenantId, name });
    for (const userId of memberIds) tem.create(ReviewerGroupMember, { id: randomUUID(), groupId: group.id, userId });
    await tem.flush();
    await audit(tem, access, 'group.created', { groupId: group.id, name, memberIds });
    return group;
  });
}

export async function renameGroup(em: EntityManager, access: Access, id: string, rawName: string) {
  const group = await findGroup(em, access, id);
  const name = checkedGroupName(rawName);
  return em.transactional(async (tem) => {
    const g = await tem.findOneOrFail(ReviewerGroup, { id: group.id }, { refresh: true });
    if (g.name === name) return g;
    if (await nameTaken(tem, g.tenantId, name, g.id)) throw badInput(`a group named ${JSON.stringify(name)} exists`);
    const from = g.name;
    g.name = name;
    await tem.flush();
    await audit(tem, access, 'group.renamed', { groupId: g.id, from, name });
    return g;
  });
}

/** The policies whose current version names the group (quorum or escalation). */
async function policiesNaming(em: EntityManager, tenantId: string, groupId: string): Promise<string[]> {
  const rows = await sql<{ name: string }>(
    em,
    `select p.name from policy p join policy_version v on v.policy_id = p.id and v.version = p.current_version
      where p.tenant_id = ? and (jsonb_exists(v.rules->'quorum'->'fromGroupIds', ?) or v.rules->'escalation'->>'toGroupId' = ?)
      order by p.position`,
    [tenantId, groupId, groupId],
  );
  return rows.map((r) => r.name);
}

export async function deleteGroup(em: EntityManager, access: Access, id: string): Promise<void> {
  const group = await findGroup(em, access, id);
  await em.transactional(async (tem) => {
    const users = await policiesNaming(tem, group.tenantId, group.id);
    if (users.length) throw badInput(`the group is named by the policies ${users.map((n) => JSON.stringify(n)).join(', ')}: change them first`);
    await tem.nativeDelete(ReviewerGroupMember, { groupId: group.id });
    await tem.nativeDelete(ReviewerGroup, { id: group.id });
    await audit(tem, access, 'group.deleted', { groupId: group.id, name: group.name });
  });
}

async function checkedMembers(em: EntityManager, tenantId: string, ids: readonly string[]): Promise<string[]> {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  if (unique.length > GROUP_LIMITS.membersPerGroupMax) throw badInput(`a group has at most ${GROUP_LIMITS.membersPerGroupMax} members`);
  if (unique.some((i) => !isUuid(i))) throw badInput('a member id is not a user of this tenant');
  const found = unique.length ? await em.find(User, { id: { $in: unique }, tenantId }, { fields: ['id'] }) : [];
  if (found.length !== unique.length) throw badInput('a member id is not a user of this tenant');
  return unique;
}

export async function addGroupMember(em: EntityManager, access: Access, groupId: string, userId: string) {
  const group = await findGroup(em, access, groupId);
  const [user] = await checkedMembers(em, group.tenantId, [userId]);
  return em.transactional(async (tem) => {
    const count = await tem.count(ReviewerGroupMember, { groupId: group.id });
    if (await tem.count(ReviewerGroupMember, { groupId: group.id, userId: user! })) return group;
    if (count >= GROUP_LIMITS.membersPerGroupMax) throw badInput(`a group has at most ${GROUP_LIMITS.membersPerGroupMax} members`);
    tem.create(ReviewerGroupMember, { id: randomUUID(), groupId: group.id, userId: user! });
    await tem.flush();
    await audit(tem, access, 'group.member_added', { groupId: group.id, userId: user });
    return group;
  });
}

export async function removeGroupMember(em: EntityManager, access: Access, groupId: string, userId: string) {
  const group = await findGroup(em, access, groupId);
  if (!isUuid(userId)) throw badInput('the person is not a member of this group');
  return em.transactional(async (tem) => {
    const removed = await tem.nativeDelete(ReviewerGroupMember, { groupId: group.id, userId: userId.toLowerCase() });
    if (!removed) throw badInput('the person is not a member of this group');
    await audit(tem, access, 'group.member_removed', { groupId: group.id, userId: userId.toLowerCase() });
    return group;
  });
}
