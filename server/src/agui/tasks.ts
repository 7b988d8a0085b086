import { randomUUID } from 'node:crypto';
import type { Message as AgUiMessage } from '@ag-ui/core';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgUiError } from './protocol/client.js';
import type { AgentRow } from '../agents/entities.js';
import type { Deps } from '../deps.js';
import { badInput, DomainError } from '../errors.js';
import { AgUiRun } from './entities.js';
import { runAndRecord, runInput } from './run.js';
import { Task, type TaskRow } from '../tasks/entities.js';
import { requireOpen, type TaskTransport } from '../tasks/module.js';

// Tasks of AG-UI agents (docs/AG-UI.md): a task is one AG-UI thread (its id is the thread id,
// kept as the task's remote id and context). Starting the task starts the first run with the
// person's message; a later message starts the next run on the thread, with the conversation so
// far, unless the last run is waiting for its interrupts to be answered (AG-UI 1.0: pending
// interrupts block new input; only the resume continues the thread).

function userMessage(text: string | null | undefined, data: unknown): AgUiMessage {
  const parts: string[] = [];
  if (text) parts.push(text);
  if (data !== undefined && data !== null) parts.push(JSON.stringify(data));
  if (!parts.length) throw badInput('a message needs text or data');
  return { id: randomUUID(), role: 'user', content: parts.join('\n\n') };
}

function refused(e: unknown): never {
  if (e instanceof AgUiError)
    throw new DomainError('BAD_USER_INPUT', `the agent did not accept the run: ${e.message}`, { reason: 'AGENT_ERROR', failure: e.kind });
  throw e;
}

export async function startAgUiTask(
  em: EntityManager,
  deps: Deps,
  viewer: { tenantId: string; userId: string },
  agent: AgentRow,
  input: { skillId: string | null; text?: string | null; data?: unknown; formValues?: unknown },
) {
  if (input.skillId) throw badInput('an AG-UI agent has no skills');
  if (input.formValues !== undefined && input.formValues !== null) throw badInput('an AG-UI agent offers no start form');
  const message = userMessage(input.text, input.data);
  const taskId = randomUUID();
  const threadId = taskId;
  const task = await em.transactional(async (tem) => {
    const row = tem.create(Task, {
      id: taskId,
      tenantId: viewer.tenantId,
      agentId: agent.id,
      skillId: null,
      remoteTaskId: threadId,
      contextId: threadId,
      state: 'TASK_STATE_SUBMITTED',
      createdById: viewer.userId,
      lastStepSeq: 0,
      pushTokenHash: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    await tem.flush();
    return row;
  });
  try {
    await runAndRecord(em, deps, agent, task, runInput(threadId, randomUUID(), [message], {}), null);
  } catch (e) {
    // A refused start stores nothing, as for an A2A agent.
    await em.fork().transactional(async (tem) => {
      const row = await tem.findOne(Task, { id: taskId, lastStepSeq: 0 }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (row) tem.remove(row);
    });
    refused(e);
  }
  return em.findOneOrFail(Task, { id: taskId }, { refresh: true });
}

/** The person's next message on the thread: a new run with the conversation so far. */
export async function continueAgUiTask(em: EntityManager, deps: Deps, agent: AgentRow, task: TaskRow, input: { text?: string | null; data?: unknown }) {
  const message = userMessage(input.text, input.data);
  const [last] = await em.find(AgUiRun, { taskId: task.id }, { orderBy: { createdAt: 'desc' }, limit: 1, refresh: true });
  if (last?.status === 'INTERRUPTED' && last.resumeStatus !== 'DELIVERED') {
    throw badInput('the agent is waiting for its interrupts to be answered: decide the open requests first');
  }
  const messages = [...((last?.messages as AgUiMessage[] | undefined) ?? []), message];
  await runAndRecord(em, deps, agent, task, runInput(task.remoteTaskId!, randomUUID(), messages, last?.state ?? {}), null).catch(refused);
  return em.findOneOrFail(Task, { id: task.id }, { refresh: true });
}

/** How an AG-UI agent's tasks go (tasks/transports.ts). */
export const aguiTransport: TaskTransport = {
  start: startAgUiTask,
  async send(em, deps, agent, task, input) {
    if (input.idempotencyKey != null) throw badInput('idempotencyKey is not offered for AG-UI agents');
    requireOpen(task);
    return continueAgUiTask(em, deps, agent, task, input);
  },
};
