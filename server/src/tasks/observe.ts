import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { advertises } from '../a2a/card.js';
import { A2UI_EXTENSION, MEDIA_TYPE, STRUCTURED_FORM_EXTENSION } from '../a2a/extensions.js';
import { TERMINAL_STATES, type AgentCard, type Message, type Part, type SendMessageResult, type StreamEvent, type Task as A2ATask } from '../a2a/types.js';
import { parseA2uiEnvelopes } from '../forms/a2ui.js';
import { parseFormDefinition } from '../forms/form-subset.js';
import { latestSnapshot } from '../agents/module.js';
import { appendEvents, stream, SYSTEM, type AuditEventInput } from '../audit/module.js';
import type { Config } from '../config.js';
import { inputRequired, messagesStored, taskAnswered, taskEnded } from './observation-hooks.js';
import { Task, TaskMessage, TaskStatusEntry, type TaskRow } from './entities.js';
import { violatedConstraint } from '../db/constraint.js';
import { storable } from '../db/storable.js';
import { jsonBytes, TASK_LIMITS } from '../limits.js';

// Observation: everything an agent returns is stored first (task state, status history,
// messages numbered per task from 1); then the later steps of the data path look at it through
// their hooks (tasks/observation-hooks.ts: approval detection, delivery outcomes, evidence). Nothing in the agent's content can fail the observation.
// What a task keeps is bounded (TASK_LIMITS): what would go over a limit is not stored, the task
// ends (FAILED, with the reason, `limitReason`) and Taskbay follows it no further: what was
// stored before stays as it was.

export interface Observation {
  /** The message Taskbay sent, stored with the agent's answer (absent for pushes). */
  sent?: Message;
  result: SendMessageResult | { task: A2ATask };
}

export class ObservationError extends Error {}

