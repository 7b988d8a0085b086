import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { hostNamesThisMachine } from '../http/host.js';
import { bearerToken, readJsonBody } from '../http/json.js';
import type { Route, RouteContext } from '../http/route.js';
import { MCP_LIMITS } from '../limits.js';
import { tokenKeyOf } from './client-agent.js';
import { taskbayMcpServer } from './server.js';
import { type McpSession, type Opened, sessionsOf } from './sessions.js';
import { gatewayServer } from './gateway.js';
import { connectUpstream, UpstreamGuard, upstreamProblem } from './upstream-client.js';
import { upstreamNamed } from './upstreams.js';
import { errorForLog, log } from '../log.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

// Taskbay's MCP server at /mcp and the gateway at /mcp/servers/<name> (Streamable HTTP,
// docs/MCP.md): the SDK's transport behind
// Taskbay's own checks. Every request: a Host that names this machine or the public host, an
// Origin (when a browser sends one) of the public URL, TASKBAY_CORS_ORIGINS or this machine
// (DNS rebinding), and a live API token (Authorization: Bearer, as for GraphQL); a POST body of at
// most MCP_LIMITS.bodyMaxBytes, read and parsed here.

const SESSION_HEADER = 'mcp-session-id';

function refuse(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}) {
  if (res.headersSent) return;
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Whether a browser's Origin may reach /mcp: absent (not a browser), the public URL's, a configured one, or this machine's. */
function originAllowed(origin: string | undefined, ctx: RouteContext): boolean {
  if (origin === undefined) return true;
  const { publicUrl, corsOrigins } = ctx.deps.config;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin === new URL(publicUrl).origin || corsOrigins.includes(url.origin)) return true;
  return (url.protocol === 'http:' || url.protocol === 'https:') && hostNamesThisMachine(url.host, 'http://localhost');
}

/** Where a request goes: Taskbay's own MCP server, or the gateway to one upstream. */
type Target = { kind: 'taskbay' } | { kind: 'gateway'; name: string };

async function handle(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, target: Target) {
  if (!hostNamesThisMachine(req.headers.host, ctx.deps.config.publicUrl)) {
    return refuse(res, 403, -32000, 'the Host header does not name this Taskbay (DNS rebinding protection; set TASKBAY_PUBLIC_URL)');
  }
  if (!originAllowed(req.headers.origin, ctx)) {
    return refuse(res, 403, -32000, 'the Origin is not allowed to reach /mcp (DNS rebinding protection; see TASKBAY_CORS_ORIGINS)');
  }
  const token = bearerToken(req);
  const em = ctx.orm.em.fork() as unknown as EntityManager;
  const viewer = token ? await ctx.viewerForToken(em, token) : null;
  if (!token || !viewer) {
    return refuse(res, 401, -32001, 'Taskbay refused the API token (send Authorization: Bearer <api token>)', { 'www-authenticate': 'Bearer realm="taskbay"' });
  }
  let body: unknown;
  if (req.method === 'POST') {
    const read = await readJsonBody(req, MCP_LIMITS.bodyMaxBytes);
    if (!read.ok) {
      return read.tooLarge
        ? refuse(res, 413, -32600, `the request body is larger than ${MCP_LIMITS.bodyMaxBytes} bytes`, { connection: 'close' })
        : refuse(res, 400, -32700, `Parse error: ${read.error}`);
    }
    body = read.value;
  }
  const path = target.kind === 'taskbay' ? '/mcp' : `/mcp/servers/${target.name}`;
  const sessions = sessionsOf(ctx.orm);
  const tokenKey = tokenKeyOf(token);
  const sessionId = req.headers[SESSION_HEADER];
  let session: McpSession;
  if (typeof sessionId === 'string') {
    const found = sessions.find(sessionId, tokenKey, path);
    if (!found) return refuse(res, 404, -32001, 'Session not found: initialize a new session');
    session = found;
    session.viewer = viewer;
  } else {
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return refuse(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header, and the request is not an initialize');
    }
    // The server is read when a session opens; its call rules are read again for every call (gateway.ts).
    const row = target.kind === 'gateway' ? await upstreamNamed(em, viewer.tenantId, target.name) : null;
    if (target.kind === 'gateway' && !row) return refuse(res, 404, -32001, `no MCP server named ${JSON.stringify(target.name.slice(0, 100))} is registered`);
    const refused = sessions.refusal(tokenKey);
    if (refused) return refuse(res, refused.status, -32000, refused.message, refused.status === 503 ? { 'retry-after': '30' } : {});
    const common = { orm: ctx.orm, pubsub: ctx.pubsub, config: ctx.deps.config, approvalKeys: ctx.deps.approvalKeys, tokenKey };
    let opened: Opened;
    if (row) {
      let upstream: Client;
      const guard = new UpstreamGuard();
      try {
        upstream = await connectUpstream(row, ctx.deps, { info: body.params.clientInfo, capabilities: body.params.capabilities }, guard);
      } catch (e) {
        log.warn({ err: errorForLog(e) }, `[mcp] the MCP server ${row.name} did not answer initialize`);
        return refuse(res, 502, -32603, `the MCP server ${row.name} could not be reached: ${upstreamProblem(e)}`);
      }
      let relay: McpSession['relay'];
      opened = sessions.open(tokenKey, path, viewer, (handle) => {
        handle.closers.push(() => upstream.close());
        const gateway = gatewayServer({ ...common, ...handle, row, upstream, guard, fetch: ctx.deps.network.fetch });
        relay = gateway.relay;
        return gateway.server;
      });
      if (!opened.ok) await upstream.close();
      else opened.session.relay = relay;
    } else {
      opened = sessions.open(tokenKey, path, viewer, (handle) => taskbayMcpServer({ ...common, who: handle.who }));
    }
    if (!opened.ok) return refuse(res, opened.status, -32000, opened.message);
    session = opened.session;
    await session.server.connect(session.transport);
  }
  session.open++;
  session.lastSeen = Date.now();
  const ids = requestIds(body);
  const controllers = ids.map((id) => {
    const c = new AbortController();
    session.calls.set(id, c);
    return [id, c] as const;
  });
  res.once('close', () => {
    session.open--;
    session.lastSeen = Date.now();
    for (const [id, c] of controllers) {
      if (!res.writableFinished) c.abort();
      if (session.calls.get(id) === c) session.calls.delete(id);
    }
  });
  if (session.relay && (await session.relay(req, res, body, session.id))) return;
  await session.transport.handleRequest(req, res, body);
}

/** The ids of the JSON-RPC requests (not notifications or responses) a POST carries. */
function requestIds(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) =>
    m && typeof m === 'object' && 'method' in m && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number') ? [String(m.id)] : [],
  );
}

export const mcpRoutes: Route[] = (['POST', 'GET', 'DELETE'] as const).flatMap((method) => [
  { method, path: /^\/mcp$/, handler: (req, res, ctx) => handle(req, res, ctx, { kind: 'taskbay' }) },
  { method, path: /^\/mcp\/servers\/([a-z0-9-]{1,200})$/, handler: (req, res, ctx, [name]) => handle(req, res, ctx, { kind: 'gateway', name: name! }) },
]) satisfies Route[];
