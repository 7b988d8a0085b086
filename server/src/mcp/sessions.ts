import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Viewer } from '../access.js';
import { MCP_LIMITS } from '../limits.js';

// The MCP sessions of one instance (Streamable HTTP, stateful: the SDK's transport keeps each
// session's streams). A session belongs to the API token that opened it: another token naming
// its id is told it does not exist. A session lives in the instance that opened it; after a
// restart, or on another instance, its id is unknown (404), and the client initializes again
// (the spec's rule for a 404), while the requests it opened stay in the database for
// get_approval.

export interface McpSession {
  readonly id: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  readonly tokenKey: string;
  /** The path it was opened on (/mcp, /mcp/servers/<name>): it answers there only. */
  readonly path: string;
  viewer: Viewer;
  /** Closed with the session (the gateway's upstream connection). */
  readonly closers: (() => Promise<void>)[];
  /** JSON-RPC requests in flight by id: aborted when the HTTP request that carried one closes before its answer. */
  readonly calls: Map<string, AbortController>;
  lastSeen: number;
  /** HTTP requests of this session still open (a long wait, a GET stream): it is not idle meanwhile. */
  open: number;
  /** A gateway session's fast path for passed calls, offered each POST before the SDK transport (gateway.ts). */
  relay?: (req: IncomingMessage, res: ServerResponse, body: unknown, sessionId: string) => Promise<boolean>;
}

/** What a session's server may know of its session. */
export interface SessionHandle {
  /** The session's person, as the latest request's token says. */
  who(): Viewer;
  readonly closers: (() => Promise<void>)[];
  /** Aborted when the HTTP request that carried this JSON-RPC request closed before its answer. */
  abandoned(requestId: string | number): AbortSignal | null;
}

export type Opened = { ok: true; session: McpSession } | { ok: false; status: 429 | 503; message: string };

export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(60_000, MCP_LIMITS.sessionIdleSeconds * 1000));
    this.sweeper.unref();
  }

  get size() {
    return this.sessions.size;
  }

  /** The session of this id, if this token opened it on this path. */
  find(id: string, tokenKey: string, path: string): McpSession | null {
    const s = this.sessions.get(id);
    return s && s.tokenKey === tokenKey && s.path === path ? s : null;
  }

  /** Whether a new session of this token would be refused, and why. */
  refusal(tokenKey: string): { status: 429 | 503; message: string } | null {
    if (this.sessions.size >= MCP_LIMITS.sessionsMax) {
      return { status: 503, message: `this Taskbay instance holds ${MCP_LIMITS.sessionsMax} MCP sessions; try again later` };
    }
    let mine = 0;
    for (const s of this.sessions.values()) if (s.tokenKey === tokenKey) mine++;
    if (mine >= MCP_LIMITS.sessionsPerTokenMax) {
      return { status: 429, message: `this API token has ${MCP_LIMITS.sessionsPerTokenMax} open MCP sessions; end one (DELETE) or let one idle out` };
    }
    return null;
  }

  /** A new session for an initialize request; it joins the registry once the transport gives it its id. */
  open(tokenKey: string, path: string, viewer: Viewer, serverFor: (handle: SessionHandle) => Server): Opened {
    const refused = this.refusal(tokenKey);
    if (refused) return { ok: false, ...refused };
    const closers: (() => Promise<void>)[] = [];
    const calls = new Map<string, AbortController>();
    const state = { viewer, lastSeen: Date.now(), open: 0 };
    const server = serverFor({
      who: () => state.viewer,
      closers,
      abandoned: (requestId) => calls.get(String(requestId))?.signal ?? null,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    const session: McpSession = Object.assign(state, { id: '', transport, server, tokenKey, path, closers, calls });
    Object.defineProperty(session, 'id', { get: () => transport.sessionId ?? '' });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      for (const close of closers) void close().catch(() => {});
    };
    return { ok: true, session };
  }

  private closeIdle(now = Date.now()) {
    for (const s of [...this.sessions.values()]) {
      if (s.open === 0 && now - s.lastSeen > MCP_LIMITS.sessionIdleSeconds * 1000) void this.close(s);
    }
  }

  async close(s: McpSession) {
    this.sessions.delete(s.id);
    await s.server.close().catch(() => {});
    for (const close of s.closers) await close().catch(() => {});
  }

  /** Ends the sessions of one tenant on one path (a removed MCP server's). */
  async closeOn(tenantId: string, path: string) {
    const ending = [...this.sessions.values()].filter((s) => s.path === path && s.viewer.tenantId === tenantId);
    await Promise.all(ending.map((s) => this.close(s)));
  }

  async closeAll() {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.close(s)));
  }
}

const registries = new WeakMap<MikroORM, McpSessions>();

/** The sessions of the instance this ORM belongs to (one registry per instance, made on first use). */
export function sessionsOf(orm: MikroORM): McpSessions {
  const known = registries.get(orm);
  if (known) return known;
  const made = new McpSessions();
  registries.set(orm, made);
  return made;
}

/** Ends the instance's sessions (on stop); a later request makes a fresh registry. */
export async function closeSessionsOf(orm: MikroORM): Promise<void> {
  const r = registries.get(orm);
  registries.delete(orm);
  await r?.closeAll();
}
