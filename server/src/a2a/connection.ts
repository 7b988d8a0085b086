import { A2A_STREAM_LIMITS } from '../limits.js';
import { isPlainObject, own } from '../lib/untrusted.js';
import { defaultAgentFetch } from '../net/agent-network.js';
import { classifyConnectFailure, httpDetail, httpFailureDetail, httpStatusReason, readBodyExcerpt } from '../net/failure.js';
import { readBodyLimited } from './card.js';
import { A2A_VERSION } from './extensions.js';
import { readSseData } from './sse.js';
import type { SendMessageParams, StreamEvent } from './types.js';
import { A2AError, invalid, rpcError } from './wire.js';

// HTTP to one agent interface, shared by both protocol bindings: the A2A headers, time limits,
// size limits, and errors that say what failed (classified, with the agent's host) and keep what
// the agent or the network said in `detail`, for admins only. A2A requests follow no redirect.

export const A2A_RESPONSE_MAX_BYTES = 4 * 1024 * 1024;
export const A2A_DEFAULT_TIMEOUT_MS = 30_000;
/** A stream (SendStreamingMessage, SubscribeToTask) is given up after this long. */
export const A2A_STREAM_TIMEOUT_MS = 10 * 60_000;

export type OnStreamEvent = (e: StreamEvent) => Promise<void>;

/**
 * A stream Taskbay ended because it went over A2A_STREAM_LIMITS (its events, or its bytes as
 * read): an invalid answer, told apart so that the stream is not resumed (the agent would send
 * the same again) and the task shows why.
 */
export class A2AStreamLimitError extends A2AError {
  constructor(what: string, reason: string) {
    super('invalid_answer', `${what}: ${reason}`);
    this.name = 'A2AStreamLimitError';
  }
}

/**
 * The A2A operations on one protocol binding (JSON-RPC or HTTP+JSON). Unary operations resolve
 * with the agent's untrusted result JSON; streams call `onEvent` (awaited) with each validated
 * event in order and resolve with their number when the agent ends the stream.
 */
export interface A2ATransport {
  sendMessage(params: SendMessageParams): Promise<unknown>;
  getTask(params: { id: string; historyLength?: number }): Promise<unknown>;
  cancelTask(params: { id: string }): Promise<unknown>;
  sendStreamingMessage(params: SendMessageParams, onEvent: OnStreamEvent): Promise<number>;
  subscribeToTask(params: { id: string }, onEvent: OnStreamEvent): Promise<number>;
}

export interface AgentConnectionOptions {
  /** The agent's interface URL (from the card's supportedInterfaces). */
  url: string;
  /** Extension URIs to activate; sent as A2A-Extensions when non-empty. */
  extensions: string[];
  /** Defaults to the default-policy agent network; Taskbay passes deps.network.fetch. */
  fetchImpl?: typeof fetch;
  timeoutMs?: number;
}

/** One HTTP request: where, how, and the JSON body as text. */
export interface HttpTarget {
  url: string;
  method: 'GET' | 'POST';
  body?: string;
}

export class AgentConnection {
  readonly url: string;
  /** host[:port] of the URL: all an error message names of the agent. */
  readonly host: string;
  readonly extensions: readonly string[];
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(opts: AgentConnectionOptions) {
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
  }

  /** The interface URL with `path` appended (the HTTP+JSON routes). */
  urlWith(path: string): string {
    return this.url.replace(/\/+$/, '') + path;
  }

  /** "<operation> to <host>": how errors name what failed. */
  what(operation: string): string {
    return `${operation} to ${this.host}`;
  }

  private headers(accept: string): Record<string, string> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: accept, 'A2A-Version': A2A_VERSION };
    if (this.extensions.length > 0) headers['A2A-Extensions'] = this.extensions.join(', ');
    return headers;
  }

  private fetch(target: HttpTarget, accept: string, timeoutMs: number): Promise<Response> {
    return this.fetchImpl(target.url, {
      method: target.method,
      headers: this.headers(accept),
      ...(target.body !== undefined ? { body: target.body } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  /** A connection that failed or timed out (including a network policy refusal). */
  private connectError(what: string, err: unknown, timeoutMs: number): A2AError {
    const f = classifyConnectFailure(err, timeoutMs);
    return new A2AError(f.kind, `${what} failed: ${f.reason}`, { detail: f.detail });
  }

  /** One request answered with JSON: resolves with the untrusted body, or throws A2AError. */
  async requestJson(target: HttpTarget, what: string): Promise<unknown> {
    let buf: Buffer | null;
    try {
      const res = await this.fetch(target, 'application/json', this.timeoutMs);
      if (!res.ok) {
        // An HTTP answer that is not a success (a redirect included).
        throw new A2AError('http_status', `${what} answered ${httpStatusReason(res.status)}`, {
          status: res.status,
          detail: await httpFailureDetail(res, target.url),
        });
      }
      buf = await readBodyLimited(res, A2A_RESPONSE_MAX_BYTES);
    } catch (err) {
      if (err instanceof A2AError) throw err;
      throw this.connectError(what, err, this.timeoutMs);
    }
    if (buf === null) throw invalid(`the response is larger than ${A2A_RESPONSE_MAX_BYTES} bytes`);
    try {
      return JSON.parse(buf.toString('utf8'));
    } catch {
      throw invalid('the response is not JSON');
    }
  }

  /**
   * One request answered with an SSE stream: `decode` validates each event's JSON, then `onEvent`
   * runs (awaited) for it. Resolves with the number of events when the agent ends the stream;
   * throws A2AError when it fails, and with `eventsSeen` when the connection drops.
   */
  async stream(target: HttpTarget, operation: string, decode: (json: unknown) => StreamEvent, onEvent: OnStreamEvent): Promise<number> {
    const what = this.what(operation);
    let seen = 0;
    const dropped = (err: unknown) => Object.assign(this.connectError(what, err, A2A_STREAM_TIMEOUT_MS), { eventsSeen: seen });
    let res: Response;
    try {
      res = await this.fetch(target, 'text/event-stream', A2A_STREAM_TIMEOUT_MS);
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
      const error = isPlainObject(json) ? own(json, 'error') : undefined;
      if (isPlainObject(error) && typeof own(error, 'code') === 'number') throw rpcError(what, error);
      if (!res.ok)
        throw new A2AError('http_status', `${what} answered ${httpStatusReason(res.status)}`, {
          status: res.status,
          detail: httpDetail(res, target.url, body),
        });
      throw invalid(`${operation} did not answer with text/event-stream`);
    }
    if (!res.body) return 0;
    await readSseData(
      res.body,
      async (data) => {
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          throw invalid('a stream event is not JSON');
        }
        const event = decode(json);
        seen += 1;
        await onEvent(event);
      },
      {
        maxEventBytes: A2A_RESPONSE_MAX_BYTES,
        tooLarge: () => invalid(`a stream event is larger than ${A2A_RESPONSE_MAX_BYTES} bytes`),
        maxStreamBytes: A2A_STREAM_LIMITS.bytesMax,
        streamTooLarge: () => new A2AStreamLimitError(what, `the stream is larger than ${A2A_STREAM_LIMITS.bytesMax} bytes`),
        maxEvents: A2A_STREAM_LIMITS.eventsMax,
        tooManyEvents: () => new A2AStreamLimitError(what, `the stream has more than ${A2A_STREAM_LIMITS.eventsMax} events`),
        dropped,
      },
    );
    return seen;
  }
}
