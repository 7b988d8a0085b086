import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Agent } from '../agents/entities.js';
import type { ActorType } from '../audit/entities.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';
import { ReviewerGroup } from '../groups/entities.js';
import { Task } from '../tasks/entities.js';
import type { PolicySnapshot } from '../policies/entities.js';
import type { ApprovalAction } from './digest.js';

export const APPROVAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export const APPROVAL_SOURCES = ['AGENT', 'USER', 'COMMAND'] as const;
export type ApprovalSource = (typeof APPROVAL_SOURCES)[number];
export const RISKS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
export type Risk = (typeof RISKS)[number];

/** The key prefix of requests opened for AG-UI interrupts (agui/interrupts.ts): those of one run are live together. */
export const AGUI_KEY_PREFIX = 'agui:';

export const ApprovalRequest = defineEntity({
  name: 'ApprovalRequest',
  tableName: 'approval',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    key: p.text().unique().nullable(),
    source: p.enum([...APPROVAL_SOURCES]),
    status: p.enum([...APPROVAL_STATUSES]),
    title: p.text(),
    summary: p.text().nullable(),
    risk: p.enum([...RISKS]),
    requesterId: manyToOneId(User, 'requester_id').nullable(),
    assigneeId: manyToOneId(User, 'assignee_id').nullable(),
    /** The reviewer group the request is assigned to (by escalation): only its members, or admins, decide it. */
    assigneeGroupId: manyToOneId(ReviewerGroup, 'assignee_group_id').nullable(),
    agentId: manyToOneId(Agent, 'agent_id').nullable(),
    taskId: manyToOneId(Task, 'task_id').nullable(),
    /** Copied from the task: a grant limited to a skill reaches only requests of that skill. */
    skillId: p.text().nullable(),
    sourceMessageId: p.text().nullable(),
    stepSeq: p.integer().nullable(),
    revision: p.integer(),
    digest: p.text(),
    action: p.json<ApprovalAction>(),
    /**
     * The integration's own call or thread id (createApproval, the command-approvals REST body;
     * limits.ts EXTERNAL_ID_LIMITS): not unique, outside the digest, never edited, signed with the
     * approval (approval-signing/signed-approval.ts).
     */
    externalId: p.text().nullable(),
    /** false: the requester offers no edit-then-approve (edit-rules.ts editOffered); a policy does not override it. */
    editable: p.boolean().default(true),
    /** The policy this request opened under, frozen (policies/snapshot.ts); edits to the policy never reach it. */
    policy: p.json<PolicySnapshot>(),
    /** The request that replaced this one (same table; declared lazily, it refers to its own entity). */
    supersededById: () => manyToOneId(ApprovalRequest, 'superseded_by_id').nullable(),
    expiresAt: p.datetime().nullable(),
    /** When the request escalates: derived by the database from the policy (escalation migration), null when it never does. */
    escalateAt: p.datetime().nullable(),
    /** When it escalated (once; the database refuses a second time). */
    escalatedAt: p.datetime().nullable(),
    closedAt: p.datetime().nullable(),
    /**
     * 1 when opened, one more with every change of the row: the database's (a trigger, approval
     * version migration), never written here. An entity this process updated keeps the version it
     * was read with.
     */
    version: p.integer().default(1),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date())
      .defaultRaw('now()'),
  },
  // The console's list orders (created_at desc, id desc) under each filter it offers (inbox indexes migration).
  indexes: [
    { name: 'approval_tenant_status', expression: 'create index approval_tenant_status on approval (tenant_id, status, created_at desc, id desc)' },
    { name: 'approval_tenant_created', expression: 'create index approval_tenant_created on approval (tenant_id, created_at desc, id desc)' },
    { name: 'approval_tenant_agent', expression: 'create index approval_tenant_agent on approval (tenant_id, agent_id, created_at desc, id desc)' },
    {
      name: 'approval_assignee',
      expression: 'create index approval_assignee on approval (assignee_id, created_at desc, id desc) where assignee_id is not null',
    },
    { name: 'approval_task', expression: 'create index approval_task on approval (task_id, created_at desc, id desc) where task_id is not null' },
    {
      name: 'approval_superseded_by',
      expression: 'create index approval_superseded_by on approval (superseded_by_id) where superseded_by_id is not null',
    },
    // The sweepers' nearest deadline and due requests (approvals/expiry.ts).
    { name: 'approval_pending_expiry', expression: `create index approval_pending_expiry on approval (expires_at) where status = 'PENDING'` },
    // The escalation sweepers' nearest due time and due requests (escalation/sweeper.ts).
    {
      name: 'approval_pending_escalation',
      expression: `create index approval_pending_escalation on approval (escalate_at) where status = 'PENDING' and escalated_at is null and escalate_at is not null`,
    },
    // approvals(externalId:): a requester finding its request again (after a crash, say).
    {
      name: 'approval_tenant_external_id',
      expression: 'create index approval_tenant_external_id on approval (tenant_id, external_id, created_at desc, id desc) where external_id is not null',
    },
    {
      name: 'approval_assignee_group',
      expression: 'create index approval_assignee_group on approval (assignee_group_id, created_at desc, id desc) where assignee_group_id is not null',
    },
  ],
  uniques: [
    // One live approval per task, except the requests of one AG-UI run's interrupts (key
    // prefix AGUI_KEY_PREFIX), which are live together (docs/AG-UI.md "Several interrupts").
    {
      name: 'approval_one_pending_per_task',
      expression: `create unique index approval_one_pending_per_task on approval (task_id) where status = 'PENDING' and (key is null or key not like 'agui:%')`,
    },
  ],
  checks: [{ property: 'revision', expression: 'revision >= 1' }],
});

export const Revision = defineEntity({
  name: 'Revision',
  tableName: 'approval_revision',
  properties: {
    id: p.uuid().primary(),
    approvalId: manyToOneId(ApprovalRequest, 'approval_id'),
    number: p.integer(),
    action: p.json<ApprovalAction>(),
    digest: p.text(),
    /** Never 'system' (the column's check refuses it). */
    createdByType: p.enum(['agent', 'user', 'service']).$type<ActorType>(),
    createdById: p.text().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['approvalId', 'number'] }],
  checks: [{ property: 'number', expression: 'number >= 1' }],
});

export type ApprovalRow = InferEntity<typeof ApprovalRequest>;
export type RevisionRow = InferEntity<typeof Revision>;
