import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_VERSION } from '../a2a/extensions.js';
import type { Task } from '../a2a/types.js';
import { readJsonBody, sendJson } from '../http/json.js';
import { isPlainObject } from '../lib/untrusted.js';
import { createApprovalTrust, type TrustedTaskbay } from './approval-trust.js';
import { buildCard, type Modes } from './cards.js';
import { VARIANTS, type Variant } from './content.js';
import { RpcFailure } from './script.js';
import { createTaskStore, type ReceivedMessage, type SentPush } from './tasks.js';

// The reference A2A v1.0 agent (seed 003, "Walkthrough: the fixture agent"): a test fixture and
// demo, not product code. One node:http server serves every variant under /<variant>/:
//   GET  /<variant>/card.json   the Agent Card
//   POST /<variant>/a2a         JSON-RPC 2.0: SendMessage, SendStreamingMessage, SubscribeToTask,
//                               GetTask, CancelTask (seed 003: it "answers SendMessage and
//                               SendStreamingMessage", whatever its card says)
//   /<variant>/rest/...         the same on HTTP+JSON routes (httpJson mode)
// Tasks live in memory per agent instance (tasks.ts).

export const REQUEST_MAX_BYTES = 1024 * 1024;

export interface FixtureAgent {
  baseUrl: string;
  cardUrl(variant: Variant): string;
  a2aUrl(variant: Variant): string;
  /** Every SendMessage received (valid params, known task), in order. */
  received: ReceivedMessage[];
  /** The next `count` A2A POSTs to `variant` answer HTTP `status` (default 503) without processing. */
  failNext(variant: Variant, count: number, status?: number): void;
  /** A stored task (a copy), for assertions. */
  getTask(taskId: string): Task | undefined;
  /** Forgets tasks, received messages and pending failures. */
  reset(): void;
  /** Push mode: every push sent, in order (settled: outcome known). */
  pushes: SentPush[];
  /** Streaming mode: keeps every stream open after its last event until the returned release() runs. */
  holdStreams(): () => void;
  /** Streaming mode: the next SendStreamingMessage of `variant` drops the connection after its first event. */
  dropNextStream(variant: Variant): void;
  /** Streams currently open (SendStreamingMessage, and SubscribeToTask while a run is under way). */
  openStreams(): number;
  /** Every A2A method called (valid JSON-RPC envelope, or an HTTP+JSON route), in order. */
  calls: { variant: Variant; method: string; binding: 'JSONRPC' | 'HTTP+JSON' }[];
  /** From now on approved messages must carry a valid signature of this Taskbay (undefined: digest only). */
  trustApprovalsFrom(taskbay: TrustedTaskbay | undefined): void;
  close(): Promise<void>;
}

export interface FixtureAgentOptions {
  port?: number;
  host?: string;
  /** Base URL written into cards when the agent is reached through another address (e.g. Docker). */
  publicUrl?: string;
  /** Streaming mode: cards say capabilities.streaming (SendStreamingMessage / SubscribeToTask answer over SSE in every mode). */
  streaming?: boolean;
  /**
   * Push mode: cards say capabilities.pushNotifications and a message's push config is kept; a
   * SendMessage with one that does not set returnImmediately is answered WORKING (tasks.ts).
   */
  push?: boolean;
  /** How long a non-blocking SendMessage's task stays WORKING before its reply is applied (default 50 ms). */
  deferredReplyMs?: number;
  /** Cards also advertise the skill-routing extension; a routed send naming an unknown skill is refused. */
  skillRouting?: boolean;
  /** HTTP+JSON: cards list the REST interface (/<variant>/rest) first, JSON-RPC second. */
  httpJson?: boolean;
  /**
   * Awaited after a JSON-RPC SendMessage was received and processed, before its answer is sent:
   * crash tests hold the answer open (the agent acted, the sender has not seen the outcome).
   */
  beforeReply?: (message: ReceivedMessage) => Promise<void> | void;
  /** Awaited while a task is WORKING, before its reply is applied and pushed (tests hold a run there). */
  whileWorking?: (taskId: string) => Promise<void> | void;
  /** Approved messages must carry a valid signature of this Taskbay (docs/VERIFYING-APPROVALS.md); unset: digest only. */
  trustApprovalsFrom?: TrustedTaskbay;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The A2A service parameters of a request, as ReceivedMessage records them. */
function serviceHeaders(req: IncomingMessage): ReceivedMessage['headers'] {
  const headers: ReceivedMessage['headers'] = {};
  const version = header(req, 'a2a-version');
  if (version !== undefined) headers['a2a-version'] = version;
  const extensions = header(req, 'a2a-extensions');
  if (extensions !== undefined) headers['a2a-extensions'] = extensions;
  return headers;
}

/** A request body too large to read: answered, then the connection is closed (the rest is not read). */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, body: unknown): void {
  res.once('finish', () => req.destroy());
  sendJson(res, 413, body, { connection: 'close' });
}

