import type { Interrupt, Message as AgUiMessage, ResumeEntry } from '@ag-ui/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../agents/entities.js';
import { AGUI_KEY_PREFIX } from '../approvals/entities.js';
import type { DeliveryCarrier } from '../delivery/module.js';
import type { ApprovalAction } from '../approvals/module.js';
import {
  checkDecisionRecord,
  decisionEventsOf,
  decisionEventsSubquery,
  integrityAlert,
  refusalMessage,
  trustedAuditKey,
  appendEvents,
  stream,
  SYSTEM,
  type AuditEventInput,
} from '../audit/module.js';
import { signApproval, storedSignature } from '../approval-signing/module.js';
import { sql } from '../db/sql.js';
import { storable } from '../db/storable.js';
import type { Deps } from '../deps.js';
import type { JobDefinition } from '../jobs/job.js';
import { AGUI_RESUME_JOB } from './decision.js';
import { AgUiRun } from './entities.js';
import { AgUiError, runAndRecord, runInput } from './run.js';
import { Task } from '../tasks/entities.js';
import { resumePayloadOf } from '../verify-approval/index.js';

// Resuming an interrupted AG-UI run (docs/AG-UI.md "Decision -> resume"): once every interrupt of
// the run is answered, one RunAgentInput on the same thread carries one resume entry per
// interrupt. Its runId is derived from the interrupted run, and a run recorded under that runId
// means the resume happened: a retry after a crash or an outage sends the same input, and never a
// second one after the agent answered. Approved: resolved, the payload the approved action gives
// (verify-approval/index.ts) and metadata.approval signed as for A2A (stored at the first
// attempt); rejected, changes requested, expired or superseded: cancelled, unsigned.

interface AnswerRow {
  interrupt_id: string;
  interrupt: Interrupt;
  approval_id: string;
  tenant_id: string;
  agent_id: string | null;
  task_id: string;
  status: string;
  revision: number;
  digest: string;
  action: ApprovalAction;
  external_id: string | null;
  delivery_id: string | null;
  decision_id: string | null;
  approval_signature: string | null;
  delivery_created_at: Date | null;
  outcome: string | null;
  /** The decision row, and the events that may record it (audit/decision-record.ts). */
  decision_approval_id: string | null;
  decision_revision: number | null;
  decision_digest: string | null;
  reviewer_id: string | null;
  vote: boolean | null;
  /** The signed approval the decision's own transaction stored with it; null on rows older than that column. */
  decision_signature: string | null;
  decision_events: unknown;
}

async function answersOf(em: EntityManager, runRowId: string): Promise<AnswerRow[]> {
  return sql<AnswerRow>(
    em,
    `select i.interrupt_id, i.interrupt, a.id as approval_id, a.tenant_id, a.agent_id, a.task_id, a.status, a.revision, a.digest, a.action, a.external_id,
            d.id as delivery_id, d.decision_id, d.approval_signature, d.created_at as delivery_created_at, dec.outcome,
            dec.approval_id as decision_approval_id, dec.revision as decision_revision, dec.digest as decision_digest, dec.reviewer_id, dec.vote, dec.signature as decision_signature,
            case when a.status = 'APPROVED' and d.decision_id is not null then ${decisionEventsSubquery('a.id', 'd.decision_id')} end as decision_events
       from agui_interrupt i join approval a on a.id = i.approval_id
       left join delivery d on d.approval_id = a.id left join decision dec on dec.id = d.decision_id
      where i.run_row_id = ? order by a.created_at, i.interrupt_id`,
    [runRowId],
  );
}

/** An approved answer is resolved only on its decision's signed record (audit/decision-record.ts); anything else is cancelled, unsigned. */
function decisionRecordOf(em: EntityManager, a: AnswerRow) {
  if (a.outcome === null) return { ok: false as const, problem: 'no_signed_event' as const, message: `decision ${a.decision_id} does not exist` };
  return checkDecisionRecord(trustedAuditKey(em), {
    approval: { id: a.approval_id, tenantId: a.tenant_id },
    decision: {
      id: a.decision_id!,
      approvalId: a.decision_approval_id!,
      outcome: a.outcome,
      revision: a.decision_revision!,
      digest: a.decision_digest!,
      reviewerId: a.reviewer_id!,
      vote: a.vote!,
    },
    events: decisionEventsOf(a.decision_events),
    acting: { action: a.action, revision: a.revision, digest: a.digest },
  });
}

