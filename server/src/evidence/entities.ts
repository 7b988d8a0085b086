import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { ApprovalRequest } from '../approvals/entities.js';
import { Tenant } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';
import { Decision } from '../decisions/entities.js';
import { Delivery } from '../delivery/entities.js';
import { Task } from '../tasks/entities.js';

export const EVIDENCE_OUTCOMES = ['SUCCEEDED', 'FAILED'] as const;
export type EvidenceOutcome = (typeof EVIDENCE_OUTCOMES)[number];

/**
 * What an agent reported executing for an approved decision (docs/VERIFYING-APPROVALS.md
 * "Reporting execution"): the agent's word, kept apart from the task
 * state Taskbay observes. Append-only (the migration's trigger); one row per agent message.
 */
export const ExecutionEvidence = defineEntity({
  name: 'ExecutionEvidence',
  tableName: 'execution_evidence',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    approvalId: manyToOneId(ApprovalRequest, 'approval_id'),
    decisionId: manyToOneId(Decision, 'decision_id'),
    deliveryId: manyToOneId(Delivery, 'delivery_id'),
    taskId: manyToOneId(Task, 'task_id'),
    /** The agent message that carried the report. */
    messageId: p.text(),
    /** The digest the agent says it executed. */
    reportedDigest: p.text(),
    /** The approved revision's digest (the one delivered and signed). */
    approvedDigest: p.text(),
    digestMatches: p.boolean(),
    outcome: p.enum([...EVIDENCE_OUTCOMES]),
    detail: p.text().nullable(),
    reportedAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['taskId', 'messageId'] }],
  indexes: [{ name: 'execution_evidence_approval', properties: ['approvalId', 'reportedAt'] }],
  checks: [
    { name: 'execution_evidence_reported_digest_check', expression: `reported_digest ~ '^[0-9a-f]{64}$'` },
    { name: 'execution_evidence_detail_check', expression: 'char_length(detail) <= 2000' },
    // The row says whether the reported digest is the approved one, and cannot say otherwise.
    { name: 'execution_evidence_match', expression: 'digest_matches = (reported_digest = approved_digest)' },
  ],
});

export type ExecutionEvidenceRow = InferEntity<typeof ExecutionEvidence>;
