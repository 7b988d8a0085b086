import { randomUUID } from 'node:crypto';
import { A2A_VERSION } from './extensions.js';
import { readBodyLimited, type Binding } from './card.js';
import { defaultAgentFetch } from '../net/agent-network.js';
import { classifyConnectFailure, httpDetail, httpFailureDetail, httpStatusReason, readBodyExcerpt, truncateDetail, type AgentFailureKind } from '../net/failure.js';
import { A2A_TASK_STATES } from './types.js';
import type { A2ATaskState, Message, Part, Role, SendMessageParams, SendMessageResult, StreamEvent, Task, TaskStatus } from './types.js';

// A small hand-written A2A v1.0 JSON-RPC client (SendMessage, GetTask). Every response is
// untrusted: the envelope and the result are validated and copied field by field. An error's
// message says what failed (classified, with the agent's host) and never carries what the agent
// answered; that goes to `detail`, for admins only.

export const A2A_RESPONSE_MAX_BYTES = 4 * 1024 * 1024;
export const A2A_DEFAULT_TIMEOUT_MS = 30_000;
/** A stream (SendStreamingMessage, SubscribeToTask) is given up after this long. */
export const A2A_STREAM_TIMEOUT_MS = 10 * 60_000;

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
 * How deeply agent JSON (a part's data or metadata, artifacts, error data) may nest: arrays and
 * objects below the value itself. Every walker of agent data (this copy, digests, the console's
 * JSON tree) recurses, so the depth is bounded; 64 is far beyond any real payload. A part over
 * it is kept as a malformed part (MALFORMED_PART_MEDIA_TYPE) whose reason says so.
 */
export const A2A_JSON_DEPTH_MAX = 64;
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

function invalid(reason: string): A2AError {
  return new A2AError('invalid_answer', `The agent's response is not valid: ${reason}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/**
 * Deep copy of a JSON value, kept exactly: an own `__proto__` key (JSON.parse makes one) stays a
 * plain data key, defined rather than assigned so it can never set the copy's prototype. An
 * agent computes digests over its data as sent, so dropping the key would change the content.
 */
function cloneJson(v: unknown, where: string, depth = 0): unknown {
  if (depth > A2A_JSON_DEPTH_MAX) throw invalid(`${where} is nested more than ${A2A_JSON_DEPTH_MAX} levels deep`);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map((x) => cloneJson(x, where, depth + 1));
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      const val = cloneJson(v[key], where, depth + 1);
      if (val !== undefined) Object.defineProperty(out, key, { value: val, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return undefined;
}

function optString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = own(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${where}.${key} must be a string`);
  return v;
}

function optObject(obj: Record<string, unknown>, key: string, where: string): Record<string, unknown> | undefined {
  const v = own(obj, key);
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid(`${where}.${key} must be an object`);
  return cloneJson(v, `${where}.${key}`) as Record<string, unknown>;
}

function parsePart(v: unknown, where: string): Part {
  if (!isObject(v)) throw invalid(`${where} must be an object`);
  const part: Part = {};
  const text = optString(v, 'text', where);
  if (text !== undefined) part.text = text;
  if (own(v, 'data') !== undefined) part.data = cloneJson(own(v, 'data'), `${where}.data`);
  const url = optString(v, 'url', where);
  if (url !== undefined) part.url = url;
  const raw = optString(v, 'raw', where);
  if (raw !== undefined) part.raw = raw;
  const mediaType = optString(v, 'mediaType', where);
  if (mediaType !== undefined) part.mediaType = mediaType;
  const filename = optString(v, 'filename', where);
  if (filename !== undefined) part.filename = filename;
  const metadata = optObject(v, 'metadata', where);
  if (metadata !== undefined) part.metadata = metadata;
  return part;
}

export const MALFORMED_PART_MEDIA_TYPE = 'application/vnd.agent-taskbay.malformed-part+json';

/**
 * A malformed part does not cost the agent its whole message: it is kept as ordinary data under
 * a media type of our own, with the reason and the media type it was sent as, and never read as
 * anything else. Its data is the part as sent when that can be copied, else null (nested over
 * A2A_JSON_DEPTH_MAX: the reason says so, and the waiting-for-input list shows it).
 */
function parsePartOrKeep(v: unknown, where: string): Part {
  try {
    return parsePart(v, where);
  } catch (e) {
    let data: unknown = null;
    try {
      data = cloneJson(v, where);
    } catch {
      data = null;
    }
    const metadata: Record<string, unknown> = { taskbayMalformed: (e as Error).message };
    const sentAs = isObject(v) ? own(v, 'mediaType') : undefined;
    if (typeof sentAs === 'string') metadata.taskbaySentAs = sentAs;
    return { data, mediaType: MALFORMED_PART_MEDIA_TYPE, metadata };
  }
}

/** Validates an untrusted A2A Message and returns a clean copy. */
export function parseMessage(v: unknown, where = 'message'): Message {
  if (!isObject(v)) throw invalid(`${where} must be an object`);
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
  if (!isObject(v)) throw invalid(`${where} must be an object`);
  const id = idOf(own(v, 'id'), `${where}.id`);
  const contextId = idOf(own(v, 'contextId'), `${where}.contextId`);
  const statusIn = own(v, 'status');
  if (!isObject(statusIn)) throw invalid(`${where}.status is missing`);
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
    task.artifacts = cloneJson(artifacts, `${where}.artifacts`) as unknown[];
  }
  const metadata = optObject(v, 'metadata', where);
  if (metadata !== undefined) task.metadata = metadata;
  return task;
}