async function signatureFor(em: EntityManager, deps: Deps, a: AnswerRow, threadId: string): Promise<string> {
  if (a.approval_signature) return a.approval_signature;
  const subject = {
    requestId: a.approval_id,
    decisionId: a.decision_id!,
    revision: a.revision,
    revisionDigest: a.digest,
    taskId: threadId,
    externalId: a.external_id ?? null,
  };
  // The decision's own signed approval when it names exactly this answer and thread; a decision
  // stored without one (a row older than Migration20261205000100_decision_signature) is signed here.
  const made =
    storedSignature(deps.approvalKeys, a.decision_signature, subject) ?? (await signApproval(deps.approvalKeys, subject, new Date(a.delivery_created_at!)));
  const [row] = await sql<{ approval_signature: string }>(
    em,
    'update delivery set approval_signature = coalesce(approval_signature, ?) where id = ? returning approval_signature',
    [made, a.delivery_id],
  );
  return row?.approval_signature ?? made;
}

async function entryFor(em: EntityManager, deps: Deps, a: AnswerRow, threadId: string): Promise<ResumeEntry> {
  if (a.status === 'APPROVED' && a.decision_id) {
    const signature = await signatureFor(em, deps, a, threadId);
    return {
      interruptId: a.interrupt_id,
      status: 'resolved',
      payload: resumePayloadOf(a.action, a.revision),
      metadata: {
        approval: { requestId: a.approval_id, decisionId: a.decision_id, revision: a.revision, revisionDigest: a.digest, signature },
        action: a.action,
      },
    };
  }
  return {
    interruptId: a.interrupt_id,
    status: 'cancelled',
    metadata: { approval: { requestId: a.approval_id, decisionId: a.decision_id, outcome: a.outcome, status: a.status } },
  };
}

/** Ends the resume: the run's resume status and each answer's delivery, with their audit events. */
async function finish(
  em: EntityManager,
  runRowId: string,
  answers: AnswerRow[],
  outcome: { delivered: true; taskState: string } | { delivered: false; error: string },
  alerts: AuditEventInput[] = [],
) {
  await em.transactional(async (tem) => {
    const status = outcome.delivered ? 'DELIVERED' : 'FAILED';
    const error = outcome.delivered ? null : outcome.error;
    await sql(tem, 'update agui_run set resume_status = ?, resume_error = ? where id = ?', [status, error, runRowId]);
    const events: AuditEventInput[] = [];
    for (const a of answers) {
      if (!a.delivery_id) continue;
      const [d] = await sql<{ attempts: number; message_id: string; created_at: Date }>(
        tem,
        `update delivery set status = ?, last_error = ?, attempts = attempts + 1, observed_task_state = ?, observed_at = case when ? then now() else observed_at end, updated_at = now()
          where id = ? and status <> 'DELIVERED' returning attempts, message_id, created_at`,
        [status, error, outcome.delivered ? outcome.taskState : null, outcome.delivered, a.delivery_id],
      );
      if (!d) continue;
      const routing = {
        approvalId: a.approval_id,
        agentId: a.agent_id,
        taskId: a.task_id,
        deliveryId: a.delivery_id,
        decisionId: a.decision_id,
        aguiRunRowId: runRowId,
      };
      events.push(
        outcome.delivered
          ? {
              tenantId: a.tenant_id,
              stream: stream.approval(a.approval_id),
              type: 'delivery.delivered',
              actor: SYSTEM,
              latencyFrom: new Date(d.created_at),
              data: { ...routing, messageId: d.message_id, attempts: d.attempts, observedTaskState: outcome.taskState },
            }
          : {
              tenantId: a.tenant_id,
              stream: stream.approval(a.approval_id),
              type: 'delivery.failed',
              actor: SYSTEM,
              data: { ...routing, attempts: d.attempts, error: outcome.error },
            },
      );
    }
    await appendEvents(tem, [...events, ...alerts]);
  });
}

