import { randomUUID } from 'node:crypto';
import { sha256Hex, uuidFromDigest } from '../lib/hashing.js';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AGUI_KEY_PREFIX, ApprovalRequest } from '../approvals/entities.js';
import { appendEvents, stream } from '../audit/log.js';
import { Access } from '../auth/access.js';
import { authorize } from '../auth/visibility.js';
import type { Config } from '../config.js';
import { addJob } from '../db/sql.js';
import type { Deps } from '../deps.js';
import { DomainError } from '../errors.js';
import { Delivery } from './entities.js';

// Queueing a delivery: on approval (inside the decision's transaction, decisions/service.ts) and
// again when a reviewer retries a FAILED one. worker.ts runs the job.

export const DELIVER_JOB = 'deliver_approval';

/** The A2A messageId of a delivery: derived from the decision, so a retry is the same message. */
export function deliveryMessageId(decisionId: string): string {
  return uuidFromDigest(sha256Hex(`taskbay-delivery:${decisionId}`));
}

/** In the decision's transaction: one delivery of an approved request on a task, and its job (one per delivery: job key). */
export async function queueDelivery(
  tem: EntityManager,
  config: Pick<Config, 'deliveryMaxAttempts'>,
  decision: { approvalId: string; decisionId: string; now: Date },
  opts: { job?: boolean } = {},
): Promise<{ deliveryId: string; messageId: string }> {
  const deliveryId = randomUUID();
  const messageId = deliveryMessageId(decision.decisionId);
  tem.create(Delivery, {
    id: deliveryId,
    approvalId: decision.approvalId,
    decisionId: decision.decisionId,
    status: 'QUEUED',
    attempts: 0,
    messageId,
    approvalSignature: null,
    lastError: null,
    observedTaskState: null,
    observedAt: null,
    createdAt: decision.now,
    updatedAt: decision.now,
  });
  await tem.flush();
  // job: false for an AG-UI interrupt's answer: one resume job carries every answer of its run (delivery/agui-resume.ts).
  if (opts.job !== false) await addJob(tem, DELIVER_JOB, { deliveryId }, { maxAttempts: config.deliveryMaxAttempts, jobKey: `deliver:${deliveryId}` });
  return { deliveryId, messageId };
}

/** A reviewer retries a FAILED delivery: same decision, same messageId. */
export async function retryDelivery(em: EntityManager, access: Access, deps: Deps, approvalId: string) {
  return em.transactional(async (tem) => {
    // The grants are read on the transaction's connection: concurrent retries each hold one
    // while they wait, and needing a second would deadlock the pool (races.test.ts).
    const txAccess = new Access(tem, access.viewer);
    const approval = await authorize(txAccess, 'OPERATE', 'approval', await tem.findOne(ApprovalRequest, { id: approvalId, tenantId: access.viewer.tenantId }));
    // Locked: of concurrent retries exactly one sees FAILED and queues a job.
    const d = await tem.findOne(Delivery, { approvalId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!d || d.status !== 'FAILED') throw new DomainError('BAD_USER_INPUT', 'only a FAILED delivery can be retried');
    d.status = 'QUEUED';
    await tem.flush();
    // An AG-UI interrupt's answer goes again with its run's whole resume (delivery/agui-resume.ts);
    // said here, off the delivery path, so an A2A delivery asks nothing more before its send.
    const resumesRun = !!approval.key?.startsWith(AGUI_KEY_PREFIX);
    await addJob(tem, DELIVER_JOB, { deliveryId: d.id, ...(resumesRun ? { resumesRun } : {}) }, { maxAttempts: deps.config.deliveryMaxAttempts });
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
