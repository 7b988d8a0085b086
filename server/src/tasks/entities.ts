import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { A2ATaskState, Part } from '../a2a/types.js';
import { Agent } from '../agents/entities.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';

export const Task = defineEntity({
  name: 'Task',
  tableName: 'task',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    agentId: manyToOneId(Agent, 'agent_id'),
    skillId: p.text().nullable(),
    remoteTaskId: p.text().nullable(),
    contextId: p.text().nullable(),
    state: p.text().$type<A2ATaskState>(),
    createdById: manyToOneId(User, 'created_by_id').nullable(),
    /** The last step sequence handed out; messages are numbered from 1 per task. */
    lastStepSeq: p.integer().default(0),
    /** Bytes of the messages stored (the sum of their `bytes`), against TASK_LIMITS.bytesMax. */
    storedBytes: p.integer().default(0),
    /** Status changes stored, against TASK_LIMITS.statusChangesMax. */
    statusChanges: p.integer().default(0),
    /**
     * Why Taskbay stopped following the task (a stream or task limit the agent went over); null
     * while it follows it. Once set, nothing the agent sends for the task is stored.
     */
    limitReason: p.text().nullable(),
    /** SHA-256 hex of the per-task push token handed to the agent; null when no push config was sent. */
    pushTokenHash: p.text().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['agentId', 'remoteTaskId'] }],
  indexes: [{ name: 'task_tenant_created', expression: 'create index task_tenant_created on task (tenant_id, created_at desc)' }],
});

export const TaskStatusEntry = defineEntity({
  name: 'TaskStatusEntry',
  tableName: 'task_status',
  properties: {
    id: p.uuid().primary(),
    taskId: manyToOneId(Task, 'task_id'),
    state: p.text().$type<A2ATaskState>(),
    messageId: p.text().nullable(),
    at: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  indexes: [{ name: 'task_status_task', properties: ['taskId', 'at'] }],
});

export const TaskMessage = defineEntity({
  name: 'TaskMessage',
  tableName: 'task_message',
  properties: {
    id: p.uuid().primary(),
    taskId: manyToOneId(Task, 'task_id'),
    stepSeq: p.integer(),
    messageId: p.text(),
    role: p.text(),
    parts: p.json<Part[]>(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    /** The valid structured form this agent message asks for (seed 003), when the card advertised the extension. */
    form: p.json<Record<string, unknown>>().nullable(),
    /** The A2UI v0.9 envelopes of this agent message, when the card advertised A2UI. */
    a2ui: p.json<unknown[]>().nullable(),
    /** UTF-8 bytes of the JSON of parts, metadata, form and a2ui: what reading the message costs. */
    bytes: p.integer(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['taskId', 'messageId'] }, { properties: ['taskId', 'stepSeq'] }],
  checks: [{ property: 'stepSeq', expression: 'step_seq >= 1' }],
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
    /** Removed with its task (`on delete cascade`). */
    taskId: manyToOneId(Task, 'task_id').deleteRule('cascade'),
    replyKey: p.text(),
    /** The A2A messageId sent, derived from the task, the key and the parts (`replyMessageId`). */
    messageId: p.text(),
    createdById: manyToOneId(User, 'created_by_id').nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['taskId', 'replyKey'] }],
});
