import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TERMINAL_STATES, type StreamEvent } from '../a2a/types.js';
import { A2AError, parseStreamEvent, parseTask } from '../a2a/client.js';
import type { Route } from '../http/route.js';
import { readJsonBody, sendJson } from '../http/json.js';
import { isUuid } from '../lib/untrusted.js';
import { Task, TaskMessage, TaskStatusEntry } from './entities.js';
import { ObservationError, recordStreamEvent } from './observe.js';
import { hashPushToken } from './service.js';
import { unstorableReason } from '../db/storable.js';

// The push-notification receiver (docs/ARCHITECTURE.md "The flow" 2): POST /a2a/push/<local task id>, with
// the per-task secret token Taskbay handed the agent in taskPushNotificationConfig, sent back in
// X-A2A-Notification-Token. The body is an A2A v1.0 StreamResponse ({ task } | { statusUpdate } |
// { message } | { artifactUpdate }) or a bare Task. Accepted updates are stored as observations
// exactly like replies (approval detection included). A wrong token, unknown task or malformed
// body gets a 4xx and changes nothing.

export const PUSH_BODY_MAX_BYTES = 1024 * 1024;
const TOKEN_HEADER = 'x-a2a-notification-token';

function tokenOf(headers: Record<string, string | string[] | undefined>): string | null {
  const raw = headers[TOKEN_HEADER];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (typeof v === 'string' && v.length > 0) return v;
  const auth = headers.authorization;
  const a = Array.isArray(auth) ? auth[0] : auth;
  const m = typeof a === 'string' ? /^Bearer\s+(\S+)$/i.exec(a) : null;
  return m ? m[1]! : null;
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

function parsePush(body: unknown): StreamEvent {
  try {
    return parseStreamEvent(body);
  } catch (e) {
    // A bare Task (what pre-1.0 agents push).
    if (body && typeof body === 'object' && 'status' in body && 'id' in body) return { task: parseTask(body) };
    throw e;
  }
}

function remoteIdOf(event: StreamEvent): string | null {
  if ('task' in event) return event.task.id;
  if ('statusUpdate' in event) return event.statusUpdate.taskId;
  if ('artifactUpdate' in event) return event.artifactUpdate.taskId;
  return event.message.taskId ?? null;
}

/**
 * Answers without reading the body and closes the connection once the answer is out, so a
 * refused sender cannot make the server read (and discard) a large body.
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, error: string): void {
  res.once('finish', () => req.destroy());
  sendJson(res, status, { error }, { connection: 'close' });
}

const notFollowed = (reason: string) => `Taskbay stopped following the task: ${reason}`;

export const pushRoute: Route = {
  method: 'POST',
  path: /^\/a2a\/push\/([^/]*)$/,
  async handler(req, res, ctx, [taskId]) {
    // The token is checked before a byte of the body is read.
    if (!isUuid(taskId!)) return refuse(req, res, 404, 'unknown task');
    const em = ctx.orm.em.fork();
    const task = await em.findOne(Task, { id: taskId!.toLowerCase() });
    if (!task || !task.pushTokenHash) return refuse(req, res, 404, 'unknown task');
    const token = tokenOf(req.headers);
    if (!token || !sameHash(hashPushToken(token), task.pushTokenHash)) return refuse(req, res, 401, 'wrong or missing notification token');
    const body = await readJsonBody(req, PUSH_BODY_MAX_BYTES);
    if (!body.ok) return body.tooLarge ? refuse(req, res, 413, body.error) : sendJson(res, 400, { error: body.error });
    // Postgres text cannot hold U+0000 or a lone surrogate. A reply carrying one is stored with
    // U+FFFD (it cannot be refused); a push can be, so its sender learns of it and nothing changes.
    const unstorable = unstorableReason(body.value);
    if (unstorable) return sendJson(res, 400, { error: `the push cannot be stored: ${unstorable}` });
    let event: StreamEvent;
    try {
      event = parsePush(body.value);
    } catch (e) {
      return sendJson(res, 400, { error: e instanceof A2AError ? e.message : 'malformed push' });
    }
    const remoteId = remoteIdOf(event);
    if (task.remoteTaskId && remoteId && remoteId !== task.remoteTaskId) {
      return sendJson(res, 400, { error: 'the update names another task' });
    }
    // An ended task stays ended: a late or replayed update cannot reopen it.
    if (task.limitReason != null) return sendJson(res, 409, { error: notFollowed(task.limitReason) });
    if (TERMINAL_STATES.includes(task.state)) return sendJson(res, 409, { error: `the task is ${task.state}` });
    // A replayed older update (its status message is stored, but the task has moved on since)
    // is acknowledged and ignored, so it cannot move the task back.
    const statusMessageId =
      'task' in event ? event.task.status.message?.messageId : 'statusUpdate' in event ? event.statusUpdate.status.message?.messageId : undefined;
    if (statusMessageId) {
      const known = await em.count(TaskMessage, { taskId: task.id, messageId: statusMessageId });
      const [latest] = await em.find(TaskStatusEntry, { taskId: task.id }, { orderBy: { at: 'desc' }, limit: 1 });
      if (known > 0 && latest && latest.messageId !== statusMessageId) return sendJson(res, 200, { ok: true, ignored: 'stale update' });
    }
    try {
      const observed = await recordStreamEvent(em, ctx.deps.config, task.id, event);
      // What fit within the task's limits was stored; the sender learns that nothing more will be.
      if (observed.limitReason != null) return sendJson(res, 409, { error: notFollowed(observed.limitReason) });
      return sendJson(res, 200, { ok: true, state: observed.state });
    } catch (e) {
      if (e instanceof ObservationError) return sendJson(res, 400, { error: e.message });
      throw e;
    }
  },
};
