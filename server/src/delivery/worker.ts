import { randomUUID } from 'node:crypto';
import { sha256Hex, uuidFromDigest } from '../lib/hashing.js';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MEDIA_TYPE } from '../a2a/extensions.js';
import type { Message } from '../a2a/types.js';
import type { AgentCard } from '../a2a/types.js';
import { recordAgentFailure } from '../agents/module.js';
import type { ApprovalAction } from '../approvals/module.js';
import {
  checkDecisionRecord,
  decisionEventsOf,
  decisionEventsSubquery,
  integrityAlert,
  refusalMessage,
  trustedAuditKey,
  type DecisionRecordVerdict,
  appendEvents,
  stream,
  SYSTEM,
  type AuditEventInput,
  type AuditPayload,
} from '../audit/module.js';
import { signApproval, storedSignature } from '../approval-signing/module.js';
import { recordObservation, sendToAgent } from '../tasks/module.js';
import { sql } from '../db/sql.js';
import { storable } from '../db/storable.js';
import type { Deps } from '../deps.js';
import type { JobDefinition } from '../jobs/job.js';
import { log } from '../log.js';
import { Delivery } from './entities.js';
import { DELIVER_JOB, scheduleDeliveryJob, unscheduleDeliveryJob } from './queue.js';
import { retryByCarrier } from './carriers.js';

// Delivery: the approved action reaches the agent once, as a message on the same task and
// context whose messageId is derived from the decision (so a retry is the same message), with
// metadata.approval naming exactly what was approved and Taskbay's signature over it
// (docs/VERIFYING-APPROVALS.md), signed at the first attempt and stored (so a retry is the same
// signature, even after a key rotation).

export function approvedMessage(
  action: ApprovalAction,
  approval: { requestId: string; decisionId: string; revision: number; revisionDigest: string; signature: string },
  ids: { messageId: string; taskId?: string; contextId?: string },
): Message {
  const metadata: Record<string, unknown> = { approval };
  let parts: Message['parts'];
  if (action.kind === 'send_message') {
    parts = [{ text: action.text }];
    if (action.data) metadata.decision = action.data;
  } else {
    parts = [{ data: action.values, mediaType: MEDIA_TYPE.json }];
  }
  return { messageId: ids.messageId, role: 'ROLE_USER', parts, taskId: ids.taskId, contextId: ids.contextId, metadata };
}

/**
 * The claim on a delivery: at most one attempt sends it at a time, the deciding instance's (right
 * after the decision committed, decisions/service.ts) or its job's. An attempt starts only by
 * taking the claim in the statement that counts it (beginAttempt); its outcome's transaction
 * clears it. It is a short lease the attempt renews while it runs (keepClaim), so one left by a
 * sender that died lapses within leaseMs and the job sends then; a send may take up to the A2A
 * time limit, far longer than the lease. renewMs leaves room for renewals delayed by a busy
 * database or event loop (several may fail before the claim lapses). Tests shorten both.
 */
export const DELIVERY_CLAIM = { leaseMs: 10_000, renewMs: 2_000 };

/**
 * Who runs an attempt, and the id its claim carries. The deciding instance's is new per attempt.
 * A job's is its job's: graphile-worker runs a job again only once its previous run has ended, or
 * died with its worker (jobs/recovery.ts releases it within seconds), so a claim with the job's own
 * id is a finished run's and the job takes it over at once instead of waiting out the lease.
 */
export type Sender = { kind: 'decision' } | { kind: 'job'; jobId: string };

const claimIdOf = (sender: Sender) => (sender.kind === 'job' ? uuidFromDigest(sha256Hex(`taskbay-delivery-job:${sender.jobId}`)) : randomUUID());

/** After the n-th failed attempt since it was queued the next waits about e^n s (graphile-worker's own backoff), at most e^10 s (6 h). */
export const retryDelayMs = (n: number): number => Math.round(Math.exp(Math.min(Math.max(n, 1), 10)) * 1000);

/**
 * What one attempt needs: the delivery, its request and task, the agent's latest card, whether it
 * took the claim, and the decision with the events that may record it (audit/decision-record.ts).
 */
