import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { advertises } from '../a2a/card.js';
import { EXECUTION_EVIDENCE_EXTENSION } from '../a2a/extensions.js';
import type { AgentCard, Message } from '../a2a/types.js';
import { ApprovalRequest } from '../approvals/entities.js';
import { appendEvents, stream, type AuditEventInput, type AuditEventType } from '../audit/module.js';
import { sql } from '../db/sql.js';
import { Decision } from '../decisions/entities.js';
import { Delivery } from '../delivery/entities.js';
import type { TaskRow } from '../tasks/entities.js';
import { log } from '../log.js';
import { readEvidencePart, type EvidenceRead, type EvidenceReport } from './part.js';

// Executed-as-approved evidence (docs/VERIFYING-APPROVALS.md "Reporting
// execution"). Runs inside the observation's transaction, with the task row locked, over the
// agent messages that observation stored for the first time: a message seen again (a replayed
// push, a GetTask's history) is not new, and the (task, message) key refuses a second row in any
// case. A report counts only from an agent whose latest card advertises the extension (else its
// part is ordinary content and nothing is recorded), and only for an approved and delivered
// decision of this very task; anything else is refused with a reason in the task's audit stream
// and attributed to no request. An accepted report is evidence, not state: it never changes the
// task, the request or the delivery.

/** Why a report was refused (the `reason` of an `evidence.refused` event). */
export type RefusalReason = 'INVALID_PART' | 'UNKNOWN_DECISION' | 'OTHER_TASK' | 'REQUEST_MISMATCH' | 'NOT_APPROVED' | 'NOT_DELIVERED';

/** The audit types: accepted with the approved digest, accepted with another digest (loud), refused. */
export const EVIDENCE_EVENTS = {
  reported: 'evidence.reported',
  mismatch: 'evidence.digest_mismatch',
  refused: 'evidence.refused',
} as const satisfies Record<string, AuditEventType>;

const APPROVING = new Set(['APPROVE', 'EDIT_AND_APPROVE']);

type Attribution =
  | { ok: true; approval: { id: string; digest: string; agentId: string | null }; deliveryId: string }
  | { ok: false; reason: RefusalReason; text: string };

/** Which approved decision of `task` the report names, or why none. */
async function attribute(tem: EntityManager, task: TaskRow, report: EvidenceReport): Promise<Attribution> {
  const refuse = (reason: RefusalReason, text: string): Attribution => ({ ok: false, reason, text });
  const decision = await tem.findOne(Decision, { id: report.decisionId });
  const approval = decision ? await tem.findOne(ApprovalRequest, { id: decision.approvalId }) : null;
  // Another tenant's decision reads as unknown: its existence is not this tenant's to learn.
  if (!decision || !approval || approval.tenantId !== task.tenantId) return refuse('UNKNOWN_DECISION', 'no decision has this id');
  if (approval.taskId !== task.id) return refuse('OTHER_TASK', 'the decision belongs to another task');
  if (approval.id !== report.requestId) return refuse('REQUEST_MISMATCH', 'requestId is not the request of the decision');
  if (!APPROVING.has(decision.outcome)) return refuse('NOT_APPROVED', `the decision is ${decision.outcome}, not an approval`);
  const delivery = await tem.findOne(Delivery, { decisionId: decision.id });
  if (!delivery) return refuse('NOT_DELIVERED', 'nothing was delivered for the decision');
  return { ok: true, approval: { id: approval.id, digest: approval.digest, agentId: approval.agentId ?? null }, deliveryId: delivery.id };
}

/** Records the reports among `messages` (those this observation stored first) and their audit events. */
export async function recordExecutionEvidence(tem: EntityManager, task: TaskRow, messages: readonly Message[], card: AgentCard | null): Promise<void> {
  if (!card || !advertises(card, EXECUTION_EVIDENCE_EXTENSION)) return;
  const reports = messages.flatMap((message) => {
    const read = message.role === 'ROLE_AGENT' ? readEvidencePart(message.parts) : null;
    return read ? [{ message, read }] : [];
  });
  if (!reports.length) return;
  try {
    // A savepoint: whatever goes wrong here rolls back the evidence alone, never the observation.
    await tem.transactional((sp) => recordReports(sp, task, reports));
  } catch (e) {
    log.warn(`execution evidence on task ${task.id} not recorded: ${(e as Error).message}`);
  }
}

async function recordReports(tem: EntityManager, task: TaskRow, reports: { message: Message; read: EvidenceRead }[]): Promise<void> {
  const actor = { type: 'agent' as const, id: task.agentId };
  const events: AuditEventInput[] = [];
  for (const { message, read } of reports) {
    const refused = (reason: RefusalReason, text: string, decisionId: string | null) =>
      events.push({
        tenantId: task.tenantId,
        stream: stream.task(task.id),
        type: EVIDENCE_EVENTS.refused,
        actor,
        data: { taskId: task.id, agentId: task.agentId, messageId: message.messageId, reason, text, decisionId },
      });
    if (!read.ok) {
      refused('INVALID_PART', read.reason, read.decisionId);
      continue;
    }
    const { report } = read;
    const found = await attribute(tem, task, report);
    if (!found.ok) {
      refused(found.reason, found.text, report.decisionId);
      continue;
    }
    const matches = report.executedDigest === found.approval.digest;
    const [row] = await sql<{ id: string }>(
      tem,
      `insert into execution_evidence (id, tenant_id, approval_id, decision_id, delivery_id, task_id, message_id, reported_digest,
                                       approved_digest, digest_matches, outcome, detail)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (task_id, message_id) do nothing returning id`,
      [
        randomUUID(),
        task.tenantId,
        found.approval.id,
        report.decisionId,
        found.deliveryId,
        task.id,
        message.messageId,
        report.executedDigest,
        found.approval.digest,
        matches,
        report.outcome,
        report.detail,
      ],
    );
    if (!row) continue;
    events.push({
      tenantId: task.tenantId,
      stream: stream.approval(found.approval.id),
      type: matches ? EVIDENCE_EVENTS.reported : EVIDENCE_EVENTS.mismatch,
      actor,
      data: {
        approvalId: found.approval.id,
        agentId: found.approval.agentId,
        taskId: task.id,
        decisionId: report.decisionId,
        deliveryId: found.deliveryId,
        evidenceId: row.id,
        messageId: message.messageId,
        outcome: report.outcome,
        reportedDigest: report.executedDigest,
        approvedDigest: found.approval.digest,
        digestMatches: matches,
        detail: report.detail,
      },
    });
  }
  await appendEvents(tem, events);
}
