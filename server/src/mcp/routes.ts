import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { hostNamesThisMachine } from '../http/host.js';
import { bearerToken, readJsonBody } from '../http/json.js';
import type { Route, RouteContext } from '../http/route.js';
import { MCP_LIMITS } from '../limits.js';
import { tokenKeyOf } from './client-agent.js';
import { taskbayMcpServer } from './server.js';
import { sessionsOf } from './sessions.js';

// Taskbay's MCP server at /mcp (Streamable HTTP, docs/MCP.md): the SDK's transport behind
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

async function handle(req: IncomingMessage, res: ServerResponse, ctx: RouteContext) {
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
  const sessions = sessionsOf(ctx.orm);
  const tokenKey = tokenKeyOf(token);
  const sessionId = req.headers[SESSION_HEADER];
  let session;
  if (typeof sessionId === 'string') {
    session = sessions.find(sessionId, tokenKey);
    if (!session) return refuse(res, 404, -32001, 'Session not found: initialize a new session');
    session.viewer = viewer;
  } else {
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return refuse(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header, and the request is not an initialize');
    }
    const opened = sessions.open(tokenKey, viewer, (who) =>
      taskbayMcpServer({ orm: ctx.orm, pubsub: ctx.pubsub, config: ctx.deps.config, approvalKeys: ctx.deps.approvalKeys, who, tokenKey }),
    );
    if (!opened.ok) return refuse(res, opened.status, -32000, opened.message, opened.status === 503 ? { 'retry-after': '30' } : {});
    session = opened.session;
    await session.server.connect(session.transport);
  }
  session.open++;
  session.lastSeen = Date.now();
  const current = session;
  res.once('close', () => {
    current.open--;
    current.lastSeen = Date.now();
  });
  await session.transport.handleRequest(req, res, body);
}

export const mcpRoutes: Route[] = (['POST', 'GET', 'DELETE'] as const).map((method) => ({
  method,
  path: /^\/mcp$/,
  handler: (req, res, ctx) => handle(req, res, ctx),
}));
