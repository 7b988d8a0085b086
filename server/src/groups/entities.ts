import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';

// Reviewer groups, managed by admins: a policy's quorum can count only members of named groups,
// and an escalation can assign a request to a group (policies/snapshot.ts).

export const ReviewerGroup = defineEntity({
  name: 'ReviewerGroup',
  tableName: 'reviewer_group',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    name: p.text(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['tenantId', 'name'] }],
});

export const ReviewerGroupMember = defineEntity({
  name: 'ReviewerGroupMember',
  tableName: 'reviewer_group_member',
  properties: {
    id: p.uuid().primary(),
    groupId: manyToOneId(ReviewerGroup, 'group_id'),
    userId: manyToOneId(User, 'user_id'),
    addedAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['groupId', 'userId'] }],
  indexes: [{ name: 'reviewer_group_member_user', properties: ['userId'] }],
});

export const GROUP_ENTITIES = [ReviewerGroup, ReviewerGroupMember];
export type ReviewerGroupRow = InferEntity<typeof ReviewerGroup>;
export type ReviewerGroupMemberRow = InferEntity<typeof ReviewerGroupMember>;
