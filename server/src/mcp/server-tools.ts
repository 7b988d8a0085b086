import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireAdmin, type Access } from '../access.js';
import type { Config } from '../config.js';
import { sql } from '../db/sql.js';
import { isPlainObject } from '../lib/untrusted.js';
import { MCP_GATEWAY_LIMITS } from '../limits.js';
import { callFacts, decideCall, type McpCallOutcome } from './call-rules.js';
import type { McpUpstreamRow } from './entities.js';
import { MCP_SERVER_INFO } from './server.js';
import { connectUpstream, UpstreamGuard, upstreamTimeoutMs } from './upstream-client.js';

// What an admin sees of one server's tools (the console's MCP servers page): the tools it lists
// now, read over a connection of its own, each with the call rule that decides a call of it. A
// rule may read the call's arguments, which no listing has: the outcome is the one for a call
// without arguments, and `argumentsMatter` says when a rule up to the deciding one reads them.
// What the server says is hostile: names and descriptions are clipped, the list is capped.

export interface McpToolView {
  name: string;
  title: string | null;
  description: string | null;
  readOnlyHint: boolean | null;
  destructiveHint: boolean | null;
  outcome: McpCallOutcome;
  /** 1-based; null when no rule matched and the call is held. */
  rule: number | null;
  argumentsMatter: boolean;
}

export interface McpToolsListing {
  tools: McpToolView[];
  /** Why the server could not be listed (unreachable, refused, too large); null when it was. */
  error: string | null;
}

const clip = (s: unknown) => (typeof s === 'string' ? [...s].slice(0, MCP_GATEWAY_LIMITS.toolTextMaxChars).join('') : null);
const hint = (v: unknown) => (typeof v === 'boolean' ? v : null);

export async function listServerTools(
  em: EntityManager,
  access: Access,
  deps: { network: { fetch: typeof fetch }; config: Pick<Config, 'mcpStdio'> },
  server: McpUpstreamRow,
): Promise<McpToolsListing> {
  requireAdmin(access, 'lists the tools of MCP servers');
  const listed: Tool[] = [];
  const guard = new UpstreamGuard();
  try {
    const client = await connectUpstream(
      server,
      deps,
      { info: { name: `${MCP_SERVER_INFO.name}-console`, version: MCP_SERVER_INFO.version }, capabilities: {} },
      guard,
    );
    try {
      let cursor: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: upstreamTimeoutMs() });
        for (const t of page.tools) {
          if (listed.length >= MCP_GATEWAY_LIMITS.toolsMax) {
            throw new Error(`it lists more than ${MCP_GATEWAY_LIMITS.toolsMax} tools; Taskbay serves at most that many`);
          }
          if (isPlainObject(t) && typeof t.name === 'string') listed.push(t);
        }
        cursor = page.nextCursor;
        if (!cursor) break;
      }
    } finally {
      await client.close().catch(() => {});
    }
  } catch (e) {
    return { tools: [], error: `Taskbay could not list the tools of ${server.name}: ${clip(e instanceof Error ? e.message : String(e))}` };
  }
  // The rules as stored now, as the gateway reads them for each call.
  const [current] = await sql<{ rules: McpUpstreamRow['rules'] }>(em, 'select rules from mcp_upstream where id = ?', [server.id]);
  const rules = current?.rules ?? [];
  return {
    error: null,
    tools: listed.map((tool) => {
      const verdict = decideCall(rules, callFacts(server.name, tool, tool.name, {}));
      const upTo = verdict.rule ?? rules.length;
      return {
        name: clip(tool.name) ?? '',
        title: clip(tool.title ?? tool.annotations?.title),
        description: clip(tool.description),
        readOnlyHint: hint(tool.annotations?.readOnlyHint),
        destructiveHint: hint(tool.annotations?.destructiveHint),
        outcome: verdict.outcome,
        rule: verdict.rule,
        argumentsMatter: rules.slice(0, upTo).some((r) => /\barguments\b/.test(r.condition)),
      };
    }),
  };
}

export interface McpRecentCall {
  approvalId: string;
  tool: string;
  createdAt: Date;
  forwardedAt: Date | null;
  resultIsError: boolean | null;
}

/** The calls the server's rules held, newest first (a passed call leaves no row: it was never a request). */
export function recentHeldCalls(em: EntityManager, access: Access, server: McpUpstreamRow, first: number): Promise<McpRecentCall[]> {
  requireAdmin(access, 'reads the calls of MCP servers');
  return sql<McpRecentCall>(
    em,
    `select approval_id as "approvalId", tool, created_at as "createdAt", forwarded_at as "forwardedAt", result_is_error as "resultIsError"
       from mcp_held_call where upstream_id = ? and tenant_id = ? order by created_at desc, approval_id desc limit ?`,
    [server.id, access.viewer.tenantId, first],
  );
}