function parseStatus(v: unknown, where: string): TaskStatus {
  if (!isObject(v)) throw invalid(`${where} is missing`);
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
  if (!isObject(json)) throw invalid('the stream event is not an object');
  const present = ['task', 'message', 'statusUpdate', 'artifactUpdate'].filter((k) => {
    const v = own(json, k);
    return v !== undefined && v !== null;
  });
  if (present.length !== 1) throw invalid('a stream event holds exactly one of task, message, statusUpdate, artifactUpdate');
  const kind = present[0]!;
  const v = own(json, kind);
  if (kind === 'task') return { task: parseTask(v) };
  if (kind === 'message') return { message: parseMessage(v) };
  if (!isObject(v)) throw invalid(`${kind} must be an object`);
  const taskId = requiredId(v, 'taskId', kind);
  const contextId = requiredId(v, 'contextId', kind);
  if (kind === 'statusUpdate') {
    const ev: StreamEvent = { statusUpdate: { taskId, contextId, status: parseStatus(own(v, 'status'), 'statusUpdate.status') } };
    const metadata = optObject(v, 'metadata', kind);
    if (metadata !== undefined) ev.statusUpdate.metadata = metadata;
    return ev;
  }
  return { artifactUpdate: { taskId, contextId, artifact: cloneJson(own(v, 'artifact'), 'artifactUpdate.artifact') ?? null } };
}

