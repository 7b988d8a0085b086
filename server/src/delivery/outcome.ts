import type { EntityManager } from '@mikro-orm/postgresql';
import type { A2ATaskState } from '../a2a/types.js';
import { ApprovalRequest } from '../approvals/entities.js';
import { appendEvents, stream, SYSTEM } from '../audit/module.js';
import type { TaskRow } from '../tasks/entities.js';
import { Delivery } from './entities.js';

// A delivery records the task state observed after it (docs/ARCHITECTURE.md "The flow" 8). An agent that
// works in the background (push mode, or any long task) answers the delivered message with
// WORKING or SUBMITTED and tells the outcome later: by push, on a stream, or to a GetTask. The
// first later observation of the task with another state is that outcome: it is written on
// every delivery of the task still waiting for one, and recorded in the request's audit stream
// (which also tells approvalChanged subscribers).

/** What an agent answers while it is still working on the delivered message. */
export const OUTCOME_PENDING_STATES: readonly A2ATaskState[] = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'];

/** Inside the observation's transaction, with the task row locked (observations are serialised per task). */
export async function recordDeliveryOutcomes(tem: EntityManager, task: TaskRow): Promise<void> {
  if (OUTCOME_PENDING_STATES.includes(task.state)) return;
  const approvals = await tem.find(ApprovalRequest, { taskId: task.id });
  if (!approvals.length) return;
  const waiting = await tem.find(
    Delivery,
    { approvalId: { $in: approvals.map((a) => a.id) }, status: 'DELIVERED', observedTaskState: { $in: [...OUTCOME_PENDING_STATES] } },
    { refresh: true },
  );
  if (!waiting.length) return;
  const now = new Date();
  const events = waiting.map((d) => {
    const approval = approvals.find((a) => a.id === d.approvalId)!;
    const previous = d.observedTaskState;
    d.observedTaskState = task.state;
    d.observedAt = now;
    return {
      tenantId: approval.tenantId,
      stream: stream.approval(approval.id),
      type: 'delivery.observed',
      actor: SYSTEM,
      data: {
        approvalId: approval.id,
        agentId: approval.agentId,
        taskId: task.id,
        deliveryId: d.id,
        decisionId: d.decisionId,
        messageId: d.messageId,
        observedTaskState: task.state,
        previousObservedTaskState: previous,
      },
    };
  });
  await tem.flush();
  await appendEvents(tem, events);
}