/** One attempt of a run's resume. Throws to let the queue retry with backoff, until the last attempt fails it. */
export async function resumeRun(em: EntityManager, deps: Deps, runRowId: string, attempt: number, maxAttempts: number): Promise<void> {
  const run = await em.findOne(AgUiRun, { id: runRowId }, { refresh: true });
  if (!run || run.resumeStatus === 'DELIVERED' || !run.resumeRunId) return;
  const answers = await answersOf(em, runRowId);
  if (answers.some((a) => a.status === 'PENDING')) return;
  const task = await em.findOneOrFail(Task, { id: run.taskId }, { refresh: true });
  // A run recorded under the resume's runId: the agent answered an earlier attempt.
  const done = await em.findOne(AgUiRun, { taskId: run.taskId, runId: run.resumeRunId }, { refresh: true });
  if (done) return finish(em, runRowId, answers, { delivered: true, taskState: task.state });
  const now = Date.now();
  const expired = answers.find((a) => a.interrupt.expiresAt && Date.parse(a.interrupt.expiresAt) <= now);
  if (expired) {
    // AG-UI: a client must not submit a resume past an interrupt's expiresAt.
    return finish(em, runRowId, answers, {
      delivered: false,
      error: `interrupt ${JSON.stringify(expired.interrupt_id.slice(0, 200))} expired at ${expired.interrupt.expiresAt}: AG-UI allows no resume after it`,
    });
  }
  // Nothing is signed or sent while one approved answer lacks its decision's signed record: the
  // whole resume ends FAILED with the reason (one input answers every interrupt of the run).
  const alerts: AuditEventInput[] = [];
  let refusal: string | null = null;
  for (const a of answers) {
    if (a.status !== 'APPROVED' || !a.decision_id) continue;
    const record = decisionRecordOf(em, a);
    if (record.ok) continue;
    refusal ??= `request ${a.approval_id}: ${refusalMessage(record)}`;
    const at = {
      tenantId: a.tenant_id,
      approvalId: a.approval_id,
      agentId: a.agent_id,
      taskId: a.task_id,
      decisionId: a.decision_id,
      deliveryId: a.delivery_id,
    };
    alerts.push(integrityAlert('agui_resume', record, at));
  }
  if (refusal) return finish(em, runRowId, answers, { delivered: false, error: refusal }, alerts);
  const agent = await em.findOneOrFail(Agent, { id: task.agentId });
  const entries: ResumeEntry[] = [];
  for (const a of answers) entries.push(await entryFor(em, deps, a, run.threadId));
  await sql(em, 'update agui_run set resume_attempts = resume_attempts + 1 where id = ?', [runRowId]);
  const input = runInput(run.threadId, run.resumeRunId, run.messages as AgUiMessage[], run.state, entries);
  try {
    await runAndRecord(em, deps, agent, task, input, run.id);
  } catch (e) {
    if (!(e instanceof AgUiError)) throw e;
    const error = storable(e.message.slice(0, 2000));
    if (attempt >= maxAttempts) return finish(em, runRowId, answers, { delivered: false, error });
    await sql(em, 'update agui_run set resume_error = ? where id = ?', [error, runRowId]);
    await sql(
      em,
      `update delivery set attempts = attempts + 1, last_error = ? where id in (select d.id from delivery d join agui_interrupt i on i.approval_id = d.approval_id where i.run_row_id = ?)`,
      [error, runRowId],
    );
    throw e;
  }
  const after = await em.findOneOrFail(Task, { id: run.taskId }, { refresh: true });
  await finish(em, runRowId, answers, { delivered: true, taskState: after.state });
}

/** The AG-UI run a delivery answers an interrupt of, if it does (retryDelivery queues deliver_approval for it). */
export async function aguiRunOfDelivery(em: EntityManager, deliveryId: string): Promise<string | null> {
  const [row] = await sql<{ run_row_id: string }>(
    em,
    'select i.run_row_id from delivery d join agui_interrupt i on i.approval_id = d.approval_id where d.id = ?',
    [deliveryId],
  );
  return row?.run_row_id ?? null;
}

/** A reviewer retried a FAILED answer: the run's whole resume goes again. */
export async function retryResume(em: EntityManager, deps: Deps, runRowId: string, attempt: number, maxAttempts: number) {
  await sql(em, `update agui_run set resume_status = 'QUEUED' where id = ? and resume_status = 'FAILED'`, [runRowId]);
  await sql(
    em,
    `update delivery set status = 'QUEUED' where status = 'FAILED' and approval_id in (select approval_id from agui_interrupt where run_row_id = ?)`,
    [runRowId],
  );
  await resumeRun(em, deps, runRowId, attempt, maxAttempts);
}

/** AG-UI answers go as one resume of their run (delivery/carriers.ts). */
export const aguiCarrier: DeliveryCarrier = {
  carries: (approval) => approval.source === 'AGENT' && !!approval.key?.startsWith(AGUI_KEY_PREFIX),
  async retry(em, deps, deliveryId, attempt, maxAttempts) {
    const runRowId = await aguiRunOfDelivery(em, deliveryId);
    if (!runRowId) return false;
    await retryResume(em, deps, runRowId, attempt, maxAttempts);
    return true;
  },
};

export const aguiResumeJob: JobDefinition = {
  name: AGUI_RESUME_JOB,
  async run(payload, helpers, { orm, deps }) {
    const { runRowId } = payload as { runRowId: string };
    await resumeRun(orm.em.fork(), deps, runRowId, helpers.job.attempts, helpers.job.max_attempts);
  },
};
