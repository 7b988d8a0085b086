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
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type TaskRow = InferEntity<typeof Task>;
export type TaskMessageRow = InferEntity<typeof TaskMessage>;
export type TaskStatusRow = InferEntity<typeof TaskStatusEntry>;
