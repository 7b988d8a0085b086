import type { EntityManager } from '@mikro-orm/postgresql';
import { advertises } from '../a2a/card.js';
import { APPROVAL_REQUEST_EXTENSION } from '../a2a/extensions.js';
import type { AgentCard, Message } from '../a2a/types.js';
import { latestSnapshot } from '../agents/module.js';
import type { ObservationHook } from '../tasks/module.js';
import type { Config } from '../config.js';
import { log } from '../log.js';
import { TaskMessage, type TaskRow } from '../tasks/entities.js';
import { findApprovalRequest } from './request-part.js';
import { agentRequestKey, closeOpenApprovalOfEndedTask, openApproval } from './service.js';

// Approval detection (docs/ARCHITECTURE.md "The flow" 4): what an observation of a task means for
// its requests. An INPUT_REQUIRED status message from the agent may open one; a task that ends
// closes its open one.

/**
 * Seed 000 "What happens", steps 1-4. A failure here never fails the observation. `known`: the
 * agent's latest card when the observation read it already (undefined: not read), and the
 * message's step when the observation stored the message itself.
 */
async function detectApproval(
  tem: EntityManager,
  config: Config,
  task: TaskRow,
  message: Message,
  known: { card: AgentCard | null | undefined; stepSeq: number | undefined },
) {
  const found = findApprovalRequest(message.parts);
  if (!found) return null;
  const card = known.card !== undefined ? known.card : ((await latestSnapshot(tem, task.agentId))?.card ?? null);
  if (!card || !advertises(card, APPROVAL_REQUEST_EXTENSION)) return null;
  const stepSeq =
    known.stepSeq ?? (await tem.find(TaskMessage, { taskId: task.id, messageId: message.messageId }, { fields: ['stepSeq'] }))[0]?.stepSeq ?? null;
  try {
    // A savepoint: a concurrent replay losing the unique key race rolls back only this part.
    return await tem.transactional((sp) =>
      openApproval(
        sp,
        config,
        {
          tenantId: task.tenantId,
          agentId: task.agentId,
          taskId: task.id,
          skillId: task.skillId ?? null,
          sourceMessageId: message.messageId,
          stepSeq,
          requesterId: null,
          actor: { type: 'agent', id: task.agentId },
          source: 'AGENT',
          key: agentRequestKey(task.id, message.messageId, found.request.action),
        },
        found.request,
      ),
    );
  } catch (e) {
    log.warn(`approval detection on task ${task.id} skipped: ${(e as Error).message}`);
    return null;
  }
}

export const approvalDetection: ObservationHook = {
  async inputRequired(tem, config, task, message, known) {
    await detectApproval(tem, config, task, message, known);
  },
  async taskEnded(tem, task, state) {
    await closeOpenApprovalOfEndedTask(tem, task.tenantId, task.id, state);
  },
};
