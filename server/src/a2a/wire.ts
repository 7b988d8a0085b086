import { cloneJson, isPlainObject, own } from '../lib/untrusted.js';
import { APPROVAL_LIMITS, JSON_DEPTH_MAX, jsonBytes } from '../limits.js';
import { truncateDetail, type AgentFailureKind } from '../net/failure.js';
import { MEDIA_TYPE } from './extensions.js';
import { A2A_TASK_STATES } from './types.js';
import type { A2ATaskState, Message, Part, Role, SendMessageResult, StreamEvent, Task, TaskStatus } from './types.js';

// The A2A v1.0 wire objects an agent sends (Message, Task, StreamResponse, SendMessage result),
// validated and copied field by field: every one is untrusted. An error's message says what
// failed and never carries what the agent answered.

/** refused | unreachable | timeout | http_status | invalid_answer, or rpc (the agent answered a JSON-RPC error). */
export type A2AErrorKind = AgentFailureKind;

export class A2AError extends Error {
  readonly kind: A2AErrorKind;
  readonly status?: number;
  readonly rpcCode?: number;
  readonly rpcData?: unknown;
  /** Admin-only: what the agent or the network said (status, start of the body, low-level error). */
  readonly detail?: string;
  constructor(kind: A2AErrorKind, message: string, extra: { status?: number; rpcCode?: number; rpcData?: unknown; detail?: string } = {}) {
    super(message);
    this.name = 'A2AError';
    this.kind = kind;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.rpcCode !== undefined) this.rpcCode = extra.rpcCode;
    if (extra.rpcData !== undefined) this.rpcData = extra.rpcData;
    if (extra.detail !== undefined) this.detail = extra.detail;
  }
}

const ROLES: readonly Role[] = ['ROLE_USER', 'ROLE_AGENT'];
/**
 * Message, task and context ids, in UTF-16 code units (at most 1.5 KB of UTF-8): Taskbay indexes
 * message and task ids, and an index entry holds at most about 2.7 KB, so a longer id would fail
 * the whole observation instead of being refused here.
 */
export const A2A_ID_MAX = 512;

/** A required id: a non-empty string of at most A2A_ID_MAX code units. */
function idOf(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.length === 0) throw invalid(`${where} is missing`);
  if (v.length > A2A_ID_MAX) throw invalid(`${where} is longer than ${A2A_ID_MAX} characters`);
  return v;
}

export function invalid(reason: string): A2AError {
  return new A2AError('invalid_answer', `The agent's response is not valid: ${reason}`);
}

/**
 * A copy of agent JSON, kept exactly: an own `__proto__` key stays a plain data key, because an
 * agent computes digests over its data as sent. Nested over JSON_DEPTH_MAX it is invalid; a part
 * over it is kept as a malformed part (MEDIA_TYPE.malformedPart) whose reason says so.
 */
const copyJson = (v: unknown, where: string): unknown =>
  cloneJson(v, { protoKeys: 'keep', tooDeep: () => invalid(`${where} is nested more than ${JSON_DEPTH_MAX} levels deep`) });

