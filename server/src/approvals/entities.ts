import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { ActorType } from '../audit/entities.js';
import type { ApprovalAction } from './digest.js';

export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'CHANGES_REQUESTED' | 'SUPERSEDED' | 'EXPIRED';
export type ApprovalSource = 'AGENT' | 'USER' | 'COMMAND';
export type Risk = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';

export const ApprovalRequest = defineEntity({
  name: 'ApprovalRequest',
  tableName: 'approval',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    key: p.text().nullable(),
    source: p.text().$type<ApprovalSource>(),
    status: p.text().$type<ApprovalStatus>(),
    title: p.text(),
    summary: p.text().nullable(),
    risk: p.text().$type<Risk>(),
    requesterId: p.uuid().nullable(),
    assigneeId: p.uuid().nullable(),
    agentId: p.uuid().nullable(),
    taskId: p.uuid().nullable(),
    /** Copied from the task: a grant limited to a skill reaches only requests of that skill. */
    skillId: p.text().nullable(),
    sourceMessageId: p.text().nullable(),
    stepSeq: p.integer().nullable(),
    revision: p.integer(),
    digest: p.text(),
    action: p.json<ApprovalAction>(),
    supersededById: p.uuid().nullable(),
    expiresAt: p.datetime().nullable(),
    closedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const Revision = defineEntity({
  name: 'Revision',
  tableName: 'approval_revision',
  properties: {
    id: p.uuid().primary(),
    approvalId: p.uuid(),
    number: p.integer(),
    action: p.json<ApprovalAction>(),
    digest: p.text(),
    createdByType: p.text().$type<ActorType>(),
    createdById: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type ApprovalRow = InferEntity<typeof ApprovalRequest>;
export type RevisionRow = InferEntity<typeof Revision>;
