import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '../lib/untrusted.js';
import { MCP_GATEWAY_LIMITS } from '../limits.js';
import { upstreamProblem, upstreamTimeoutMs } from './upstream-client.js';

// The fast path of a tools/call the rules pass (docs/choices.md "Issue 25: MCP gateway speed"):
// the client's JSON-RPC request is relayed to the upstream's session as one HTTP POST, and the
// upstream's answer streamed back, instead of an SDK Server handing it to an SDK Client (two
// more SDK round trips, zod both ways, SSE framed and parsed twice). What it keeps of the
// pass-through (docs/MCP.md): the upstream's result and JSON-RPC error unchanged (only the id is
// the client's again), its notifications on the call's stream (progress with the client's token),
// the answer cut at upstreamAnswerMaxBytes, the request ended within upstreamTimeoutSeconds (reset
// by progress, up to ten times that), a client's notifications/cancelled told to the upstream.
// What it does not do, so the gateway (gateway.ts) decides when it may be used: a request of the
// upstream to the client during the call (sampling, elicitation, roots; the client must have
// declared none of them: the gateway answers such a request with "Method not found", as a client
// without the capability would, and a ping with an empty result, as the SDK client does).

const ACCEPT = 'application/json, text/event-stream';
/** Ids and progress tokens sent upstream on the fast path: strings, never the SDK client's numbers on the same session. */
const ID_PREFIX = 'taskbay-relay-';

export interface RelayedCall {
  /** The client's JSON-RPC request, as it sent it. */
  message: { jsonrpc: '2.0'; id: string | number; method: 'tools/call'; params: Record<string, unknown> & { name: string } };
  name: string;
  arguments: Record<string, unknown>;
}

