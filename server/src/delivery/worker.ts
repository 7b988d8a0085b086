import type { EntityManager } from '@mikro-orm/postgresql';
import { MEDIA_TYPE } from '../a2a/extensions.js';
import type { Message } from '../a2a/types.js';
import { latestSnapshot, recordAgentFailure } from '../agents/service.js';
import type { ApprovalAction } from '../approvals/digest.js';
import { ApprovalRequest } from '../approvals/entities.js';
import { appendEvents, stream, SYSTEM } from '../audit/log.js';
import { storable } from '../db/storable.js';
import type { Deps } from '../deps.js';
import type { JobDefinition } from '../jobs/job.js';
import { Task } from '../tasks/entities.js';
import { recordObservation } from '../tasks/observe.js';
import { sendToAgent } from '../tasks/service.js';
import { Delivery } from './entities.js';
import { DELIVER_JOB } from './queue.js';
import { log } from '../log.js';

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

/** One attempt. Throws to let the queue retry with backoff, until the last attempt fails it. */
export async function deliver(em: EntityManager, deps: Deps, deliveryId: string, attempt: number, maxAttempts: number) {
  const delivery = await em.findOne(Delivery, { id: deliveryId });
  if (!delivery || delivery.status === 'DELIVERED') return;
  const approval = await em.findOneOrFail(ApprovalRequest, { id: delivery.approvalId });
  const task = await em.findOneOrFail(Task, { id: approval.taskId! });
  const snapshot = await latestSnapshot(em, task.agentId);
  const signed = { requestId: approval.id, decisionId: delivery.decisionId, revision: approval.revision, revisionDigest: approval.digest };
  delivery.approvalSignature ??= await deps.approvalKeys.sign({ ...signed, taskId: task.remoteTaskId ?? null }, delivery.createdAt);
  const message = approvedMessage(
    approval.action,
    { ...signed, signature: delivery.approvalSignature },
    { messageId: delivery.messageId, taskId: task.remoteTaskId ?? undefined, contextId: task.contextId ?? undefined },
  );
  delivery.attempts += 1;
  await em.flush();
  const routing = { approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, deliveryId, decisionId: delivery.decisionId };
  try {
    if (!snapshot) throw new Error('agent card missing');
    const result = await sendToAgent(deps, snapshot.card, message, task.skillId ?? null);
    await em.transactional(async (tem) => {
      const observed = await recordObservation(tem, deps.config, task.id, { sent: message, result });
      const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true });
      d.status = 'DELIVERED';
      d.lastError = null;
      d.observedTaskState = observed.state;
      d.observedAt = new Date();
      await tem.flush();
      await appendEvents(tem, [
        {
          tenantId: approval.tenantId,
          stream: stream.approval(approval.id),
          type: 'delivery.delivered',
          actor: SYSTEM,
          latencyFrom: d.createdAt,
          data: { ...routing, messageId: d.messageId, attempts: d.attempts, observedTaskState: observed.state },
        },
      ]);
    });
  } catch (e) {
    // Reviewers see the classified message (an A2AError's never holds what the agent answered);
    // admins read the upstream detail on the agent.
    await recordAgentFailure(em, task.agentId, e);
    const error = storable((e as Error).message?.slice(0, 2000) || String(e));
    const last = attempt >= maxAttempts;
    await em.transactional(async (tem) => {
      const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true });
      d.lastError = error;
      if (last) d.status = 'FAILED';
      await tem.flush();
      if (last) {
        await appendEvents(tem, [
          {
            tenantId: approval.tenantId,
            stream: stream.approval(approval.id),
            type: 'delivery.failed',
            actor: SYSTEM,
            data: { ...routing, attempts: d.attempts, error },
          },
        ]);
      }
    });
    if (!last) throw e;
  }
}

export const deliverJob: JobDefinition = {
  name: DELIVER_JOB,
  async run(payload, helpers, { orm, deps }) {
    const { deliveryId } = payload as { deliveryId: string };
    await deliver(orm.em.fork(), deps, deliveryId, helpers.job.attempts, helpers.job.max_attempts);
  },
};
