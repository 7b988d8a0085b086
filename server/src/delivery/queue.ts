import { randomUUID } from 'node:crypto';
import { sha256Hex, uuidFromDigest } from '../lib/hashing.js';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApprovalRequest } from '../approvals/entities.js';
import { appendEvents, stream } from '../audit/module.js';
import { authorize } from '../auth/module.js';
import { Access } from '../access.js';
import type { Config } from '../config.js';
import { addJob, sql } from '../db/sql.js';
import type { Deps } from '../deps.js';
import { DomainError } from '../errors.js';
import { carriedElsewhere } from './carriers.js';
import { Delivery } from './entities.js';

// Queueing a delivery: on approval (inside the decision's transaction, decisions/service.ts) and
// again when a reviewer retries a FAILED one. worker.ts runs an attempt: the deciding instance's
// right after the commit (an A2A delivery), or the job's. One job per delivery (its job key): every
// attempt that fails schedules the next by re-adding it, one that ends the delivery removes it.

export const DELIVER_JOB = 'deliver_approval';

/** The A2A messageId of a delivery: derived from the decision, so a retry is the same message. */
export function deliveryMessageId(decisionId: string): string {
  return uuidFromDigest(sha256Hex(`taskbay-delivery:${decisionId}`));
}

const jobKey = (deliveryId: string) => `deliver:${deliveryId}`;

/** (Re)schedules the delivery's one job to run at runAt (graphile-worker replaces a queued job of the same key). */
export async function scheduleDeliveryJob(em: EntityManager, config: Pick<Config, 'deliveryMaxAttempts'>, deliveryId: string, runAt: Date): Promise<void> {
  // maxAttempts bounds the job's own errors (the database away); agent failures are counted on the delivery row.
  await addJob(em, DELIVER_JOB, { deliveryId }, { maxAttempts: config.deliveryMaxAttempts, jobKey: jobKey(deliveryId), runAt });
}

/** The delivery has ended (DELIVERED or FAILED): its job, if still queued, is not needed. */
export async function unscheduleDeliveryJob(em: EntityManager, deliveryId: string): Promise<void> {
  await sql(em, 'select graphile_worker.remove_job(?::text)', [jobKey(deliveryId)]);
}

/**
 * In the decision's transaction: one delivery of an approved request on a task. An A2A delivery's
 * job is its fallback (queueFallbackJob); an AG-UI interrupt's answer has none: one resume job
 * carries every answer of its run (agui/resume.ts).
 */
export async function queueDelivery(
  tem: EntityManager,
  decision: { approvalId: string; decisionId: string; now: Date },
): Promise<{ deliveryId: string; messageId: string }> {
  const deliveryId = randomUUID();
  const messageId = deliveryMessageId(decision.decisionId);
  tem.create(Delivery, {
    id: deliveryId,
    approvalId: decision.approvalId,
    decisionId: decision.decisionId,
    status: 'QUEUED',
    attempts: 0,
    attemptsAtQueue: 0,
    claimedUntil: null,
    claimId: null,
    messageId,
    approvalSignature: null,
    lastError: null,
    observedTaskState: null,
    observedAt: null,
    createdAt: decision.now,
    updatedAt: decision.now,
  });
  await tem.flush();
  return { deliveryId, messageId };
}

/**
 * In the decision's transaction, for the delivery the deciding instance sends once it committed:
 * the job that sends it if that never happens (the instance stopped in between), a grace
 * (TASKBAY_DELIVERY_FALLBACK_DELAY) later so that it normally finds the delivery ended and removed.
 */
export async function queueFallbackJob(
  tem: EntityManager,
  config: Pick<Config, 'deliveryMaxAttempts' | 'deliveryFallbackDelaySeconds'>,
  deliveryId: string,
  now: Date,
): Promise<void> {
  await scheduleDeliveryJob(tem, config, deliveryId, new Date(now.getTime() + config.deliveryFallbackDelaySeconds * 1000));
}

/** A reviewer retries a FAILED delivery: same decision, same messageId. */
export async function retryDelivery(em: EntityManager, access: Access, deps: Deps, approvalId: string) {
  return em.transactional(async (tem) => {
    // The grants are read on the transaction's connection: concurrent retries each hold one
    // while they wait, and needing a second would deadlock the pool (decisions/races.test.ts).
    const txAccess = new Access(tem, access.viewer);
    const approval = await authorize(txAccess, 'OPERATE', 'approval', await tem.findOne(ApprovalRequest, { id: approvalId, tenantId: access.viewer.tenantId }));
    // Locked: of concurrent retries exactly one sees FAILED and queues a job.
    const d = await tem.findOne(Delivery, { approvalId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!d || d.status !== 'FAILED') throw new DomainError('BAD_USER_INPUT', 'only a FAILED delivery can be retried');
    d.status = 'QUEUED';
    // A fresh allowance of attempts; `attempts` keeps counting them all.
    d.attemptsAtQueue = d.attempts;
    await tem.flush();
    // An answer another module carries goes again its way (delivery/carriers.ts; AG-UI: the run's
    // whole resume); said here, off the delivery path, so an A2A delivery asks nothing more before
    // its send. A retry is sent by the job alone (no one is waiting on it as on a decision).
    if (carriedElsewhere(approval)) {
      await addJob(tem, DELIVER_JOB, { deliveryId: d.id, resumesRun: true }, { maxAttempts: deps.config.deliveryMaxAttempts });
    } else {
      await scheduleDeliveryJob(tem, deps.config, d.id, new Date());
    }
    await appendEvents(tem, [
      {
        tenantId: approval.tenantId,
        stream: stream.approval(approval.id),
        type: 'delivery.retried',
        actor: { type: 'user', id: access.viewer.userId },
        data: { approvalId, agentId: approval.agentId, taskId: approval.taskId, deliveryId: d.id },
      },
    ]);
    return approval;
  });
}