/** The POST's one message when it is a plain tools/call the fast path can take as the SDK transport would; else null. */
export function relayable(req: IncomingMessage, body: unknown): RelayedCall | null {
  if (req.method !== 'POST' || !isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const { id, params } = body;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isPlainObject(params) || typeof params.name !== 'string') return null;
  // A task-augmented call, or odd params: the SDK path answers them as it always did.
  if (params.task !== undefined || (params.arguments !== undefined && !isPlainObject(params.arguments))) return null;
  if (params._meta !== undefined && !isPlainObject(params._meta)) return null;
  // The transport's own checks; a request that fails one goes the SDK's way and gets its answer.
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if ((req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/json') return null;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return null;
  return { message: body as RelayedCall['message'], name: params.name, arguments: (params.arguments as Record<string, unknown>) ?? {} };
}

type Message = Record<string, unknown>;

/** Server-sent events as the SDK client reads them: `message` events (or unnamed ones) with data. */
class SseReader {
  private buf = '';
  private data: string[] = [];
  private event = '';

  push(text: string, onData: (data: string) => void): void {
    const buf = this.buf + text;
    let start = 0;
    for (;;) {
      let nl = -1;
      for (let i = start; i < buf.length; i++) {
        const c = buf.charCodeAt(i);
        if (c === 10 || c === 13) {
          nl = i;
          break;
        }
      }
      // A CR at the end may be the first half of a CRLF: wait for the next chunk.
      if (nl < 0 || (buf.charCodeAt(nl) === 13 && nl + 1 === buf.length)) break;
      const line = buf.slice(start, nl);
      start = nl + (buf.charCodeAt(nl) === 13 && buf.charCodeAt(nl + 1) === 10 ? 2 : 1);
      this.line(line, onData);
    }
    this.buf = buf.slice(start);
  }

  private line(line: string, onData: (data: string) => void) {
    if (line === '') {
      if (this.data.length && (this.event === '' || this.event === 'message')) onData(this.data.join('\n'));
      this.data = [];
      this.event = '';
      return;
    }
    if (line.charCodeAt(0) === 58) return; // a comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

export interface PassThroughContext {
  /** The agent network's fetch (every connection judged by its policy). */
  fetch: typeof fetch;
  url: string;
  /** The SDK client's transport to the same upstream: its session id and protocol version. */
  transport: StreamableHTTPClientTransport;
  /** A notification of the upstream seen on a relayed call's stream (the gateway drops its tool list on list_changed). */
  onNotification(method: string): void;
}

class RelayError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export class PassThrough {
  private next = 0;
  /** Relayed calls in flight, by the client's id: a notifications/cancelled of the client ends one. */
  private readonly live = new Map<string, (reason: unknown) => void>();

  constructor(private readonly ctx: PassThroughContext) {}

  /** Takes the client's notifications/cancelled of relayed calls (the SDK transport still answers the POST). */
  cancels(body: unknown): void {
    if (!this.live.size) return;
    for (const m of Array.isArray(body) ? body : [body]) {
      if (!isPlainObject(m) || m.method !== 'notifications/cancelled' || !isPlainObject(m.params)) continue;
      const id = m.params.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.live.get(String(id))?.(m.params.reason);
    }
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT };
    const { sessionId, protocolVersion } = this.ctx.transport;
    if (sessionId) h['mcp-session-id'] = sessionId;
    if (protocolVersion) h['mcp-protocol-version'] = protocolVersion;
    return h;
  }

  /** Sends one message upstream whose answer carries nothing (a response or a notification of ours); failures are the upstream's. */
  private tell(message: Message): void {
    this.ctx
      .fetch(this.ctx.url, { method: 'POST', headers: this.headers(), body: JSON.stringify(message), redirect: 'manual' })
      .then((r) => r.body?.cancel())
      .catch(() => {});
  }

  /** Relays `call` and writes the upstream's answer to `res`; `gone` aborts when the client's HTTP request closed. */
  async relay(res: ServerResponse, call: RelayedCall, sessionId: string, gone: AbortSignal | null): Promise<void> {
    const n = ++this.next;
    const upstreamId = `${ID_PREFIX}${n}`;
    const clientId = call.message.id;
    const params = call.message.params;
    const meta = params._meta as Record<string, unknown> | undefined;
    const clientToken = meta?.progressToken;
    const upstreamToken = clientToken === undefined ? undefined : `${ID_PREFIX}progress-${n}`;
    const outgoing = {
      jsonrpc: '2.0',
      id: upstreamId,
      method: 'tools/call',
      params: upstreamToken === undefined ? params : { ...params, _meta: { ...meta, progressToken: upstreamToken } },
    };

    const abort = new AbortController();
    let failure: RelayError | null = null;
    /** Ends the call with an error for the client (null: no answer, the client is gone or cancelled), once. */
    const fail = (e: RelayError | null, cancelReason?: string) => {
      if (abort.signal.aborted) return;
      failure = e;
      if (cancelReason !== undefined) {
        this.tell({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: upstreamId, reason: cancelReason } });
      }
      abort.abort();
    };
    const started = Date.now();
    const timeoutMs = upstreamTimeoutMs();
    const maxTotalMs = timeoutMs * 10;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new RelayError(-32001, 'Request timed out', { timeout: timeoutMs }), 'Request timed out'), timeoutMs);
    };
    arm();
    this.live.set(String(clientId), (reason) => fail(null, typeof reason === 'string' ? reason : 'cancelled by the client'));
    // Not a cancellation (the spec's rule for a closed stream): the answer is no longer read, nothing more.
    const onGone = () => fail(null);
    gone?.addEventListener('abort', onGone, { once: true });

    let wrote = false;
    const out = (chunk: string, last: boolean) => {
      if (!wrote) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'mcp-session-id': sessionId });
        wrote = true;
      }
      if (last) res.end(chunk);
      else res.write(chunk);
    };
    const event = (m: Message) => `event: message\ndata: ${JSON.stringify(m)}\n\n`;
    const errorFor = (e: RelayError) => ({
      jsonrpc: '2.0',
      id: clientId,
      error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) },
    });

    /** What one message of the upstream becomes for the client: the answer, a notification, or nothing. */
    const handle = (m: unknown): { answer?: Message; note?: Message } => {
      if (!isPlainObject(m)) return {};
      if ('method' in m && typeof m.method === 'string') {
        if ('id' in m && (typeof m.id === 'string' || typeof m.id === 'number')) {
          // A request of the upstream to the client: ping is answered as the SDK client answers it;
          // the client declared no capability for any other.
          this.tell(
            m.method === 'ping' ? { jsonrpc: '2.0', id: m.id, result: {} } : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } },
          );
          return {};
        }
        this.ctx.onNotification(m.method);
        const p = isPlainObject(m.params) ? m.params : null;
        if (m.method === 'notifications/progress') {
          // Only this call's progress, under the client's token again (the SDK client drops another's too).
          if (upstreamToken === undefined || p?.progressToken !== upstreamToken) return {};
          if (Date.now() - started >= maxTotalMs) {
            fail(new RelayError(-32001, 'Maximum total timeout exceeded', { maxTotalTimeout: maxTotalMs, totalElapsed: Date.now() - started }), 'timeout');
            return {};
          }
          arm();
          return { note: { ...m, params: { ...p, progressToken: clientToken } } };
        }
        if (m.method === 'notifications/cancelled' && p?.requestId === upstreamId) return {};
        return { note: m };
      }
      if (m.id !== upstreamId) return {};
      if ('error' in m) return { answer: { ...m, id: clientId } };
      if (!isPlainObject(m.result)) return { answer: errorFor(new RelayError(-32602, 'Invalid tools/call result: the result is not an object')) };
      // As the SDK's result schema does: content defaults to [].
      const result = Array.isArray(m.result.content) ? m.result : { ...m.result, content: [] };
      return { answer: { ...m, id: clientId, result } };
    };

    try {
      const answer = await this.ctx.fetch(this.ctx.url, {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(outgoing),
        signal: abort.signal,
        redirect: 'manual',
      });
      const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const max = MCP_GATEWAY_LIMITS.upstreamAnswerMaxBytes;
      const reader = answer.body?.getReader();
      const decoder = new TextDecoder();
      let seen = 0;
      const read = async (): Promise<string | null> => {
        const chunk = await reader!.read();
        if (chunk.done) return null;
        seen += chunk.value.byteLength;
        if (seen > max) {
          fail(new RelayError(-32603, `the MCP server's answer is larger than ${max} bytes`), 'the answer is too large');
          throw failure;
        }
        return decoder.decode(chunk.value, { stream: true });
      };
      if (!answer.ok || !reader || (type !== 'text/event-stream' && type !== 'application/json')) {
        let text = '';
        for (let s = reader ? await read() : null; s !== null && text.length < 2048; s = await read()) text += s;
        await reader?.cancel().catch(() => {});
        let parsed: unknown = null;
        try {
          parsed = type === 'application/json' ? JSON.parse(text) : null;
        } catch {}
        const relayed = handle(parsed).answer;
        if (relayed) return out(event(relayed), true);
        const what = answer.ok ? `an answer of type ${JSON.stringify(type.slice(0, 100))}` : `HTTP ${answer.status}`;
        throw new RelayError(-32603, `the MCP server answered the call with ${what}`);
      }
      if (type === 'application/json') {
        let text = '';
        for (let s = await read(); s !== null; s = await read()) text += s;
        text += decoder.decode();
        let data: unknown;
        try {
          data = JSON.parse(text);
        } catch {
          throw new RelayError(-32603, 'the MCP server answered the call with JSON that does not parse');
        }
        let found: Message | undefined;
        for (const m of Array.isArray(data) ? data : [data]) found ??= handle(m).answer;
        if (!found) throw new RelayError(-32603, 'the MCP server answered without a response to the call');
        return out(event(found), true);
      }
      const sse = new SseReader();
      for (;;) {
        const text = await read();
        if (text === null) throw new RelayError(-32603, "the MCP server's stream ended before its answer to the call");
        let notes = '';
        let answered: Message | undefined;
        sse.push(text, (data) => {
          if (answered) return;
          let m: unknown;
          try {
            m = JSON.parse(data);
          } catch {
            return; // as the SDK client does: an event that does not parse is skipped
          }
          const r = handle(m);
          if (r.note) notes += event(r.note);
          answered = r.answer;
        });
        if (answered) {
          await reader.cancel().catch(() => {});
          return out(notes + event(answered), true);
        }
        if (notes) out(notes, false);
      }
    } catch (e) {
      const aborted = abort.signal.aborted;
      // Whatever failed, the upstream's answer is not read further.
      abort.abort();
      const err: RelayError | null = aborted
        ? failure
        : e instanceof RelayError
          ? e
          : new RelayError(-32603, `the MCP server could not be reached: ${upstreamProblem(e)}`);
      // No answer for a cancelled call (as the SDK sends none): its stream just ends.
      if (!res.destroyed && !res.writableEnded) out(err ? event(errorFor(err)) : '', true);
    } finally {
      clearTimeout(timer);
      gone?.removeEventListener('abort', onGone);
      this.live.delete(String(clientId));
    }
  }
}
