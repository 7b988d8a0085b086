import { parseArgs } from 'node:util';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { env as taskbayEnv } from '../lib/taskbay-env.js';

// `taskbay mcp-proxy [URL]` (docs/MCP.md, "`taskbay mcp-proxy`: the stdio bridge"): a stdio
// MCP server for hosts that only start servers as processes, relaying to a Streamable HTTP MCP
// URL (Taskbay's /mcp by default) with the API token of TASKBAY_TOKEN. A transport-level relay
// on the SDK's own transports: every JSON-RPC message from stdin goes to the URL unchanged, every
// message from the URL (responses, notifications, server-to-client requests) goes to stdout
// unchanged. stdout is the protocol: nothing else is written there; what went wrong goes to
// stderr, and to the host as the JSON-RPC error of the request it cost, so no request is left
// without an answer. It imports nothing of the server, so it starts fast.
//
// It ends when stdin ends or on SIGINT/SIGTERM/SIGHUP (the session is ended with DELETE, exit 0),
// and when the URL's side is gone: Taskbay unreachable, the token refused, or the session unknown
// (404: Taskbay restarted; a stdio host restarts the server, which initializes a new session).

const USAGE = `usage: taskbay mcp-proxy [URL]
  a stdio MCP server relaying every message to the Streamable HTTP MCP endpoint URL
  (default: TASKBAY_URL + /mcp, TASKBAY_URL default http://localhost:4000), with
  Authorization: Bearer TASKBAY_TOKEN. stdin/stdout carry the protocol; errors go to stderr.
  Exit 0 when stdin ends or on a signal, 64 for bad usage, 69 when the endpoint is
  unreachable or ended the session, 77 when it refused the token.`;

/** Exit codes (sysexits.h, as `taskbay guard`'s). */
export const MCP_PROXY_EXIT = { OK: 0, USAGE: 64, UNAVAILABLE: 69, REFUSED: 77 } as const;

/** The longest part of an error answer's body quoted in a message. */
const QUOTE_MAX_CHARS = 500;

/** How long the session's DELETE may take on the way out (a stdio host waits about 2 s before it kills the process). */
const END_SESSION_MS = 1500;

/** JSON-RPC error codes of the answers the relay writes itself (implementation-defined server errors). */
const RELAY_ERROR = { UNREACHABLE: -32000, NO_ANSWER: -32001 } as const;

const say = (line: string) => process.stderr.write(`taskbay mcp-proxy: ${line}\n`);

/** The endpoint answered a message with an HTTP error: its status and what its body said. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly rpcCode: number | null,
    message: string,
  ) {
    super(message);
  }
}

/** What went wrong upstream, for the host's error answer and the exit code. */
interface Failure {
  message: string;
  code: number;
  /** The exit code when the relay cannot go on, else null (the next message may succeed). */
  exit: number | null;
}

function quote(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > QUOTE_MAX_CHARS ? `${line.slice(0, QUOTE_MAX_CHARS)}…` : line;
}

/** A JSON-RPC error body's code and message (Taskbay's refusals are these), or the body as text. */
async function refusalOf(res: Response): Promise<Refused> {
  const text = await res.text().catch(() => '');
  let code: number | null = null;
  let message = quote(text) || res.statusText;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body?.error?.message === 'string') message = quote(body.error.message);
    if (typeof body?.error?.code === 'number') code = body.error.code;
  } catch {
    // not JSON: the text as it is
  }
  return new Refused(res.status, code, message);
}

/** The ids of the JSON-RPC requests in a POST body (the SDK's transport sends JSON.stringify(message)). */
function requestIdsOf(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).filter((m) => isJSONRPCRequest(m)).map((m) => m.id);
  } catch {
    return [];
  }
}

const isAbort = (e: unknown) => e instanceof Error && (e.name === 'AbortError' || (e.cause as Error | undefined)?.name === 'AbortError');

function causeOf(e: unknown): string {
  const cause = e instanceof Error ? (e.cause as { code?: string; message?: string } | undefined) : undefined;
  const own = e instanceof Error ? e.message : String(e);
  return cause?.message ?? cause?.code ?? own;
}