interface AttemptRow {
  decision_id: string;
  /** The decision row (null fields: there is none). */
  decision_approval_id: string | null;
  decision_outcome: string | null;
  decision_revision: number | null;
  decision_digest: string | null;
  decision_reviewer_id: string | null;
  decision_vote: boolean | null;
  /** The signed approval the decision's own transaction stored with it; null on rows older than that column. */
  decision_signature: string | null;
  decision_events: unknown;
  message_id: string;
  approval_id: string | null;
  tenant_id: string;
  approval_agent_id: string | null;
  task_id: string | null;
  action: ApprovalAction;
  revision: number;
  digest: string;
  external_id: string | null;
  agent_id: string;
  skill_id: string | null;
  remote_task_id: string | null;
  context_id: string | null;
  card: AgentCard | null;
  approval_signature: string | null;
  created_at: Date;
  attempts: number;
  attempts_at_queue: number;
  claimed_until: Date;
  /** False: another attempt holds the claim (until claimed_until); nothing was counted. */
  taken: boolean;
}

/** Free for this attempt (its claim id: c.id): none, lapsed, or its own sender's. */
const CLAIM_FREE = '(claimed_until is null or claimed_until <= now() or claim_id = c.id)';

/**
 * Takes the claim, counts the attempt and reads what the message is made of, in one statement:
 * it sits between the decision and the agent receiving it. A held claim is left as it is (the
 * row is read under its lock, so a claim taken meanwhile is seen). Null when the delivery is gone
 * or no longer QUEUED.
 */
async function beginAttempt(em: EntityManager, deliveryId: string, claimId: string): Promise<AttemptRow | null> {
  const [row] = await sql<AttemptRow>(
    em,
    `with c as (select ?::uuid as id, ?::int * interval '1 millisecond' as lease),
     d as (
       update delivery set attempts = attempts + case when ${CLAIM_FREE} then 1 else 0 end,
              claim_id = case when ${CLAIM_FREE} then c.id else claim_id end,
              claimed_until = case when ${CLAIM_FREE} then now() + c.lease else claimed_until end,
              updated_at = now()
         from c
        where delivery.id = ? and status = 'QUEUED'
        returning approval_id, decision_id, message_id, approval_signature, created_at, attempts, attempts_at_queue, claimed_until, claim_id = c.id as taken)
     select d.decision_id, d.message_id, d.approval_signature, d.created_at, d.attempts, d.attempts_at_queue, d.claimed_until, d.taken,
            a.id as approval_id, a.tenant_id, a.agent_id as approval_agent_id, a.task_id,
            a.action, a.revision, a.digest, a.external_id, t.agent_id, t.skill_id, t.remote_task_id, t.context_id,
            (select card from card_snapshot where agent_id = t.agent_id order by number desc limit 1) as card,
            dec.approval_id as decision_approval_id, dec.outcome as decision_outcome, dec.revision as decision_revision,
            dec.digest as decision_digest, dec.reviewer_id as decision_reviewer_id, dec.vote as decision_vote, dec.signature as decision_signature,
            case when d.taken then ${decisionEventsSubquery('a.id', 'd.decision_id')} end as decision_events
       from d left join approval a on a.id = d.approval_id left join task t on t.id = a.task_id
       left join decision dec on dec.id = d.decision_id`,
    [claimId, DELIVERY_CLAIM.leaseMs, deliveryId],
  );
  if (row && (!row.approval_id || !row.task_id)) throw new Error(`delivery ${deliveryId}: its request or task is missing`);
  return row ?? null;
}

/**
 * Renews the attempt's claim every renewMs until stopped (only a send slower than that renews at
 * all). It stops by itself once the claim is no longer this attempt's: its outcome was recorded,
 * or it lapsed and another attempt took it. A failed renewal is logged; the next one tries again.
 */
