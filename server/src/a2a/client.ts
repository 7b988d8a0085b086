import { randomUUID } from 'node:crypto';
import { A2A_VERSION } from './extensions.js';
import { readBodyLimited } from './card.js';
import { A2A_TASK_STATES } from './types.js';
import type { A2ATaskState, Message, Part, Role, SendMessageParams, SendMessageResult, Task, TaskStatus } from './types.js';

// A small hand-written A2A v1.0 JSON-RPC client (SendMessage, GetTask). Every response is
// untrusted: the envelope and the result are validated and copied field by field.

export const A2A_RESPONSE_MAX_BYTES = 4 * 1024 * 1024;
export const A2A_DEFAULT_TIMEOUT_MS = 30_000;

export type A2AErrorKind = 'network' | 'http' | 'rpc' | 'invalid';

export class A2AError extends Error {
  readonly kind: A2AErrorKind;
  readonly status?: number;
  readonly rpcCode?: number;
  readonly rpcData?: unknown;
  constructor(kind: A2AErrorKind, message: string, extra: { status?: number; rpcCode?: number; rpcData?: unknown } = {}) {
    super(message);
    this.name = 'A2AError';
    this.kind = kind;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.rpcCode !== undefined) this.rpcCode = extra.rpcCode;
    if (extra.rpcData !== undefined) this.rpcData = extra.rpcData;
  }
}

const ROLES: readonly Role[] = ['ROLE_USER', 'ROLE_AGENT'];
const JSON_DEPTH_MAX = 64;

function invalid(reason: string): A2AError {
  return new A2AError('invalid', `The agent's response is not valid: ${reason}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/** Deep copy of a JSON value without `__proto__` keys. */
function cloneJson(v: unknown, where: string, depth = 0): unknown {
  if (depth > JSON_DEPTH_MAX) throw invalid(`${where} is nested too deeply`);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map((x) => cloneJson(x, where, depth + 1));
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      if (key === '__proto__') continue;
      const val = cloneJson(v[key], where, depth + 1);
      if (val !== undefined) out[key] = val;
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

/** Validates an untrusted A2A Message and returns a clean copy. */
export function parseMessage(v: unknown, where = 'message'): Message {
  if (!isObject(v)) throw invalid(`${where} must be an object`);
  const messageId = own(v, 'messageId');
  if (typeof messageId !== 'string' || messageId.length === 0) throw invalid(`${where}.messageId is missing`);
  const role = own(v, 'role');
  if (typeof role !== 'string' || !ROLES.includes(role as Role)) throw invalid(`${where}.role is not ROLE_USER or ROLE_AGENT`);
  const parts = own(v, 'parts');
  if (!Array.isArray(parts)) throw invalid(`${where}.parts must be an array`);
  const msg: Message = {
    messageId,
    role: role as Role,
    parts: parts.map((p, i) => parsePart(p, `${where}.parts[${i}]`)),
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
  const id = own(v, 'id');
  if (typeof id !== 'string' || id.length === 0) throw invalid(`${where}.id is missing`);
  const contextId = own(v, 'contextId');
  if (typeof contextId !== 'string' || contextId.length === 0) throw invalid(`${where}.contextId is missing`);
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

function describeNetworkFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  if (e?.cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (e?.cause?.code === 'ENOTFOUND' || e?.cause?.code === 'EAI_AGAIN') return 'host not found';
  if (e?.cause?.code === 'ECONNRESET') return 'connection reset';
  return e?.cause?.message ?? e?.message ?? 'unknown network error';
}

export interface A2AClientOptions {
  /** The agent's JSON-RPC interface URL (from the card's supportedInterfaces). */
  url: string;
  /** Extension URIs to activate; sent as A2A-Extensions when non-empty. */
  extensions: string[];
  fetchImpl?: typeof fetch;
  timeoutMs?: number;
}

export class A2AClient {
  readonly url: string;
  readonly extensions: readonly string[];
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(opts: A2AClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(opts.url);
    } catch {
      throw new A2AError('invalid', `The agent interface URL is not valid: ${opts.url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new A2AError('invalid', `The agent interface URL must be http or https: ${opts.url}`);
    }
    this.url = opts.url;
    this.extensions = [...new Set(opts.extensions)];
    this.fetchImpl = opts.fetchImpl ?? fetch;
    this.timeoutMs = opts.timeoutMs ?? A2A_DEFAULT_TIMEOUT_MS;
  }

  async sendMessage(params: SendMessageParams): Promise<SendMessageResult> {
    return parseSendMessageResult(await this.call('SendMessage', params));
  }

  async getTask(params: { id: string; historyLength?: number }): Promise<Task> {
    return parseTask(await this.call('GetTask', params));
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

    let res: Response;
    let body: Buffer | null;
    try {
      res = await this.fetchImpl(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      body = await readBodyLimited(res, A2A_RESPONSE_MAX_BYTES);
    } catch (err) {
      throw new A2AError('network', `${method} to ${this.url} failed: ${describeNetworkFailure(err, this.timeoutMs)}`);
    }

    if (!res.ok) {
      let detail = '';
      if (body) {
        try {
          const j = JSON.parse(body.toString('utf8')) as unknown;
          const e = isObject(j) ? own(j, 'error') : undefined;
          const m = isObject(e) ? own(e, 'message') : undefined;
          if (typeof m === 'string') detail = `: ${m.slice(0, 500)}`;
        } catch {
          /* not JSON: status alone */
        }
      }
      throw new A2AError('http', `${method} to ${this.url} answered HTTP ${res.status}${detail}`, { status: res.status });
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
      const code = own(error, 'code') as number;
      const msg = typeof own(error, 'message') === 'string' ? (own(error, 'message') as string).slice(0, 500) : 'no message';
      throw new A2AError('rpc', `${method} failed with JSON-RPC error ${code}: ${msg}`, {
        rpcCode: code,
        rpcData: cloneJson(own(error, 'data'), 'error.data'),
      });
    }
    if (own(json, 'id') !== id) throw invalid('the JSON-RPC id does not match the request');
    if (!hasResult) throw invalid('the JSON-RPC response has neither result nor error');
    return own(json, 'result');
  }
}