/** Stores one observation of a task and runs approval detection; inside one transaction. */
export async function recordObservation(em: EntityManager, config: Config, localTaskId: string, observation: Observation) {
  // Agent content is stored even when it carries characters Postgres cannot hold.
  const obs = storable(observation);
  return em.transactional(async (tem) => {
    // Serialises observations of one task: step numbers and state stay in order.
    const task = await tem.findOneOrFail(Task, { id: localTaskId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (task.limitReason != null) return task;
    const incoming: Message[] = [];
    if (obs.sent) incoming.push(obs.sent);
    let remote: A2ATask | null = null;
    if ('task' in obs.result) {
      remote = obs.result.task;
      if (task.remoteTaskId && task.remoteTaskId !== remote.id) {
        throw new ObservationError(`agent answered with task ${remote.id}, expected ${task.remoteTaskId}`);
      }
      task.remoteTaskId ??= remote.id;
      task.contextId ??= remote.contextId;
      for (const m of remote.history ?? []) incoming.push(m);
      if (remote.status.message) incoming.push(remote.status.message);
    } else {
      incoming.push(obs.result.message);
    }

    const known = new Set(
      (await tem.find(TaskMessage, { taskId: task.id, messageId: { $in: incoming.map((m) => m.messageId) } }, { fields: ['messageId'] })).map(
        (m) => m.messageId,
      ),
    );
    const stored: { messageId: string; stepSeq: number }[] = [];
    const stepOf = new Map<string, number>();
    const fresh: Message[] = [];
    let card: AgentCard | null | undefined;
    let overLimit: string | null = null;
    for (const m of incoming) {
      if (known.has(m.messageId)) continue;
      known.add(m.messageId);
      let offers: Offers = { form: null, formPartIndex: null, a2ui: null, a2uiPartIndex: null };
      if (m.role === 'ROLE_AGENT') {
        card ??= (await latestSnapshot(tem, task.agentId))?.card ?? null;
        offers = offersOf(m.parts, card);
      }
      const bytes = jsonBytes(m.parts) + jsonBytes(m.metadata ?? null) + jsonBytes(offers.form) + jsonBytes(offers.a2ui);
      overLimit = taskLimitReached(task, bytes);
      if (overLimit) break;
      task.storedBytes += bytes;
      task.lastStepSeq += 1;
      tem.create(TaskMessage, {
        id: randomUUID(),
        taskId: task.id,
        stepSeq: task.lastStepSeq,
        messageId: m.messageId,
        role: m.role,
        parts: m.parts,
        metadata: m.metadata ?? null,
        form: offers.form,
        a2ui: offers.a2ui,
        bytes,
        createdAt: new Date(),
      });
      stored.push({ messageId: m.messageId, stepSeq: task.lastStepSeq });
      fresh.push(m);
      stepOf.set(m.messageId, task.lastStepSeq);
    }

    const previousState = task.state;
    // A2A terminal states are final: an answer sent before the task ended and arriving after it
    // (answers on one task can cross, e.g. a reply recorded after the push that ended the task)
    // is stored, but cannot move the task back, record a delivery outcome or open a request.
    const ended = TERMINAL_STATES.includes(previousState);
    if (remote && !ended && !overLimit) {
      const statusMessageId = remote.status.message?.messageId ?? null;
      if (remote.status.state !== task.state || (statusMessageId && stepOf.has(statusMessageId))) {
        if (task.statusChanges >= TASK_LIMITS.statusChangesMax)
          overLimit = `the agent sent more than ${TASK_LIMITS.statusChangesMax} status changes for the task`;
        else addStatus(tem, task, remote.status.state, statusMessageId);
      }
      if (!overLimit) task.state = remote.status.state;
    }
    if (overLimit) stopFollowingRow(tem, task, overLimit);
    try {
      await tem.flush();
    } catch (e) {
      // The agent named a task id another local task of this agent already has: its answer is
      // refused (a push gets 400), not a server error.
      if (violatedConstraint(e) === 'task_agent_id_remote_task_id_key') {
        throw new ObservationError(`agent answered with task ${remote?.id}, which is another task's`);
      }
      throw e;
    }
    await appendEvents(tem, [
      {
        tenantId: task.tenantId,
        stream: stream.task(task.id),
        type: 'task.observed',
        actor: { type: 'agent', id: task.agentId },
        data: { taskId: task.id, agentId: task.agentId, state: task.state, previousState, messages: stored },
      },
      ...(overLimit ? [limitEvent(task, previousState)] : []),
    ]);

    // What the agent reports executing is its word about an approval, not task state: recorded
    // for the messages stored now, also on an ended task (a report may arrive with the end).
    await messagesStored(tem, task, fresh, card ?? null);

    if (ended) return task;
    if (overLimit) {
      // Nothing is decided for a task Taskbay no longer follows; the delivery outcomes waiting
      // for the agent's word stay waiting (FAILED is Taskbay's, not the agent's).
      await taskEnded(tem, task, task.state);
      return task;
    }
    if (remote) await taskAnswered(tem, task);
    if (remote && TERMINAL_STATES.includes(remote.status.state)) {
      await taskEnded(tem, task, remote.status.state);
    } else if (remote?.status.state === 'TASK_STATE_INPUT_REQUIRED' && remote.status.message?.role === 'ROLE_AGENT') {
      // What this observation already read and stored is not asked again (the card, the step).
      await inputRequired(tem, config, task, remote.status.message, { card, stepSeq: stepOf.get(remote.status.message.messageId) });
    }
    return task;
  });
}

export interface Offers {
  form: Record<string, unknown> | null;
  /** Index in the message's parts of the part `form` was read from; null with `form`. */
  formPartIndex: number | null;
  a2ui: unknown[] | null;
  /** Index in the message's parts of the part `a2ui` was read from; null with `a2ui`. */
  a2uiPartIndex: number | null;
}

/**
 * What an agent message offers the console (seed 003): the first valid structured form and the
 * first valid A2UI envelope array, each only when the card advertises its extension, with the
 * index of the part each was read from. Every other part stays ordinary data; nothing here throws.
 */
export function offersOf(parts: Part[], card: AgentCard | null): Offers {
  return chooseOffers(parts, { form: !!card && advertises(card, STRUCTURED_FORM_EXTENSION), a2ui: !!card && advertises(card, A2UI_EXTENSION) });
}

/**
 * The choice offersOf makes, given which extensions the card advertised. The GraphQL
 * TaskMessage reads the part indexes with it from the stored parts (a stored form or a2ui
 * says its extension was advertised when the message was observed): one rule, no second copy.
 */
export function chooseOffers(parts: readonly Part[], advertised: { form: boolean; a2ui: boolean }): Offers {
  const offers: Offers = { form: null, formPartIndex: null, a2ui: null, a2uiPartIndex: null };
  if (advertised.form) {
    for (const [i, part] of parts.entries()) {
      if (part.mediaType !== MEDIA_TYPE.form) continue;
      const r = parseFormDefinition(part.data);
      if (r.ok) {
        offers.form = r.form as unknown as Record<string, unknown>;
        offers.formPartIndex = i;
        break;
      }
    }
  }
  if (advertised.a2ui) {
    for (const [i, part] of parts.entries()) {
      if (part.mediaType !== MEDIA_TYPE.a2ui) continue;
      const envelopes = parseA2uiEnvelopes(part.data);
      if (envelopes) {
        offers.a2ui = envelopes;
        offers.a2uiPartIndex = i;
        break;
      }
    }
  }
  return offers;
}

/** Why storing one more message of `bytes` would take the task over TASK_LIMITS; null when it fits. */
function taskLimitReached(task: TaskRow, bytes: number): string | null {
  if (task.lastStepSeq >= TASK_LIMITS.messagesMax) return `the agent sent more than ${TASK_LIMITS.messagesMax} messages for the task`;
  if (task.storedBytes + bytes > TASK_LIMITS.bytesMax) return `the agent sent more than ${TASK_LIMITS.bytesMax} bytes of messages for the task`;
  return null;
}

function addStatus(tem: EntityManager, task: TaskRow, state: TaskRow['state'], messageId: string | null) {
  tem.create(TaskStatusEntry, { id: randomUUID(), taskId: task.id, state, messageId, at: new Date() });
  task.statusChanges += 1;
}

/** Marks the task (locked, not yet flushed) as no longer followed: an open task ends FAILED. */
function stopFollowingRow(tem: EntityManager, task: TaskRow, reason: string) {
  task.limitReason = reason;
  if (TERMINAL_STATES.includes(task.state)) return;
  addStatus(tem, task, 'TASK_STATE_FAILED', null);
  task.state = 'TASK_STATE_FAILED';
}

/** The audit event of a task Taskbay stopped following (after stopFollowingRow). */
function limitEvent(task: TaskRow, previousState: TaskRow['state']): AuditEventInput<'task.limit_reached'> {
  return {
    tenantId: task.tenantId,
    stream: stream.task(task.id),
    type: 'task.limit_reached',
    actor: SYSTEM,
    data: { taskId: task.id, agentId: task.agentId, reason: task.limitReason, state: task.state, previousState },
  };
}

/**
 * Taskbay stops following a task because the agent went over a limit outside an observation (a
 * stream it ended: A2A_STREAM_LIMITS): what was stored stays, the task ends FAILED with the
 * reason (an ended task keeps its state) and nothing more the agent sends for it is stored.
 */
export async function stopFollowing(em: EntityManager, localTaskId: string, reason: string): Promise<TaskRow> {
  return em.transactional(async (tem) => {
    const task = await tem.findOneOrFail(Task, { id: localTaskId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (task.limitReason != null) return task;
    const previousState = task.state;
    stopFollowingRow(tem, task, storable(reason));
    await tem.flush();
    await appendEvents(tem, [limitEvent(task, previousState)]);
    if (!TERMINAL_STATES.includes(previousState)) await taskEnded(tem, task, task.state);
    return task;
  });
}

/**
 * One event of a stream, a resubscription or a push (A2A v1.0 StreamResponse), stored as an
 * observation exactly like a SendMessage answer. A status update is the task with that status;
 * an artifact update is not stored (Taskbay keeps no artifacts) but still proves the task lives.
 */
export async function recordStreamEvent(em: EntityManager, config: Config, localTaskId: string, event: StreamEvent, sent?: Message) {
  let result: SendMessageResult;
  if ('task' in event) result = { task: event.task };
  else if ('message' in event) result = { message: event.message };
  else if ('statusUpdate' in event) {
    const u = event.statusUpdate;
    result = { task: { id: u.taskId, contextId: u.contextId, status: u.status } };
  } else {
    const task = await em.findOneOrFail(Task, { id: localTaskId }, { refresh: true });
    if (task.remoteTaskId && task.remoteTaskId !== event.artifactUpdate.taskId) {
      throw new ObservationError(`agent answered with task ${event.artifactUpdate.taskId}, expected ${task.remoteTaskId}`);
    }
    if (!sent) return task;
    result = { message: sent };
    return recordObservation(em, config, localTaskId, { result });
  }
  return recordObservation(em, config, localTaskId, sent ? { sent, result } : { result });
}
