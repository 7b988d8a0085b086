import type { EntityManager } from '@mikro-orm/postgresql';
import { MEDIA_TYPE } from '../a2a/extensions.js';
import type { Message } from '../a2a/types.js';
import type { AgentCard } from '../a2a/types.js';
import { recordAgentFailure } from '../agents/service.js';
import type { ApprovalAction } from '../approvals/digest.js';
import { appendEvents, stream, SYSTEM } from '../audit/log.js';
import { sql } from '../db/sql.js';
import { storable } from '../db/storable.js';
import type { Deps } from '../deps.js';
import type { JobDefinition } from '../jobs/job.js';
import { recordObservation } from '../tasks/observe.js';
import { sendToAgent } from '../tasks/service.js';
import { Delivery } from './entities.js';
import { DELIVER_JOB } from './queue.js';
import { aguiRunOfDelivery, retryResume } from './agui-resume.js';

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

/** What one attempt needs: the delivery, its request and task, and the agent's latest card. */
interface AttemptRow {
  decision_id: string;
  message_id: string;
  approval_id: string | null;
  tenant_id: string;
  approval_agent_id: string | null;
  task_id: string | null;
  action: ApprovalAction;
  revision: number;
  digest: string;
  agent_id: string;
  skill_id: string | null;
  remote_task_id: string | null;
  context_id: string | null;
  card: AgentCard | null;
  approval_signature: string | null;
  created_at: Date;
}

/**
 * Counts the attempt and reads what the message is made of, in one statement: it sits between
 * the decision and the agent receiving it. Null when the delivery is gone or already DELIVERED.
 */
async function beginAttempt(em: EntityManager, deliveryId: string): Promise<AttemptRow | null> {
  const [row] = await sql<AttemptRow>(
    em,
    `with d as (
       update delivery set attempts = attempts + 1, updated_at = now()
        where id = ? and status <> 'DELIVERED'
        returning approval_id, decision_id, message_id, approval_signature, created_at)
     select d.decision_id, d.message_id, d.approval_signature, d.created_at, a.id as approval_id, a.tenant_id, a.agent_id as approval_agent_id, a.task_id,
            a.action, a.revision, a.digest, t.agent_id, t.skill_id, t.remote_task_id, t.context_id,
            (select card from card_snapshot where agent_id = t.agent_id order by number desc limit 1) as card
       from d left join approval a on a.id = d.approval_id left join task t on t.id = a.task_id`,
    [deliveryId],
  );
  if (row && (!row.approval_id || !row.task_id)) throw new Error(`delivery ${deliveryId}: its request or task is missing`);
  return row ?? null;
}

/** One attempt. Throws to let the queue retry with backoff, until the last attempt fails it. */
export async function deliver(em: EntityManager, deps: Deps, deliveryId: string, attempt: number, maxAttempts: number) {
  const row = await beginAttempt(em, deliveryId);
  if (!row) return;
  const approval = { id: row.approval_id!, tenantId: row.tenant_id, agentId: row.approval_agent_id, taskId: row.task_id! };
  const task = { id: row.task_id!, agentId: row.agent_id, skillId: row.skill_id };
  const delivery = { decisionId: row.decision_id, messageId: row.message_id };
  const signed = { requestId: approval.id, decisionId: delivery.decisionId, revision: row.revision, revisionDigest: row.digest };
  // Signed at the first attempt and stored with that attempt's outcome (after the send, in the
  // transaction that records it, so no statement stands between the decision and the agent):
  // every later attempt sends the same signature, across a key rotation too. The signature is
  // deterministic (Ed25519, iat the decision's time), so an attempt that ended before storing it
  // (a crash mid-send) is signed the same way again unless the key was rotated meanwhile.
  const signature = row.approval_signature ?? (await deps.approvalKeys.sign({ ...signed, taskId: row.remote_task_id ?? null }, new Date(row.created_at)));
  const message = approvedMessage(
    row.action,
    { ...signed, signature },
    { messageId: delivery.messageId, taskId: row.remote_task_id ?? undefined, contextId: row.context_id ?? undefined },
  );
  const routing = { approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, deliveryId, decisionId: delivery.decisionId };
  try {
    if (!row.card) throw new Error('agent card missing');
    const result = await sendToAgent(deps, row.card, message, task.skillId ?? null);
    await em.transactional(async (tem) => {
      const observed = await recordObservation(tem, deps.config, task.id, { sent: message, result });
      const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true });
      d.status = 'DELIVERED';
      d.lastError = null;
      d.approvalSignature ??= signature;
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
      d.approvalSignature ??= signature;
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
    const { deliveryId, resumesRun } = payload as { deliveryId: string; resumesRun?: boolean };
    const em = orm.em.fork();
    // An AG-UI interrupt's answer goes with its run's resume (a reviewer's retry lands here, marked by retryDelivery).
    const aguiRun = resumesRun ? await aguiRunOfDelivery(em, deliveryId) : null;
    if (aguiRun) return retryResume(em, deps, aguiRun, helpers.job.attempts, helpers.job.max_attempts);
    await deliver(em, deps, deliveryId, helpers.job.attempts, helpers.job.max_attempts);
  },
};