function keepClaim(em: EntityManager, deliveryId: string, claimId: string): () => void {
  const timer = setInterval(() => {
    sql<{ id: string }>(
      em.fork(),
      `update delivery set claimed_until = now() + ?::int * interval '1 millisecond'
        where id = ? and claim_id = ? and status = 'QUEUED' returning id`,
      [DELIVERY_CLAIM.leaseMs, deliveryId, claimId],
    ).then(
      (rows) => {
        if (!rows.length) clearInterval(timer);
      },
      (e: Error) => log.warn(`delivery ${deliveryId}: could not renew its claim: ${e.message}`),
    );
  }, DELIVERY_CLAIM.renewMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * One attempt, when it takes the claim. A failed one records the error (on the delivery and the
 * agent) and schedules the next by the job after a backoff, until the attempts allowed since the
 * delivery was queued (TASKBAY_DELIVERY_MAX_ATTEMPTS, counted on the row whoever sends) are used
 * up: then FAILED. When another attempt holds the claim the job comes back as it ends; the
 * deciding instance leaves the delivery to that attempt.
 */
export async function deliver(em: EntityManager, deps: Deps, deliveryId: string, sender: Sender): Promise<void> {
  const claimId = claimIdOf(sender);
  const row = await beginAttempt(em, deliveryId, claimId);
  if (!row) return;
  if (!row.taken) {
    // (The claim's end in microseconds, rounded up to the job's milliseconds.)
    if (sender.kind === 'job') await scheduleDeliveryJob(em, deps.config, deliveryId, new Date(new Date(row.claimed_until).getTime() + 1));
    return;
  }
  const stopRenewing = keepClaim(em, deliveryId, claimId);
  try {
    await attempt(em, deps, deliveryId, claimId, row);
  } finally {
    stopRenewing();
  }
}

/**
 * The delivery's decision has its signed record and the action is the one it approved
 * (audit/decision-record.ts): read by beginAttempt's one statement, checked in memory.
 */
function decisionRecordOf(em: EntityManager, row: AttemptRow): DecisionRecordVerdict {
  if (row.decision_outcome === null) return { ok: false, problem: 'no_signed_event', message: `decision ${row.decision_id} does not exist` };
  return checkDecisionRecord(trustedAuditKey(em), {
    approval: { id: row.approval_id!, tenantId: row.tenant_id },
    decision: {
      id: row.decision_id,
      approvalId: row.decision_approval_id!,
      outcome: row.decision_outcome,
      revision: row.decision_revision!,
      digest: row.decision_digest!,
      reviewerId: row.decision_reviewer_id!,
      vote: row.decision_vote!,
    },
    events: decisionEventsOf(row.decision_events),
    acting: { action: row.action, revision: row.revision, digest: row.digest },
  });
}

/** The attempt that took the claim: check the decision's signed record, sign, send, record the outcome. */
async function attempt(em: EntityManager, deps: Deps, deliveryId: string, claimId: string, row: AttemptRow): Promise<void> {
  const approval = { id: row.approval_id!, tenantId: row.tenant_id, agentId: row.approval_agent_id, taskId: row.task_id! };
  const task = { id: row.task_id!, agentId: row.agent_id, skillId: row.skill_id };
  const delivery = { decisionId: row.decision_id, messageId: row.message_id };
  const record = decisionRecordOf(em, row);
  if (!record.ok) return refuse(em, deliveryId, claimId, approval, delivery.decisionId, record);
  const signed = { requestId: approval.id, decisionId: delivery.decisionId, revision: row.revision, revisionDigest: row.digest };
  const subject = { ...signed, taskId: row.remote_task_id ?? null, externalId: row.external_id ?? null };
  // The decision's own signed approval (made in its transaction) when it verifies and names
  // exactly this delivery's request, decision, revision, digest and task; a decision stored
  // without one (a row older than Migration20261205000100_decision_signature) is signed here. Stored with the first attempt's outcome (after the send, in
  // the transaction that records it, so no statement stands between the decision and the agent):
  // every later attempt sends the same signature, across a key rotation too. The signature is
  // deterministic (Ed25519, iat the decision's time), so an attempt that ended before storing it
  // (a crash mid-send) is signed the same way again unless the key was rotated meanwhile.
  const signature =
    row.approval_signature ??
    storedSignature(deps.approvalKeys, row.decision_signature, subject) ??
    (await signApproval(deps.approvalKeys, subject, new Date(row.created_at)));
  const message = approvedMessage(
    row.action,
    { ...signed, signature },
    { messageId: delivery.messageId, taskId: row.remote_task_id ?? undefined, contextId: row.context_id ?? undefined },
  );
  const routing = { approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, deliveryId, decisionId: delivery.decisionId };
  /** The row, locked, with this attempt's claim cleared (unless it lapsed and another attempt holds it now). */
  const endAttempt = async (tem: EntityManager) => {
    const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true, lockMode: LockMode.PESSIMISTIC_WRITE });
    if (d.claimId === claimId) {
      d.claimId = null;
      d.claimedUntil = null;
    }
    d.approvalSignature ??= signature;
    return d;
  };
  /** The delivery has ended (DELIVERED or FAILED): its job is not needed, and the approval's stream says so. */
  const recordEnd = async <T extends 'delivery.delivered' | 'delivery.failed'>(
    tem: EntityManager,
    type: T,
    data: Omit<AuditPayload<T>, keyof typeof routing>,
    latencyFrom?: Date,
  ) => {
    await unscheduleDeliveryJob(tem, deliveryId);
    const event: AuditEventInput<T> = {
      tenantId: approval.tenantId,
      stream: stream.approval(approval.id),
      type,
      actor: SYSTEM,
      latencyFrom,
      data: { ...routing, ...data } as AuditPayload<T>,
    };
    await appendEvents(tem, [event]);
  };
  try {
    if (!row.card) throw new Error('agent card missing');
    const result = await sendToAgent(deps, row.card, message, task.skillId ?? null);
    await em.transactional(async (tem) => {
      const d = await endAttempt(tem);
      // A send that outlived its claim, while the sender that took the lapsed claim recorded the
      // delivery: the agent had the message (the same messageId twice); nothing more is recorded.
      if (d.status === 'DELIVERED') return;
      const observed = await recordObservation(tem, deps.config, task.id, { sent: message, result });
      d.status = 'DELIVERED';
      d.lastError = null;
      d.observedTaskState = observed.state;
      d.observedAt = new Date();
      await tem.flush();
      await recordEnd(tem, 'delivery.delivered', { messageId: d.messageId, attempts: d.attempts, observedTaskState: observed.state }, d.createdAt);
    });
  } catch (e) {
    // Reviewers see the classified message (an A2AError's never holds what the agent answered);
    // admins read the upstream detail on the agent.
    await recordAgentFailure(em, task.agentId, e);
    const error = storable((e as Error).message?.slice(0, 2000) || String(e));
    const sinceQueued = row.attempts - row.attempts_at_queue;
    const last = sinceQueued >= deps.config.deliveryMaxAttempts;
    await em.transactional(async (tem) => {
      const d = await endAttempt(tem);
      // Ended meanwhile by the sender that took this attempt's lapsed claim: its outcome stands.
      if (d.status !== 'QUEUED') return;
      d.lastError = error;
      if (last) d.status = 'FAILED';
      await tem.flush();
      if (!last) {
        await scheduleDeliveryJob(tem, deps.config, deliveryId, new Date(Date.now() + retryDelayMs(sinceQueued)));
        return;
      }
      await recordEnd(tem, 'delivery.failed', { attempts: d.attempts, error });
    });
  }
}