/** Validates the `result` of SendMessage: exactly one of `task` or `message`. */
export function parseSendMessageResult(json: unknown): SendMessageResult {
  if (!isObject(json)) throw invalid('the result is not an object');
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
function rpcError(what: string, error: unknown): A2AError {
  const code = isObject(error) && typeof own(error, 'code') === 'number' ? (own(error, 'code') as number) : -32603;
  const msg = isObject(error) && typeof own(error, 'message') === 'string' ? (own(error, 'message') as string) : 'no message';
  let data: unknown;
  try {
    data = isObject(error) ? cloneJson(own(error, 'data'), 'error.data') : undefined;
  } catch {
    data = undefined;
  }
  const detail = truncateDetail(`JSON-RPC error ${code}: ${msg}${data !== undefined ? `\ndata: ${JSON.stringify(data)}` : ''}`);
  return new A2AError('rpc', `${what} answered JSON-RPC error ${code}`, { rpcCode: code, ...(data !== undefined ? { rpcData: data } : {}), detail });
}

export interface A2AClientOptions {
  /** The agent's JSON-RPC interface URL (from the card's supportedInterfaces). */
  url: string;
  /** Extension URIs to activate; sent as A2A-Extensions when non-empty. */
  extensions: string[];
  /** Defaults to the default-policy agent network; Taskbay passes deps.network.fetch. */
  fetchImpl?: typeof fetch;
  timeoutMs?: number;
  /** JSONRPC (default) or HTTP+JSON (the REST binding: /message:send, /tasks/{id}, ...). */
  binding?: Binding;
}

export class A2AClient {
  readonly url: string;
  /** host[:port] of the URL: all an error message names of the agent. */
  readonly host: string;
  readonly extensions: readonly string[];
  readonly binding: Binding;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(opts: A2AClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(opts.url);
    } catch {
      throw new A2AError('invalid_answer', `The agent interface URL is not valid: ${opts.url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new A2AError('invalid_answer', `The agent interface URL must be http or https: ${opts.url}`);
    }
    this.url = opts.url;
    this.host = parsed.host;
    this.extensions = [...new Set(opts.extensions)];
    this.fetchImpl = opts.fetchImpl ?? defaultAgentFetch();
    this.timeoutMs = opts.timeoutMs ?? A2A_DEFAULT_TIMEOUT_MS;
    this.binding = opts.binding ?? 'JSONRPC';
  }

  private get rest(): boolean {
    return this.binding === 'HTTP+JSON';
  }

  private restUrl(path: string): string {
    return this.url.replace(/\/+$/, '') + path;
  }

  /** A connection that failed or timed out (including a network policy refusal). */
  private connectError(what: string, err: unknown, timeoutMs: number): A2AError {
    const f = classifyConnectFailure(err, timeoutMs);
    return new A2AError(f.kind, `${what} failed: ${f.reason}`, { detail: f.detail });
  }

  /** An HTTP answer that is not a success (a redirect included: A2A requests follow none). */
  private async httpError(what: string, res: Response, url: string): Promise<A2AError> {
    return new A2AError('http_status', `${what} answered ${httpStatusReason(res.status)}`, {
      status: res.status,
      detail: await httpFailureDetail(res, url),
    });
  }

  /** One HTTP+JSON call; resolves with the untrusted JSON body, or throws A2AError. */
  async restCall(method: 'GET' | 'POST', path: string, body?: unknown, operation = `${method} ${path.split('?')[0]}`): Promise<unknown> {
    const url = this.restUrl(path);
    const what = `${operation} to ${this.host}`;
    let res: Response;
    let buf: Buffer | null;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers: this.headers('application/json'),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) throw await this.httpError(what, res, url);
      buf = await readBodyLimited(res, A2A_RESPONSE_MAX_BYTES);
    } catch (err) {
      if (err instanceof A2AError) throw err;
      throw this.connectError(what, err, this.timeoutMs);
    }
    if (buf === null) throw invalid(`the response is larger than ${A2A_RESPONSE_MAX_BYTES} bytes`);
    let json: unknown;
    try {
      json = JSON.parse(buf.toString('utf8'));
    } catch {
      throw invalid('the response is not JSON');
    }
    return json;
  }

  async sendMessage(params: SendMessageParams): Promise<SendMessageResult> {
    if (this.rest) return parseSendMessageResult(await this.restCall('POST', '/message:send', params, 'SendMessage'));
    return parseSendMessageResult(await this.call('SendMessage', params));
  }

  async getTask(params: { id: string; historyLength?: number }): Promise<Task> {
    if (this.rest) {
      const q = params.historyLength !== undefined ? `?historyLength=${params.historyLength}` : '';
      return parseTask(await this.restCall('GET', `/tasks/${encodeURIComponent(params.id)}${q}`, undefined, 'GetTask'));
    }
    return parseTask(await this.call('GetTask', params));
  }

  async cancelTask(params: { id: string }): Promise<Task> {
    if (this.rest) return parseTask(await this.restCall('POST', `/tasks/${encodeURIComponent(params.id)}:cancel`, {}, 'CancelTask'));
    return parseTask(await this.call('CancelTask', params));
  }

  /**
   * SendStreamingMessage over SSE: every `data:` line is one JSON-RPC response whose result is a
   * StreamResponse; `onEvent` runs (and is awaited) for each, in order, as it arrives. Resolves
   * with the number of events when the agent ends the stream; throws A2AError (with
   * `eventsSeen`) when it fails or drops.
   */
  sendStreamingMessage(params: SendMessageParams, onEvent: (e: StreamEvent) => Promise<void>): Promise<number> {
    return this.stream('SendStreamingMessage', params, onEvent);
  }

  /** SubscribeToTask: resumes the event stream of an existing task (SSE, as above). */
  subscribeToTask(params: { id: string }, onEvent: (e: StreamEvent) => Promise<void>): Promise<number> {
    return this.stream('SubscribeToTask', params, onEvent);
  }

  private headers(accept: string): Record<string, string> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: accept, 'A2A-Version': A2A_VERSION };
    if (this.extensions.length > 0) headers['A2A-Extensions'] = this.extensions.join(', ');
    return headers;
  }

  async stream(method: string, params: unknown, onEvent: (e: StreamEvent) => Promise<void>): Promise<number> {
    const id = randomUUID();
    let seen = 0;
    const what = `${method} to ${this.host}`;
    const dropped = (err: unknown) => Object.assign(this.connectError(what, err, A2A_STREAM_TIMEOUT_MS), { eventsSeen: seen });
    let res: Response;
    // HTTP+JSON: POST /message:stream with the params, GET /tasks/{id}:subscribe; events are bare StreamResponses.
    const target = !this.rest
      ? { url: this.url, method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }
      : method === 'SendStreamingMessage'
        ? { url: this.restUrl('/message:stream'), method: 'POST', body: JSON.stringify(params) }
        : { url: this.restUrl(`/tasks/${encodeURIComponent(String((params as { id: string }).id))}:subscribe`), method: 'GET' };
    try {
      res = await this.fetchImpl(target.url, {
        method: target.method,
        headers: this.headers('text/event-stream'),
        ...(target.body !== undefined ? { body: target.body } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(A2A_STREAM_TIMEOUT_MS),
      });
    } catch (err) {
      throw dropped(err);
    }
    const type = res.headers.get('content-type') ?? '';
    if (!res.ok || !type.toLowerCase().startsWith('text/event-stream')) {
      // An agent refusing the stream answers one JSON-RPC error (or an HTTP error).
      const body = await readBodyExcerpt(res);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        /* not JSON */
      }
      const error = isObject(json) ? own(json, 'error') : undefined;
      if (isObject(error) && typeof own(error, 'code') === 'number') throw rpcError(what, error);
      if (!res.ok) throw new A2AError('http_status', `${what} answered ${httpStatusReason(res.status)}`, { status: res.status, detail: httpDetail(res, target.url, body) });
      throw invalid(`${method} did not answer with text/event-stream`);
    }
    if (!res.body) return 0;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const handle = async (block: string) => {
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '') return;
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw invalid('a stream event is not JSON');
      }
      if (this.rest && isObject(json) && own(json, 'jsonrpc') === undefined) {
        const event = parseStreamEvent(json);
        seen += 1;
        await onEvent(event);
        return;
      }
      if (!isObject(json) || own(json, 'jsonrpc') !== '2.0') throw invalid('a stream event is not a JSON-RPC 2.0 response');
      const error = own(json, 'error');
      if (error !== undefined && error !== null) throw rpcError(what, error);
      const event = parseStreamEvent(own(json, 'result'));
      seen += 1;
      await onEvent(event);
    };
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw dropped(err);
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      if (buffer.length > A2A_RESPONSE_MAX_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw invalid(`a stream event is larger than ${A2A_RESPONSE_MAX_BYTES} bytes`);
      }
      let cut: RegExpExecArray | null;
      while ((cut = /\r?\n\r?\n/.exec(buffer))) {
        const block = buffer.slice(0, cut.index);
        buffer = buffer.slice(cut.index + cut[0].length);
        try {
          await handle(block);
        } catch (e) {
          await reader.cancel().catch(() => undefined);
          throw e;
        }
      }
    }
    if (buffer.trim() !== '') await handle(buffer);
    return seen;
  }

  /** One JSON-RPC call; resolves with the untrusted `result`, or throws A2AError. */
  async call(method: string, params: unknown): Promise<unknown> {
    const id = randomUUID();
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'A2A-Version': A2A_VERSION,
    };
    if (this.extensions.length > 0) headers['A2A-Extensions'] = this.extensions.join(', ');

    const what = `${method} to ${this.host}`;
    let res: Response;
    let body: Buffer | null;
    try {
      res = await this.fetchImpl(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) throw await this.httpError(what, res, this.url);
      body = await readBodyLimited(res, A2A_RESPONSE_MAX_BYTES);
    } catch (err) {
      if (err instanceof A2AError) throw err;
      throw this.connectError(what, err, this.timeoutMs);
    }
    if (body === null) throw invalid(`the response is larger than ${A2A_RESPONSE_MAX_BYTES} bytes`);

    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw invalid('the response is not JSON');
    }
    if (!isObject(json) || own(json, 'jsonrpc') !== '2.0') throw invalid('the response is not a JSON-RPC 2.0 object');
    const error = own(json, 'error');
    const hasResult = Object.prototype.hasOwnProperty.call(json, 'result');
    if (error !== undefined && error !== null) {
      if (!isObject(error) || typeof own(error, 'code') !== 'number') throw invalid('the JSON-RPC error is malformed');
      throw rpcError(what, error);
    }
    if (own(json, 'id') !== id) throw invalid('the JSON-RPC id does not match the request');
    if (!hasResult) throw invalid('the JSON-RPC response has neither result nor error');
    return own(json, 'result');
  }
}