function optString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = own(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${where}.${key} must be a string`);
  return v;
}

function optObject(obj: Record<string, unknown>, key: string, where: string): Record<string, unknown> | undefined {
  const v = own(obj, key);
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw invalid(`${where}.${key} must be an object`);
  return copyJson(v, `${where}.${key}`) as Record<string, unknown>;
}

function parsePart(v: unknown, where: string): Part {
  if (!isPlainObject(v)) throw invalid(`${where} must be an object`);
  const part: Part = {};
  const text = optString(v, 'text', where);
  if (text !== undefined) part.text = text;
  if (own(v, 'data') !== undefined) part.data = copyJson(own(v, 'data'), `${where}.data`);
  const url = optString(v, 'url', where);
  if (url !== undefined) part.url = url;
  const raw = optString(v, 'raw', where);
  if (raw !== undefined) part.raw = raw;
  const mediaType = optString(v, 'mediaType', where);
  if (mediaType !== undefined) part.mediaType = mediaType;
  if (mediaType === MEDIA_TYPE.approvalRequest) checkApprovalPartSize(v, where);
  const filename = optString(v, 'filename', where);
  if (filename !== undefined) part.filename = filename;
  const metadata = optObject(v, 'metadata', where);
  if (metadata !== undefined) part.metadata = metadata;
  return part;
}

/**
 * Seed 000 "Request": "The whole part may be at most 128 KB of JSON", measured on the part as the
 * agent sent it, here while it is whole (the copy keeps only the members Taskbay reads): the UTF-8
 * bytes of the JSON serialization of the part object as parsed from the agent's body, every
 * member included, read or not (limits.ts jsonBytes; docs/choices.md "Issue 22: seed limits
 * exact"). Over the limit it is a malformed part: kept as ordinary data, never read as a request.
 */
function checkApprovalPartSize(v: Record<string, unknown>, where: string): void {
  let bytes: number;
  try {
    bytes = jsonBytes(v);
  } catch {
    throw invalid(`${where} cannot be measured (nested too deeply)`);
  }
  if (bytes > APPROVAL_LIMITS.partMaxBytes) {
    throw invalid(`${where} is ${bytes} bytes of JSON as sent; an approval-request part is at most ${APPROVAL_LIMITS.partMaxBytes}`);
  }
}

/**
 * A malformed part does not cost the agent its whole message: it is kept as ordinary data under
 * a media type of our own, with the reason and the media type it was sent as, and never read as
 * anything else. Its data is the part as sent when that can be copied, else null (nested over
 * JSON_DEPTH_MAX: the reason says so, and the waiting-for-input list shows it).
 */
function parsePartOrKeep(v: unknown, where: string): Part {
  try {
    return parsePart(v, where);
  } catch (e) {
    let data: unknown = null;
    try {
      data = copyJson(v, where);
    } catch {
      data = null;
    }
    const metadata: Record<string, unknown> = { taskbayMalformed: (e as Error).message };
    const sentAs = isPlainObject(v) ? own(v, 'mediaType') : undefined;
    if (typeof sentAs === 'string') metadata.taskbaySentAs = sentAs;
    return { data, mediaType: MEDIA_TYPE.malformedPart, metadata };
  }
}

/** Validates an untrusted A2A Message and returns a clean copy. */
export function parseMessage(v: unknown, where = 'message'): Message {
  if (!isPlainObject(v)) throw invalid(`${where} must be an object`);
  const messageId = idOf(own(v, 'messageId'), `${where}.messageId`);
  const role = own(v, 'role');
  if (typeof role !== 'string' || !ROLES.includes(role as Role)) throw invalid(`${where}.role is not ROLE_USER or ROLE_AGENT`);
  const parts = own(v, 'parts');
  if (!Array.isArray(parts)) throw invalid(`${where}.parts must be an array`);
  const msg: Message = {
    messageId,
    role: role as Role,
    parts: parts.map((p, i) => parsePartOrKeep(p, `${where}.parts[${i}]`)),
  };
  const contextId = optString(v, 'contextId', where);
  if (contextId !== undefined) msg.contextId = contextId;
  const taskId = optString(v, 'taskId', where);
  if (taskId !== undefined) msg.taskId = taskId;
  const metadata = optObject(v, 'metadata', where);
  if (metadata !== undefined) msg.metadata = metadata;
  const extensions = own(v, 'extensions');
  if (Array.isArray(extensions)) msg.extensions = extensions.filter((e): e is string => typeof e === 'string');
  return msg;
}

/** Validates an untrusted A2A Task and returns a clean copy. */
export function parseTask(v: unknown, where = 'task'): Task {
  if (!isPlainObject(v)) throw invalid(`${where} must be an object`);
  const id = idOf(own(v, 'id'), `${where}.id`);
  const contextId = idOf(own(v, 'contextId'), `${where}.contextId`);
  const statusIn = own(v, 'status');
  if (!isPlainObject(statusIn)) throw invalid(`${where}.status is missing`);
  const state = own(statusIn, 'state');
  if (typeof state !== 'string' || !A2A_TASK_STATES.includes(state as A2ATaskState)) {
    throw invalid(`${where}.status.state is not a known task state`);
  }
  const status: TaskStatus = { state: state as A2ATaskState };
  const statusMessage = own(statusIn, 'message');
  if (statusMessage !== undefined && statusMessage !== null) {
    status.message = parseMessage(statusMessage, `${where}.status.message`);
  }
  const timestamp = optString(statusIn, 'timestamp', `${where}.status`);
  if (timestamp !== undefined) status.timestamp = timestamp;

  const task: Task = { id, contextId, status };
  const history = own(v, 'history');
  if (history !== undefined && history !== null) {
    if (!Array.isArray(history)) throw invalid(`${where}.history must be an array`);
    task.history = history.map((m, i) => parseMessage(m, `${where}.history[${i}]`));
  }
  const artifacts = own(v, 'artifacts');
  if (artifacts !== undefined && artifacts !== null) {
    if (!Array.isArray(artifacts)) throw invalid(`${where}.artifacts must be an array`);
    task.artifacts = copyJson(artifacts, `${where}.artifacts`) as unknown[];
  }
  const metadata = optObject(v, 'metadata', where);
  if (metadata !== undefined) task.metadata = metadata;
  return task;
}

function parseStatus(v: unknown, where: string): TaskStatus {
  if (!isPlainObject(v)) throw invalid(`${where} is missing`);
  const state = own(v, 'state');
  if (typeof state !== 'string' || !A2A_TASK_STATES.includes(state as A2ATaskState)) {
    throw invalid(`${where}.state is not a known task state`);
  }
  const status: TaskStatus = { state: state as A2ATaskState };
  const message = own(v, 'message');
  if (message !== undefined && message !== null) status.message = parseMessage(message, `${where}.message`);
  const timestamp = optString(v, 'timestamp', where);
  if (timestamp !== undefined) status.timestamp = timestamp;
  return status;
}

function requiredId(obj: Record<string, unknown>, key: string, where: string): string {
  return idOf(own(obj, key), `${where}.${key}`);
}

/**
 * Validates one A2A v1.0 StreamResponse (an SSE event's result, a SubscribeToTask event, a push
 * payload): exactly one of task, message, statusUpdate, artifactUpdate.
 */
export function parseStreamEvent(json: unknown): StreamEvent {
  if (!isPlainObject(json)) throw invalid('the stream event is not an object');
  const present = ['task', 'message', 'statusUpdate', 'artifactUpdate'].filter((k) => {
    const v = own(json, k);
    return v !== undefined && v !== null;
  });
  if (present.length !== 1) throw invalid('a stream event holds exactly one of task, message, statusUpdate, artifactUpdate');
  const kind = present[0]!;
  const v = own(json, kind);
  if (kind === 'task') return { task: parseTask(v) };
  if (kind === 'message') return { message: parseMessage(v) };
  if (!isPlainObject(v)) throw invalid(`${kind} must be an object`);
  const taskId = requiredId(v, 'taskId', kind);
  const contextId = requiredId(v, 'contextId', kind);
  if (kind === 'statusUpdate') {
    const ev: StreamEvent = { statusUpdate: { taskId, contextId, status: parseStatus(own(v, 'status'), 'statusUpdate.status') } };
    const metadata = optObject(v, 'metadata', kind);
    if (metadata !== undefined) ev.statusUpdate.metadata = metadata;
    return ev;
  }
  return { artifactUpdate: { taskId, contextId, artifact: copyJson(own(v, 'artifact'), 'artifactUpdate.artifact') ?? null } };
}

/** Validates the `result` of SendMessage: exactly one of `task` or `message`. */
export function parseSendMessageResult(json: unknown): SendMessageResult {
  if (!isPlainObject(json)) throw invalid('the result is not an object');
  const task = own(json, 'task');
  const message = own(json, 'message');
  const hasTask = task !== undefined && task !== null;
  const hasMessage = message !== undefined && message !== null;
  if (hasTask && hasMessage) throw invalid('the result holds both a task and a message');
  if (hasTask) return { task: parseTask(task) };
  if (hasMessage) return { message: parseMessage(message) };
  throw invalid('the result holds neither a task nor a message');
}

/** A JSON-RPC error object from the agent: the code is shown, its message and data only in the detail. */
export function rpcError(what: string, error: unknown): A2AError {
  const code = isPlainObject(error) && typeof own(error, 'code') === 'number' ? (own(error, 'code') as number) : -32603;
  const msg = isPlainObject(error) && typeof own(error, 'message') === 'string' ? (own(error, 'message') as string) : 'no message';
  let data: unknown;
  try {
    data = isPlainObject(error) ? copyJson(own(error, 'data'), 'error.data') : undefined;
  } catch {
    data = undefined;
  }
  const detail = truncateDetail(`JSON-RPC error ${code}: ${msg}${data !== undefined ? `\ndata: ${JSON.stringify(data)}` : ''}`);
  return new A2AError('rpc', `${what} answered JSON-RPC error ${code}`, { rpcCode: code, ...(data !== undefined ? { rpcData: data } : {}), detail });
}
