import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { ApprovalRequest } from '../approvals/entities.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId, sharedPrimaryKey } from '../db/relations.js';
import { APPROVAL_STATUSES, GRANT_STATUSES, type SealedPayload } from './rules.js';

// Seed 002 beside the approval row (same id): the sealed payload, its fingerprint, the seed's
// lowercase approval status, and the single-use grant with its UPPERCASE status.

export const CommandApproval = defineEntity({
  name: 'CommandApproval',
  tableName: 'command_approval',
  properties: {
    /** The `approval` row's id: this row extends it (primary key and foreign key at once). */
    id: sharedPrimaryKey(ApprovalRequest, 'id'),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    /** Seed 002's approval_id: `P-` + 32 hex. */
    approvalId: p.text(),
    kind: p.enum(['COMMAND', 'COMMAND_SET']),
    /** Seed 002's agent id (`a` + hex), not a row of `agent`. */
    agentId: p.text(),
    commands: p.json<string[]>(),
    payload: p.json<SealedPayload>(),
    fingerprint: p.text(),
    status: p.enum([...APPROVAL_STATUSES]),
    requestedById: manyToOneId(User, 'requested_by_id'),
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
  uniques: [{ properties: ['tenantId', 'approvalId'] }],
  checks: [
    { property: 'approvalId', expression: `approval_id ~ '^P-[0-9a-f]{32}$'` },
    { property: 'agentId', expression: `agent_id ~ '^a[0-9a-f]{5,}$' and length(agent_id) <= 160` },
    { property: 'commands', expression: `jsonb_typeof(commands) = 'array' and jsonb_array_length(commands) >= 1` },
    { property: 'fingerprint', expression: `fingerprint ~ '^[0-9a-f]{64}$'` },
    { name: 'command_approval_check', expression: `(kind = 'COMMAND') = (jsonb_array_length(commands) = 1)` },
  ],
});

export const ApprovalGrant = defineEntity({
  name: 'ApprovalGrant',
  tableName: 'approval_grant',
  properties: {
    id: p.uuid().primary(),
    /** Single-use: at most one grant per command approval. */
    commandApprovalId: manyToOneId(CommandApproval, 'command_approval_id'),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    status: p.enum([...GRANT_STATUSES]),
    fingerprint: p.text(),
    expiresAt: p.datetime(),
    consumedAt: p.datetime().nullable(),
    closedAt: p.datetime().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['commandApprovalId'] }],
  checks: [{ property: 'fingerprint', expression: `fingerprint ~ '^[0-9a-f]{64}$'` }],
});

export type CommandApprovalRow = InferEntity<typeof CommandApproval>;
export type ApprovalGrantRow = InferEntity<typeof ApprovalGrant>;

export const COMMAND_ENTITIES = [CommandApproval, ApprovalGrant];
