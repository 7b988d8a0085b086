import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { A2ATaskState, Part } from '../a2a/types.js';

export const Task = defineEntity({
  name: 'Task',
  tableName: 'task',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    agentId: p.uuid(),
    skillId: p.text().nullable(),
    remoteTaskId: p.text().nullable(),
    contextId: p.text().nullable(),
    state: p.text().$type<A2ATaskState>(),
    createdById: p.uuid().nullable(),
    /** The last step sequence handed out; messages are numbered from 1 per task. */
    lastStepSeq: p.integer().default(0),
    /** SHA-256 hex of the per-task push token handed to the agent; null when no push config was sent. */
    pushTokenHash: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const TaskStatusEntry = defineEntity({
  name: 'TaskStatusEntry',
  tableName: 'task_status',
  properties: {
    id: p.uuid().primary(),
    taskId: p.uuid(),
    state: p.text().$type<A2ATaskState>(),
    messageId: p.text().nullable(),
    at: p.datetime().onCreate(() => new Date()),
  },
});

export const TaskMessage = defineEntity({
  name: 'TaskMessage',
  tableName: 'task_message',
  properties: {
    id: p.uuid().primary(),
    taskId: p.uuid(),
    stepSeq: p.integer(),
    messageId: p.text(),
    role: p.text(),
    parts: p.json<Part[]>(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    /** The valid structured form this agent message asks for (seed 003), when the card advertised the extension. */
    form: p.json<Record<string, unknown>>().nullable(),
    /** The A2UI v0.9 envelopes of this agent message, when the card advertised A2UI. */
    a2ui: p.json<unknown[]>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type TaskRow = InferEntity<typeof Task>;
export type TaskMessageRow = InferEntity<typeof TaskMessage>;
export type TaskStatusRow = InferEntity<typeof TaskStatusEntry>;

/**
 * A person's reply that must reach the agent once: `replyKey` is `message:<agent message id>`
 * for the answer to a form or A2UI surface, `client:<key>` for a free-text reply sent with an
 * idempotency key. Written before the send, removed when the send fails.
 */
export const TaskReply = defineEntity({
  name: 'TaskReply',
  tableName: 'task_reply',
  properties: {
    id: p.uuid().primary(),
    taskId: p.uuid(),
    replyKey: p.text(),
    /** The A2A messageId sent, derived from the task, the key and the parts (`replyMessageId`). */
    messageId: p.text(),
    createdById: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