/**
 * A delivery whose decision has no valid signed record ends FAILED with the reason, unsent and
 * unsigned, its job removed; an integrity alert reports it (audit/decision-record.ts). A
 * reviewer's retry checks again.
 */
async function refuse(
  em: EntityManager,
  deliveryId: string,
  claimId: string,
  approval: { id: string; tenantId: string; agentId: string | null; taskId: string },
  decisionId: string,
  verdict: Extract<DecisionRecordVerdict, { ok: false }>,
): Promise<void> {
  const error = refusalMessage(verdict);
  await em.transactional(async (tem) => {
    const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true, lockMode: LockMode.PESSIMISTIC_WRITE });
    if (d.claimId === claimId) {
      d.claimId = null;
      d.claimedUntil = null;
    }
    if (d.status !== 'QUEUED') return;
    d.status = 'FAILED';
    d.lastError = error;
    await tem.flush();
    await unscheduleDeliveryJob(tem, deliveryId);
    const at = { tenantId: approval.tenantId, approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, decisionId, deliveryId };
    await appendEvents(tem, [
      {
        tenantId: approval.tenantId,
        stream: stream.approval(approval.id),
        type: 'delivery.failed',
        actor: SYSTEM,
        data: {
          approvalId: approval.id,
          agentId: approval.agentId,
          taskId: approval.taskId,
          deliveryId,
          decisionId,
          attempts: d.attempts,
          error,
          refused: true,
        },
      },
      integrityAlert('delivery', verdict, at),
    ]);
  });
}

export const deliverJob: JobDefinition = {
  name: DELIVER_JOB,
  async run(payload, helpers, { orm, deps }) {
    const { deliveryId, resumesRun } = payload as { deliveryId: string; resumesRun?: boolean };
    const em = orm.em.fork();
    // An answer another module carries goes its way (a reviewer's retry lands here, marked by retryDelivery).
    if (resumesRun && (await retryByCarrier(em, deps, deliveryId, helpers.job.attempts, helpers.job.max_attempts))) return;
    await deliver(em, deps, deliveryId, { kind: 'job', jobId: helpers.job.id });
  },
};