/** One SSE event: a JSON-RPC response, or (HTTP+JSON, id null) the bare StreamResponse. */
function sse(res: ServerResponse, id: string | number | null, result: unknown) {
  res.write(`data: ${JSON.stringify(id === null ? result : { jsonrpc: '2.0', id, result })}\n\n`);
}

export async function startFixtureAgent(opts: FixtureAgentOptions = {}): Promise<FixtureAgent> {
  const host = opts.host ?? '127.0.0.1';
  const failures = new Map<Variant, { count: number; status: number }>();
  const calls: FixtureAgent['calls'] = [];
  const modes: Modes = {
    streaming: opts.streaming ?? false,
    push: opts.push ?? false,
    skillRouting: opts.skillRouting ?? false,
    httpJson: opts.httpJson ?? false,
  };
  const store = createTaskStore({ modes, deferredReplyMs: opts.deferredReplyMs, whileWorking: opts.whileWorking });
  const trust = createApprovalTrust(opts.trustApprovalsFrom);
  const dropNext = new Set<Variant>();
  let open = 0;
  let gate: Promise<void> = Promise.resolve();
  let baseUrl = '';

  /** The next injected failure of `variant`, counted down; answered once the body was read. */
  const injectedFailure = (variant: Variant, req: IncomingMessage, res: ServerResponse, body: (status: number) => unknown): boolean => {
    const failure = failures.get(variant);
    if (!failure || failure.count <= 0) return false;
    failure.count -= 1;
    req.resume();
    req.on('end', () => sendJson(res, failure.status, body(failure.status)));
    return true;
  };

  const streamMessage = async (
    variant: Variant,
    id: string | number | null,
    params: unknown,
    req: IncomingMessage,
    res: ServerResponse,
    headers: Record<string, string>,
  ) => {
    const r = store.begin(variant, params, serviceHeaders(req), 'stream', await trust.keysFor(params));
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...headers });
    open += 1;
    try {
      // Seed 003: "TASK_STATE_WORKING, then a final status event with TASK_STATE_INPUT_REQUIRED or TASK_STATE_COMPLETED."
      sse(res, id, { task: r.task });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const task = r.finish ? await r.finish() : r.task;
      if (dropNext.delete(variant)) {
        res.destroy();
        return;
      }
      sse(res, id, { statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } });
      await gate;
      res.end();
    } finally {
      open -= 1;
    }
  };

  /** SubscribeToTask: the Task first (A2A v1.0), then its status events while a run is under way. */
  const subscribe = (variant: Variant, id: string | number | null, params: unknown, res: ServerResponse, headers: Record<string, string>) => {
    const sub = store.subscribe(variant, params, (event, last) => {
      sse(res, id, event);
      if (last) res.end();
    });
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...headers });
    sse(res, id, { task: sub.task });
    if (!sub.unsubscribe) return void res.end();
    open += 1;
    res.once('close', () => {
      sub.unsubscribe!();
      open -= 1;
    });
  };

  const handleRpc = async (variant: Variant, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (injectedFailure(variant, req, res, (status) => ({ error: `Injected failure (HTTP ${status})` }))) return;
    const rpcError = (id: unknown, code: number, message: string, status = 200) =>
      sendJson(res, status, { jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code, message } });

    const body = await readJsonBody(req, REQUEST_MAX_BYTES);
    if (!body.ok && body.tooLarge) {
      return refuseTooLarge(req, res, { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Request body is larger than ${REQUEST_MAX_BYTES} bytes` } });
    }
    if (!body.ok) {
      // Not complete: the sender went away mid-body; there is no one to answer.
      if (!req.complete) return void res.destroy();
      return rpcError(null, -32700, 'Parse error: the body is not JSON');
    }
    const json = body.value;
    if (!isRequest(json)) {
      rpcError(isPlainObject(json) ? json.id : null, -32600, 'Invalid request: a JSON-RPC 2.0 request object with an id is required');
      return;
    }
    const id = json.id;
    calls.push({ variant, method: json.method, binding: 'JSONRPC' });

    const version = header(req, 'a2a-version');
    if (version !== undefined && version.trim() !== '' && !/^1\.0(\.\d+)?$/.test(version.trim())) {
      rpcError(id, -32009, `A2A version ${version} is not supported; this agent speaks ${A2A_VERSION}`);
      return;
    }

    // Echo the extensions this agent activated: those requested that its card advertises.
    const advertised = (buildCard(variant, baseUrl, modes).capabilities.extensions ?? []).map((e) => e.uri);
    const requested = (header(req, 'a2a-extensions') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const activated = requested.filter((uri) => advertised.includes(uri));
    const responseHeaders: Record<string, string> = activated.length > 0 ? { 'A2A-Extensions': activated.join(', ') } : {};

    try {
      let result: unknown;
      switch (json.method) {
        case 'SendMessage': {
          const sent = await store.sendMessage(variant, json.params, serviceHeaders(req), await trust.keysFor(json.params));
          await opts.beforeReply?.(sent.received);
          result = { task: sent.task };
          break;
        }
        case 'GetTask':
          result = store.getTask(variant, json.params);
          break;
        case 'CancelTask':
          result = store.cancelTask(variant, json.params);
          break;
        case 'SendStreamingMessage':
          await streamMessage(variant, id, json.params, req, res, responseHeaders);
          return;
        case 'SubscribeToTask':
          subscribe(variant, id, json.params, res, responseHeaders);
          return;
        default:
          throw new RpcFailure(-32601, `Method not found: ${json.method.slice(0, 100)}`);
      }
      sendJson(res, 200, { jsonrpc: '2.0', id, result }, responseHeaders);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof RpcFailure) {
        rpcError(id, err.code, err.message);
        return;
      }
      rpcError(id, -32603, 'Internal error');
    }
  };

  /** The HTTP+JSON binding: the same behaviour as JSON-RPC on REST routes. */
  const handleRest = async (variant: Variant, route: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (injectedFailure(variant, req, res, (status) => ({ error: { code: status, message: `Injected failure (HTTP ${status})` } }))) return;
    const fail = (status: number, message: string) => sendJson(res, status, { error: { code: status, message } });
    // A POST without a body (no Content-Length, or 0, and not chunked) stands for {}.
    const hasBody = req.method === 'POST' && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
    let params: unknown = {};
    if (hasBody) {
      const body = await readJsonBody(req, REQUEST_MAX_BYTES);
      if (!body.ok && body.tooLarge) return refuseTooLarge(req, res, { error: { code: 413, message: 'Request body is too large' } });
      if (!body.ok) return req.complete ? fail(400, 'The body is not JSON') : void res.destroy();
      params = body.value;
    } else req.resume();
    const taskRoute = /^\/tasks\/([^/:]+)(?::(cancel|subscribe))?$/.exec(route);
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    let method: string;
    if (req.method === 'POST' && route === '/message:send') method = 'SendMessage';
    else if (req.method === 'POST' && route === '/message:stream') method = 'SendStreamingMessage';
    else if (req.method === 'GET' && taskRoute && !taskRoute[2]) method = 'GetTask';
    else if (req.method === 'POST' && taskRoute?.[2] === 'cancel') method = 'CancelTask';
    else if (req.method === 'GET' && taskRoute?.[2] === 'subscribe') method = 'SubscribeToTask';
    else return fail(404, 'Not found');
    calls.push({ variant, method, binding: 'HTTP+JSON' });
    const idParams = taskRoute
      ? { id: decodeURIComponent(taskRoute[1]!), ...(query.has('historyLength') ? { historyLength: Number(query.get('historyLength')) } : {}) }
      : undefined;
    try {
      switch (method) {
        case 'SendMessage':
          return sendJson(res, 200, { task: (await store.sendMessage(variant, params, serviceHeaders(req), await trust.keysFor(params))).task });
        case 'GetTask':
          return sendJson(res, 200, store.getTask(variant, idParams));
        case 'CancelTask':
          return sendJson(res, 200, store.cancelTask(variant, idParams));
        case 'SendStreamingMessage':
          return await streamMessage(variant, null, params, req, res, {});
        default:
          return subscribe(variant, null, idParams, res, {});
      }
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      if (err instanceof RpcFailure) return fail(err.code === -32001 ? 404 : 400, err.message);
      return fail(500, 'Internal error');
    }
  };

  const isVariant = (v: string | undefined): v is Variant => (VARIANTS as readonly (string | undefined)[]).includes(v);
  const internalError = (res: ServerResponse) => () => {
    if (!res.headersSent) sendJson(res, 500, { error: 'Internal error' });
    else res.destroy();
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const rest = /^\/([a-z0-9]+)\/rest(\/.*)$/.exec(path);
    if (rest && modes.httpJson && isVariant(rest[1])) {
      handleRest(rest[1], rest[2]!, req, res).catch(internalError(res));
      return;
    }
    const match = /^\/([a-z0-9]+)\/(card\.json|a2a)$/.exec(path);
    const variant = match && isVariant(match[1]) ? match[1] : undefined;

    if (req.method === 'GET' && path === '/') {
      sendJson(res, 200, { variants: Object.fromEntries(VARIANTS.map((v) => [v, `${baseUrl}/${v}/card.json`])) });
      return;
    }
    if (!variant || !match) {
      req.resume();
      sendJson(res, 404, { error: 'Not found' });
      return;
    }
    if (match[2] === 'card.json') {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        req.resume();
        sendJson(res, 405, { error: 'Method not allowed' }, { Allow: 'GET' });
        return;
      }
      sendJson(res, 200, buildCard(variant, baseUrl, modes));
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      sendJson(res, 405, { error: 'Method not allowed' }, { Allow: 'POST' });
      return;
    }
    handleRpc(variant, req, res).catch(internalError(res));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  baseUrl = (opts.publicUrl ?? `http://${urlHost}:${port}`).replace(/\/+$/, '');

  return {
    baseUrl,
    cardUrl: (variant) => `${baseUrl}/${variant}/card.json`,
    a2aUrl: (variant) => `${baseUrl}/${variant}/a2a`,
    received: store.received,
    pushes: store.pushes,
    calls,
    holdStreams() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        release();
        gate = Promise.resolve();
      };
    },
    dropNextStream(variant) {
      dropNext.add(variant);
    },
    openStreams: () => open,
    failNext(variant, count, status = 503) {
      failures.set(variant, { count, status });
    },
    getTask: store.peek,
    trustApprovalsFrom: trust.set,
    reset() {
      store.reset();
      failures.clear();
      calls.length = 0;
      dropNext.clear();
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/** A JSON-RPC 2.0 request object with an id (notifications are not served). */
function isRequest(v: unknown): v is { jsonrpc: '2.0'; method: string; id: string | number; params?: unknown } {
  return isPlainObject(v) && v.jsonrpc === '2.0' && typeof v.method === 'string' && (typeof v.id === 'string' || typeof v.id === 'number');
}
