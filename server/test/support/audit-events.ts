import { randomUUID } from 'node:crypto';
import { SYSTEM, type AuditEventInput } from '../../src/audit/log.js';

// Events that tests append through the product's writer when what matters is that there are
// events (chains, seqs, publication), not what they say. appendEvents takes only what the
// catalogue declares (audit/catalogue.ts), so these are declared events with payloads that
// match, chosen for having no consequence: no webhook, metric or subscription reacts to them
// beyond the stream's own.

/** An observation of a task nobody follows, in `taskStream` (stream.task(<id>)). */
export function taskEventIn(tenantId: string, taskStream: string): AuditEventInput<'task.observed'> {
  const taskId = taskStream.slice('task:'.length);
  return {
    tenantId,
    stream: taskStream,
    type: 'task.observed',
    actor: SYSTEM,
    data: { taskId, agentId: randomUUID(), state: 'TASK_STATE_WORKING', previousState: 'TASK_STATE_WORKING', messages: [] },
  };
}

/** A sign-in of nobody, in `tenantStream` (stream.tenant(<id>)). */
export function tenantEventIn(tenantId: string, tenantStream: string): AuditEventInput<'session.created'> {
  return { tenantId, stream: tenantStream, type: 'session.created', actor: SYSTEM, data: { userId: randomUUID() } };
}