/** The response with a body that reports its end (null) or its error to `onEnd`, once. */
function reportingEnd(res: Response, onEnd: (error: unknown) => void): Response {
  if (!res.body) {
    onEnd(null);
    return res;
  }
  const reader = res.body.getReader();
  let ended = false;
  const end = (error: unknown) => {
    if (ended) return;
    ended = true;
    onEnd(error);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          end(null);
        } else controller.enqueue(value);
      } catch (e) {
        controller.error(e);
        end(e);
      }
    },
    cancel(reason) {
      end(reason ?? null);
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

function parseCommandLine(args: string[]): { url: URL; token: string } | { usage: string; code: number } {
  let positionals: string[];
  let help: boolean | undefined;
  try {
    const parsed = parseArgs({ args, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
    positionals = parsed.positionals;
    help = parsed.values.help;
  } catch (e) {
    return { usage: `${(e as Error).message}\n${USAGE}`, code: MCP_PROXY_EXIT.USAGE };
  }
  if (help) return { usage: USAGE, code: MCP_PROXY_EXIT.OK };
  if (positionals.length > 1) return { usage: `one URL at most, got ${positionals.length}\n${USAGE}`, code: MCP_PROXY_EXIT.USAGE };
  const e = taskbayEnv();
  const given = positionals[0] ?? `${e.url}/mcp`;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return { usage: `not a URL: ${JSON.stringify(given.slice(0, 200))}${positionals[0] ? '' : ' (from TASKBAY_URL)'}`, code: MCP_PROXY_EXIT.USAGE };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { usage: `the URL must be http: or https:, not ${url.protocol}`, code: MCP_PROXY_EXIT.USAGE };
  }
  if (url.username || url.password) {
    return { usage: 'the URL must not carry a user name or password: the API token goes in TASKBAY_TOKEN', code: MCP_PROXY_EXIT.USAGE };
  }
  if (!e.token) return { usage: 'set TASKBAY_TOKEN to an API token (sent as Authorization: Bearer)', code: MCP_PROXY_EXIT.USAGE };
  if (!/^[\x21-\x7e]+$/.test(e.token)) {
    return { usage: 'TASKBAY_TOKEN holds a space, a line break or a character outside ASCII: an API token has none', code: MCP_PROXY_EXIT.USAGE };
  }
  return { url, token: e.token };
}

/** Entry from cli.ts: runs until stdin ends, a signal, or the endpoint is gone, then exits. */
export async function runMcpProxy(args: string[]): Promise<void> {
  const line = parseCommandLine(args);
  if ('usage' in line) {
    // Help asked for goes to stdout (no host is reading it); anything else is an error, on stderr.
    if (line.code === MCP_PROXY_EXIT.OK) process.stdout.write(`${line.usage}\n`);
    else say(line.usage);
    process.exit(line.code);
  }
  const { url, token } = line;
  const where = url.href;

  /** Requests of the host sent on and not answered yet; the relay answers them if the endpoint cannot. */
  const pending = new Set<RequestId>();
  /** Requests the relay answered itself: a late answer from the endpoint is not passed on a second time. */
  const answeredHere = new Set<RequestId>();
  let initializeId: RequestId | null = null;
  let ending = false;
  /** Errors of watchedFetch, handled there or by the send() they fail: the SDK's onerror has nothing to add. */
  const reported = new WeakSet<Error>();

  const host = new StdioServerTransport();

  const answer = (id: RequestId, failure: Failure) => {
    if (!pending.delete(id)) return;
    answeredHere.add(id);
    void host.send({ jsonrpc: '2.0', id, error: { code: failure.code, message: failure.message } }).catch(() => {});
  };

  const failureOf = (e: unknown): Failure => {
    if (e instanceof Refused) {
      const hint =
        e.status === 401 || e.status === 403
          ? ' Check TASKBAY_TOKEN: it must be a live API token of this Taskbay.'
          : e.status === 404
            ? ' The session or the endpoint is unknown there (after a restart of Taskbay, restart this server to initialize a new session).'
            : '';
      return {
        message: `${where} refused the request (HTTP ${e.status}): ${e.message}.${hint}`,
        code: e.rpcCode ?? RELAY_ERROR.UNREACHABLE,
        exit: e.status === 401 || e.status === 403 ? MCP_PROXY_EXIT.REFUSED : e.status === 404 ? MCP_PROXY_EXIT.UNAVAILABLE : null,
      };
    }
    if (e instanceof TypeError && e.message === 'fetch failed') {
      return { message: `could not reach ${where}: ${causeOf(e)}`, code: RELAY_ERROR.UNREACHABLE, exit: MCP_PROXY_EXIT.UNAVAILABLE };
    }
    // The SDK's own refusals (a redirect it does not follow, an answer that is not JSON-RPC).
    return { message: `${where}: ${e instanceof Error ? e.message : String(e)}`, code: RELAY_ERROR.UNREACHABLE, exit: null };
  };

  /** Every request still open is answered with `why`, the session is ended when `endSession`, then exit. */
  async function stop(code: number, why: Failure | null, endSession: boolean) {
    if (ending) return;
    ending = true;
    if (why) {
      say(why.message);
      for (const id of [...pending]) answer(id, why);
    }
    if (endSession && upstream.sessionId) {
      const timer = new Promise((resolve) => setTimeout(resolve, END_SESSION_MS).unref());
      await Promise.race([upstream.terminateSession().catch(() => {}), timer]);
    }
    await upstream.close().catch(() => {});
    await host.close().catch(() => {});
    // stdout is a pipe: what the relay wrote (the error answers above) is flushed before the exit.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
    process.exit(code);
  }

  const fail = (e: unknown, id: RequestId | null) => {
    if (ending) return;
    const failure = failureOf(e);
    if (failure.exit !== null) return void stop(failure.exit, failure, false);
    say(failure.message);
    if (id !== null) answer(id, failure);
  };

  /**
   * fetch, watched: an HTTP error is a Refused with what the endpoint said; a POST's event stream
   * that ends or breaks leaves no request of it unanswered; a GET stream that cannot reach the
   * endpoint, or is refused for the token or the session, means the session is gone.
   */
  const watchedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? 'GET').toUpperCase();
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (e) {
      if (e instanceof Error) reported.add(e);
      // A POST's failure reaches its send() (and so its request). The standalone GET stream has no
      // request to answer; the SDK reopens it when it ends, and one it cannot reach is gone.
      if (method === 'GET' && !isAbort(e) && !ending) void stop(MCP_PROXY_EXIT.UNAVAILABLE, failureOf(e), false);
      throw e;
    }
    if (res.status < 400) {
      const ids = method === 'POST' ? requestIdsOf(init?.body) : [];
      if (!ids.length || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res;
      return reportingEnd(res, (error) => {
        // The SDK parses the stream's last events with promise jobs only: by the next turn of the
        // event loop it has passed on every answer the stream held.
        setImmediate(() => {
          if (ending || !ids.some((id) => pending.has(id))) return;
          const broke = error !== null && !isAbort(error);
          const failure: Failure = {
            message: broke
              ? `the connection to ${where} broke before it answered (${causeOf(error)}); a request it opened stays there (get_approval)`
              : `${where} ended its answer stream without answering`,
            code: RELAY_ERROR.NO_ANSWER,
            exit: null,
          };
          say(failure.message);
          for (const id of ids) answer(id, failure);
        });
      });
    }
    const refused = await refusalOf(res);
    if (method === 'POST') {
      reported.add(refused);
      throw refused;
    }
    // A GET refused for the token or the session: the session is gone. Anything else (405: no
    // standalone stream; 409: the endpoint still holds the stream this one replaces) the SDK
    // reports and handles: the session goes on over POST.
    const failure = failureOf(refused);
    if (method === 'GET' && failure.exit !== null && !ending) void stop(failure.exit, failure, false);
    return new Response(refused.message, { status: res.status, statusText: res.statusText, headers: res.headers });
  };

  const upstream = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    // The SDK's reconnection of the standalone GET stream is kept (its defaults: after 1 s, then
    // 1.5 s): a proxy in between may close an idle stream, and the endpoint may still hold the
    // old one for a moment. A reopen that cannot reach the endpoint ends the relay (watchedFetch).
    fetch: watchedFetch,
  });

  host.onmessage = (message: JSONRPCMessage) => {
    if (ending) return;
    let id: RequestId | null = null;
    if (isJSONRPCRequest(message)) {
      id = message.id;
      pending.add(id);
      if (message.method === 'initialize') initializeId = id;
    } else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      // The host expects no answer to a request it cancelled.
      const cancelled = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (cancelled !== undefined) pending.delete(cancelled);
    }
    upstream.send(message).catch((e) => fail(e, id));
  };
  host.onerror = (e) => say(`stdin: ${e.message}`);

  upstream.onmessage = (message: JSONRPCMessage) => {
    if (ending) return;
    if ('id' in message && !('method' in message) && message.id !== undefined) {
      if (answeredHere.delete(message.id)) return;
      pending.delete(message.id);
      if (message.id === initializeId && isJSONRPCResultResponse(message)) {
        // What a client transport is told after initialize: the endpoint checks this header on every later request.
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === 'string') upstream.setProtocolVersion(version);
      }
    }
    void host.send(message).catch(() => {});
  };
  // The SDK reports here what it also throws from send() (answered in fail) and what has no
  // request: a stream it could not read, a message that is not JSON-RPC.
  upstream.onerror = (e) => {
    if (!ending && !reported.has(e) && !isAbort(e)) say(e.message);
  };

  process.stdin.once('end', () => void stop(MCP_PROXY_EXIT.OK, null, true));
  process.stdout.on('error', () => void stop(MCP_PROXY_EXIT.OK, null, true));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => void stop(MCP_PROXY_EXIT.OK, null, true));

  await upstream.start();
  await host.start();
}
