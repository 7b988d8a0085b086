import { randomUUID } from 'node:crypto';
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
  viewer: Viewer;
  lastSeen: number;
  /** HTTP requests of this session still open (a long wait, a GET stream): it is not idle meanwhile. */
  open: number;
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

  /** The session of this id, if this token opened it. */
  find(id: string, tokenKey: string): McpSession | null {
    const s = this.sessions.get(id);
    return s && s.tokenKey === tokenKey ? s : null;
  }

  /** A new session for an initialize request; it joins the registry once the transport gives it its id. */
  open(tokenKey: string, viewer: Viewer, serverFor: (who: () => Viewer) => Server): Opened {
    if (this.sessions.size >= MCP_LIMITS.sessionsMax) {
      return { ok: false, status: 503, message: `this Taskbay instance holds ${MCP_LIMITS.sessionsMax} MCP sessions; try again later` };
    }
    let mine = 0;
    for (const s of this.sessions.values()) if (s.tokenKey === tokenKey) mine++;
    if (mine >= MCP_LIMITS.sessionsPerTokenMax) {
      return {
        ok: false,
        status: 429,
        message: `this API token has ${MCP_LIMITS.sessionsPerTokenMax} open MCP sessions; end one (DELETE) or let one idle out`,
      };
    }
    let session: McpSession;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    const server = serverFor(() => session.viewer);
    session = {
      get id() {
        return transport.sessionId ?? '';
      },
      transport,
      server,
      tokenKey,
      viewer,
      lastSeen: Date.now(),
      open: 0,
    };
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
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
