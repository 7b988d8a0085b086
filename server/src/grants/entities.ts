import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { CommandApprovalStatus, GrantStatus, SealedPayload } from './rules.js';

// Seed 002 beside the approval row (same id): the sealed payload, its fingerprint, the seed's
// lowercase approval status, and the single-use grant with its UPPERCASE status.

export const CommandApproval = defineEntity({
  name: 'CommandApproval',
  tableName: 'command_approval',
  properties: {
    /** Same id as the `approval` row. */
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    /** Seed 002's approval_id: `P-` + 32 hex. */
    approvalId: p.text(),
    kind: p.text().$type<'COMMAND' | 'COMMAND_SET'>(),
    agentId: p.text(),
    commands: p.json<string[]>(),
    payload: p.json<SealedPayload>(),
    fingerprint: p.text(),
    status: p.text().$type<CommandApprovalStatus>(),
    requestedById: p.uuid(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const ApprovalGrant = defineEntity({
  name: 'ApprovalGrant',
  tableName: 'approval_grant',
  properties: {
    id: p.uuid().primary(),
    commandApprovalId: p.uuid(),
    tenantId: p.uuid(),
    status: p.text().$type<GrantStatus>(),
    fingerprint: p.text(),
    expiresAt: p.datetime(),
    consumedAt: p.datetime().nullable(),
    closedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type CommandApprovalRow = InferEntity<typeof CommandApproval>;
export type ApprovalGrantRow = InferEntity<typeof ApprovalGrant>;

export const GRANT_ENTITIES = [CommandApproval, ApprovalGrant];
