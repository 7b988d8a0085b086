import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Viewer } from '../access.js';
import { actionDigest, parseApprovalRequest } from '../approvals/module.js';
import { ApprovalRequest, type ApprovalRow } from '../approvals/entities.js';
import { appendEvents, stream } from '../audit/module.js';
import type { Config } from '../config.js';
import { sql } from '../db/sql.js';
import { canonicalSha256 } from '../lib/hashing.js';
import { APPROVAL_LIMITS } from '../limits.js';
import { McpHeldCall, type McpUpstreamRow } from './entities.js';
import { McpInputError, openClientRequest } from './request-approval.js';
import { type ToolCall, toolCallAction } from './tool-call.js';

// A tools/call the gateway holds: a request of the client's own agent whose action is exactly
// the call (tool-call.ts), with an mcp_held_call row that lets it be forwarded at most once. The
// same call asked again by the same client while its request is live (pending, or approved and
// not yet forwarded) resumes that request: a client that lost its connection, or met a restarted
// Taskbay, calls again and gets the one decision, never a second request or a second forward.

export const HELD_CALL_KEY_PREFIX = 'mcp-call:';

const clip = (s: string, max: number) => ([...s].length > max ? `${[...s].slice(0, max - 1).join('')}…` : s);

/** The request's words: the tool and server; its description and annotations as the server gives them (its hints, not facts). */
function requestOf(call: ToolCall, tool: Tool | null, expiresInSeconds: number | null) {
  const hints = tool?.annotations
    ? Object.entries(tool.annotations)
        .filter(([k, v]) => k !== 'title' && typeof v === 'boolean')
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')
    : '';
  const summary = [
    tool?.description ? `The server describes the tool: ${tool.description}` : 'The server gives no description of the tool.',
    hints ? `Its annotations (the server's hints): ${hints}.` : '',
    'The caller is waiting for the decision; on approval Taskbay forwards the approved call once.',
  ]
    .filter(Boolean)
    .join('\n');
  return {
    title: clip(`Call ${call.tool} on ${call.server}`, APPROVAL_LIMITS.titleMax),
    summary: clip(summary, APPROVAL_LIMITS.summaryMax),
    risk: tool?.annotations?.destructiveHint === true ? 'high' : 'medium',
    ...(expiresInSeconds ? { expiresInSeconds } : {}),
    action: toolCallAction(call),
  };
}

/** The live request of this client for this exact call, or a new one. */
export async function holdCall(
  em: EntityManager,
  config: Config,
  viewer: Viewer,
  agentId: string,
  upstream: McpUpstreamRow,
  call: ToolCall,
  tool: Tool | null,
): Promise<ApprovalRow> {
  const parsed = parseApprovalRequest(requestOf(call, tool, upstream.holdSeconds ?? null));
  if (!parsed.ok) throw new McpInputError(`this call cannot be held for approval: ${parsed.error}`);
  const digest = actionDigest(parsed.request.action);
  return em.transactional(async (tem) => {
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', [`mcp-call:${agentId}:${digest}`]);
    const [live] = await sql<{ id: string }>(
      tem,
      `select a.id from approval a join mcp_held_call h on h.approval_id = a.id
        where a.tenant_id = ? and a.agent_id = ? and h.upstream_id = ? and a.digest = ? and a.revision = 1 and h.forwarded_at is null
          and (a.status = 'PENDING' and (a.expires_at is null or a.expires_at > now()) or a.status = 'APPROVED')
        order by a.created_at desc limit 1`,
      [viewer.tenantId, agentId, upstream.id, digest],
    );
    if (live) return tem.findOneOrFail(ApprovalRequest, { id: live.id }, { refresh: true });
    const approval = await openClientRequest(tem, config, viewer, agentId, parsed.request, {
      key: `${HELD_CALL_KEY_PREFIX}${randomUUID()}`,
      externalId: null,
      editable: true,
    });
    tem.create(McpHeldCall, {
      approvalId: approval.id,
      tenantId: viewer.tenantId,
      upstreamId: upstream.id,
      tool: call.tool,
      forwardedAt: null,
      resultDigest: null,
      resultIsError: null,
      waitingSeenAt: null,
      createdAt: new Date(),
    });
    await tem.flush();
    return approval;
  });
}

/**
 * Claims the one forward of an approved held call, with its audit event; false when it was
 * claimed before (forwarded, or being forwarded by another connection of the client). A claim
 * also ends the call's "waiting" (waiting_seen_at): it is decided, nobody waits for a person.
 */
export async function claimForward(em: EntityManager, approval: ApprovalRow, call: ToolCall, actor: Viewer): Promise<boolean> {
  return em.transactional(async (tem) => {
    const claimed = await sql(
      tem,
      'update mcp_held_call set forwarded_at = now(), waiting_seen_at = null where approval_id = ? and forwarded_at is null returning approval_id',
      [approval.id],
    );
    if (!claimed.length) return false;
    await appendEvents(tem, [
      {
        tenantId: approval.tenantId,
        stream: stream.approval(approval.id),
        type: 'mcp.call_forwarded',
        actor: { type: 'user', id: actor.userId },
        data: { approvalId: approval.id, agentId: approval.agentId ?? null, taskId: null, server: call.server, tool: call.tool },
      },
    ]);
    return true;
  });
}

/** What the upstream answered: its digest (canonical JSON) kept with the held call, and an audit event. */
export async function recordAnswer(
  em: EntityManager,
  approval: ApprovalRow,
  call: ToolCall,
  result: unknown,
  isError: boolean,
  actor: Viewer,
): Promise<string> {
  const resultDigest = canonicalSha256(result);
  await em.transactional(async (tem) => {
    await sql(tem, 'update mcp_held_call set result_digest = ?, result_is_error = ? where approval_id = ?', [resultDigest, isError, approval.id]);
    await appendEvents(tem, [
      {
        tenantId: approval.tenantId,
        stream: stream.approval(approval.id),
        type: 'mcp.call_answered',
        actor: { type: 'user', id: actor.userId },
        data: { approvalId: approval.id, agentId: approval.agentId ?? null, taskId: null, server: call.server, tool: call.tool, resultDigest, isError },
      },
    ]);
  });
  return resultDigest;
}

/** A client waits on this held call now (null: it stopped waiting). */
export async function noteWaiting(em: EntityManager, approvalId: string, waiting: boolean): Promise<void> {
  await sql(em, `update mcp_held_call set waiting_seen_at = ${waiting ? 'now()' : 'null'} where approval_id = ?`, [approvalId]);
}
