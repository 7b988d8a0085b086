import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import { ApprovalRequest, type ApprovalRow } from '../approvals/entities.js';
import { type ApprovalKeys, signedApprovalOf } from '../approval-signing/module.js';
import { reviewerName } from '../auth/module.js';
import { Decision, type DecisionRow } from '../decisions/entities.js';
import { sql } from '../db/sql.js';
import { consoleLink } from '../http/console-link.js';
import type { SignedApproval } from '../../../packages/taskbay-verify/src/verify.js';
import { isUuid } from '../lib/untrusted.js';
import { toolCallOf, type ToolCall } from './tool-call.js';

// What an MCP client is told about a request it opened: the answer of request_approval and of
// get_approval. Only a decision whose signed approval verifies (Taskbay's key, this decision, the
// decided revision's digest) is an approval to act on; what the database says without one is
// reported, never passed on as approved.

export interface ApprovalState {
  request_id: string;
  status: ApprovalRow['status'];
  /** True only for an approval whose signed approval verifies: act on `action`, nothing else. */
  approved: boolean;
  revision: number;
  digest: string;
  /** The action as the request stands (approved: as approved, possibly edited), as the digest covers it. */
  action: Record<string, unknown>;
  /** The tool call the action is, when it is one. */
  tool_call: ToolCall | null;
  decision: { outcome: string; comment: string | null; decided_by: string; decided_at: string } | null;
  /** Exactly what @taskbay/verify's verifySignedApproval takes (its field names), null unless approved. */
  signed_approval: SignedApproval | null;
  external_id: string | null;
  expires_at: string | null;
  approval_url: string;
}

/** The request of this id opened by this MCP client's agent, or null (another's is as absent as none). */
export async function requestOfClient(em: EntityManager, tenantId: string, agentId: string, id: string): Promise<ApprovalRow | null> {
  const uuid = uuidOf(id);
  if (!uuid) return null;
  return em.findOne(ApprovalRequest, { id: uuid, tenantId, agentId, source: 'USER' }, { refresh: true });
}

/** The uuid of a request id as this server gives it (the GraphQL id) or as a signed approval names it. */
function uuidOf(id: string): string | null {
  if (isUuid(id)) return id;
  try {
    const { typename, id: uuid } = decodeGlobalID(id);
    return typename === 'Approval' && isUuid(uuid) ? uuid : null;
  } catch {
    return null;
  }
}

/** The decision's columns as requestWithDecision selects them, each prefixed: the row is split into the two. */
const DECISION_COLUMNS = ['id', 'approval_id', 'outcome', 'revision', 'digest', 'reviewer_id', 'comment', 'delegated_to_id', 'vote', 'signature', 'decided_at'];
const PREFIX = 'final_decision_';

/**
 * requestOfClient and its final decision (none while it is pending) in one statement: what a
 * held call reads when it is woken, then forwards on without another read (gateway.ts).
 */
export async function requestWithDecision(
  em: EntityManager,
  tenantId: string,
  agentId: string,
  id: string,
): Promise<{ approval: ApprovalRow; final: DecisionRow | null } | null> {
  const uuid = uuidOf(id);
  if (!uuid) return null;
  const [row] = await sql<Record<string, unknown>>(
    em,
    `select a.*, ${DECISION_COLUMNS.map((c) => `d.${c} as ${PREFIX}${c}`).join(', ')}
       from approval a left join decision d on d.approval_id = a.id and not d.vote and d.outcome <> 'DELEGATE'
      where a.id = ? and a.tenant_id = ? and a.agent_id = ? and a.source = 'USER'`,
    [uuid, tenantId, agentId],
  );
  if (!row) return null;
  const approvalColumns: Record<string, unknown> = {};
  const decisionColumns: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith(PREFIX)) decisionColumns[k.slice(PREFIX.length)] = v;
    else approvalColumns[k] = v;
  }
  return {
    approval: em.map(ApprovalRequest, approvalColumns),
    final: decisionColumns.id == null ? null : em.map(Decision, decisionColumns),
  };
}

/** The request's signed approval, when it is approved by `final` on its current revision and the signature verifies; else null. */
export function verifiedApproval(keys: ApprovalKeys, approval: ApprovalRow, final: DecisionRow | null) {
  return final && approval.status === 'APPROVED' && final.revision === approval.revision ? signedApprovalOf(keys, final, approval, approval.action) : null;
}

/** A verified approval as @taskbay/verify's verifySignedApproval takes it (its field names). */
export function signedApprovalField(signed: NonNullable<ReturnType<typeof verifiedApproval>>): SignedApproval {
  return {
    requestId: signed.requestId,
    decisionId: signed.decisionId,
    revision: signed.revision,
    revisionDigest: signed.revisionDigest,
    signature: signed.signature,
    action: signed.action as SignedApproval['action'],
    externalId: signed.externalId,
  };
}

/** `final`: the request's final decision when the caller read it with the request (requestWithDecision); else it is read here. */
export async function approvalState(
  em: EntityManager,
  keys: ApprovalKeys,
  publicUrl: string,
  approval: ApprovalRow,
  final?: DecisionRow | null,
): Promise<ApprovalState> {
  if (final === undefined) final = await em.findOne(Decision, { approvalId: approval.id, vote: false, outcome: { $ne: 'DELEGATE' } }, { refresh: true });
  const signed = verifiedApproval(keys, approval, final);
  const action = signed?.action ?? { ...(approval.action as unknown as Record<string, unknown>) };
  return {
    request_id: encodeGlobalID('Approval', approval.id),
    status: approval.status,
    approved: signed !== null,
    revision: approval.revision,
    digest: approval.digest,
    action,
    tool_call: toolCallOf(action),
    decision: final
      ? {
          outcome: final.outcome,
          comment: final.comment ?? null,
          decided_by: await reviewerName(em, final.reviewerId),
          decided_at: final.decidedAt.toISOString(),
        }
      : null,
    signed_approval: signed && signedApprovalField(signed),
    external_id: approval.externalId ?? null,
    expires_at: approval.expiresAt?.toISOString() ?? null,
    approval_url: consoleLink(publicUrl, approval.id),
  };
}

/** The state in words, first for a model reading the tool result. */
export function stateInWords(s: ApprovalState): string {
  const by = s.decision ? ` by ${s.decision.decided_by}` : '';
  const words = s.decision?.comment?.trim() ? `: "${s.decision.comment.trim()}"` : '';
  switch (s.status) {
    case 'PENDING':
      return `Request ${s.request_id} is waiting for a person's decision (${s.approval_url}). Call get_approval with this request_id to learn it; do not act before it is approved.`;
    case 'APPROVED':
      return s.approved
        ? `Approved${by} (revision ${s.revision}, digest ${s.digest.slice(0, 12)}…). Do exactly the approved action, once: a reviewer may have edited it.`
        : `The request is marked approved, but its signed approval does not verify: do not act on it.`;
    case 'REJECTED':
      return `Rejected${by}${words}. Do not do it.`;
    case 'CHANGES_REQUESTED':
      return `Changes requested${by}${words}. Do not do it as asked; ask again with the changes.`;
    case 'EXPIRED':
      return 'The request expired before anyone decided. Do not do it; ask again if it is still needed.';
    case 'SUPERSEDED':
      return 'The request was superseded by a newer one. Do not act on it.';
    default:
      return `The request is ${String(s.status).toLowerCase()}. Do not act on it.`;
  }
}
