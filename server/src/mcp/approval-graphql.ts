import type { ApprovalRow } from '../approvals/entities.js';
import { ApprovalRef } from '../approvals/module.js';
import { builder } from '../graphql/builder.js';
import { sql } from '../db/sql.js';
import { MCP_LIMITS } from '../limits.js';
import { HELD_CALL_KEY_PREFIX } from './held-call.js';

// What the gateway adds to Approval: for a held tools/call, the server and tool, whether its
// caller is waiting now, and what became of the call (forwarded, the result's digest).

interface HeldCallView {
  server: string;
  tool: string;
  waiting: boolean;
  forwardedAt: Date | null;
  resultDigest: string | null;
  resultIsError: boolean | null;
}

const McpHeldCallRef = builder.objectRef<HeldCallView>('McpHeldCall').implement({
  description: 'A tools/call the MCP gateway holds for this request: its action is the call.',
  fields: (t) => ({
    server: t.exposeString('server', { description: "The MCP server's name in Taskbay." }),
    tool: t.exposeString('tool'),
    waiting: t.exposeBoolean('waiting', {
      description: `Whether the caller's tools/call is waiting for this decision now (seen within the last ${MCP_LIMITS.progressSeconds * 3} s).`,
    }),
    forwardedAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.forwardedAt, description: 'When the approved call was forwarded (once).' }),
    resultDigest: t.exposeString('resultDigest', { nullable: true, description: "SHA-256 of the canonical JSON of the server's result." }),
    resultIsError: t.exposeBoolean('resultIsError', { nullable: true }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  mcpCall: t.field({
    type: McpHeldCallRef,
    nullable: true,
    description: 'The MCP gateway call this request holds; null for any other request.',
    resolve: async (a: ApprovalRow, _args, ctx) => {
      if (!a.key?.startsWith(HELD_CALL_KEY_PREFIX)) return null;
      const [row] = await sql<{
        name: string;
        tool: string;
        waiting: boolean;
        forwarded_at: Date | null;
        result_digest: string | null;
        result_is_error: boolean | null;
      }>(
        ctx.em,
        `select u.name, h.tool, coalesce(h.waiting_seen_at > now() - make_interval(secs => ?), false) as waiting, h.forwarded_at, h.result_digest, h.result_is_error
           from mcp_held_call h join mcp_upstream u on u.id = h.upstream_id where h.approval_id = ?`,
        [MCP_LIMITS.progressSeconds * 3, a.id],
      );
      return row
        ? {
            server: row.name,
            tool: row.tool,
            waiting: row.waiting,
            forwardedAt: row.forwarded_at,
            resultDigest: row.result_digest,
            resultIsError: row.result_is_error,
          }
        : null;
    },
  }),
}));
