import type { EntityManager } from '@mikro-orm/postgresql';
import { type ApprovalRequestInput, openApproval, parseApprovalRequest, parseExternalId } from '../approvals/module.js';
import type { ApprovalRow } from '../approvals/entities.js';
import type { Viewer } from '../access.js';
import type { Config } from '../config.js';
import { unstorableReason } from '../db/storable.js';
import { isPlainObject, own } from '../lib/untrusted.js';
import { parseToolCall, toolCallAction } from './tool-call.js';

// request_approval: an MCP host asks a person. The request is an ordinary one (source USER, as a
// person's token opens it through createApproval) in the scope of the client's own agent
// (client-agent.ts), so policies, quorum, escalation, the inbox, audit and webhooks treat it as
// any other; the person whose token asks is its requester and so cannot decide it.

/** The tool's arguments as the client sent them: hostile until parsed. */
export type RequestApprovalArguments = Record<string, unknown>;

export class McpInputError extends Error {}

/** What the client asks, checked before anything is written (the first problem, in words). */
export function parseRequestArguments(args: unknown) {
  if (!isPlainObject(args)) throw new McpInputError('the arguments must be an object');
  const unstorable = unstorableReason(args);
  if (unstorable) throw new McpInputError(`the arguments cannot be stored: ${unstorable}`);
  const rawAction = own(args, 'action');
  // A message (seed 000's send_message) or a tool call {server, tool, arguments}.
  let action: unknown = rawAction;
  if (isPlainObject(rawAction) && !Object.hasOwn(rawAction, 'kind')) {
    const call = parseToolCall(rawAction);
    if (!call.ok) throw new McpInputError(call.error);
    action = toolCallAction(call.call);
  }
  const expires = own(args, 'expires_in_seconds');
  const parsed = parseApprovalRequest({
    title: own(args, 'title'),
    summary: own(args, 'summary'),
    risk: own(args, 'risk'),
    ...(expires !== undefined ? { expiresInSeconds: expires } : {}),
    action,
  });
  if (!parsed.ok) throw new McpInputError(parsed.error);
  const externalId = parseExternalId(own(args, 'external_id'), 'external_id');
  if (!externalId.ok) throw new McpInputError(externalId.error);
  const editable = own(args, 'editable') ?? true;
  if (typeof editable !== 'boolean') throw new McpInputError('editable must be a boolean');
  return { request: parsed.request, externalId: externalId.value, editable };
}

/** Opens a request of the client's agent: the token's person asks (requester), as createApproval does. Inside a transaction. */
export async function openClientRequest(
  tem: EntityManager,
  config: Config,
  viewer: Viewer,
  agentId: string,
  request: ApprovalRequestInput,
  opts: { key: string | null; externalId: string | null; editable: boolean },
): Promise<ApprovalRow> {
  const opened = await openApproval(
    tem,
    config,
    {
      tenantId: viewer.tenantId,
      agentId,
      taskId: null,
      skillId: null,
      sourceMessageId: null,
      stepSeq: null,
      requesterId: viewer.userId,
      actor: { type: 'user', id: viewer.userId },
      source: 'USER',
      ...opts,
    },
    request,
  );
  // A fresh key (or none) is never a replay: openApproval opened it.
  return opened!;
}

export function requestApproval(
  em: EntityManager,
  config: Config,
  viewer: Viewer,
  agentId: string,
  asked: ReturnType<typeof parseRequestArguments>,
): Promise<ApprovalRow> {
  return em.transactional((tem) =>
    openClientRequest(tem, config, viewer, agentId, asked.request, { key: null, externalId: asked.externalId, editable: asked.editable }),
  );
}
