import { digestInput, type ApprovalAction } from '../verify-approval/index.js';
import { canonicalSha256 } from '../lib/hashing.js';
import { isPlainObject } from '../lib/untrusted.js';
import type { ApprovalKeys, SignedClaims } from './keys.js';

// The signed approval of a decision (docs/VERIFYING-APPROVALS.md): every final APPROVE
// or EDIT_AND_APPROVE, whatever opened its request (an A2A agent, an AG-UI interrupt, a person's
// createApproval, a command hook), carries one compact JWS by the approval signing key with the
// claims of the A2A approved message (iss, iat, requestId, decisionId, revision, revisionDigest,
// taskId), plus externalId when the request has one. The decision path signs it in the
// transaction that records the decision and stores it with the decision row
// (decisions/service.ts); the A2A delivery and the AG-UI resume send that same JWS.
//
// A decision nobody gave is never signed (docs/choices.md "Issue 22: delivery and signing trust
// only what was signed"): Taskbay signs only in the transaction in
// which it writes the decision itself, from the values it is writing, never from a decision read
// back from the database. A stored JWS is shown, sent or reused only when it verifies with
// Taskbay's keys and names exactly the decision it is stored with (`storedSignature`): a row
// written behind Taskbay's back has none it could make, and one copied from another decision
// names that other decision.

/** What an approval's signature names: the claims besides iss and iat. */
export interface ApprovalSubject {
  /** The request's local id (the A2A metadata.approval.requestId). */
  requestId: string;
  /** The approving decision's id. */
  decisionId: string;
  revision: number;
  revisionDigest: string;
  /** The agent's id of the request's task (A2A task id, AG-UI thread id); null when there is none. */
  taskId: string | null;
  /** The integration's own call or thread id, when the request has one. */
  externalId: string | null;
}

/** What `Decision.signedApproval` (and the command-approvals REST `signed_approval`) shows. */
export interface SignedApprovalView {
  requestId: string;
  decisionId: string;
  revision: number;
  revisionDigest: string;
  signature: string;
  /** The approved action exactly as the digest covers it (approvals/digest.ts digestInput). */
  action: Record<string, unknown>;
  externalId: string | null;
}

/** The claims to sign, in the order the A2A delivery has always signed them; externalId only when there is one. */
export function approvalClaims(s: ApprovalSubject): SignedClaims {
  return {
    requestId: s.requestId,
    decisionId: s.decisionId,
    revision: s.revision,
    revisionDigest: s.revisionDigest,
    taskId: s.taskId,
    ...(s.externalId !== null ? { externalId: s.externalId } : {}),
  };
}

/**
 * The action as its digest covers it: `{kind, text, data}` or `{kind, form, values}` for the
 * actions of seed 000; any other kind (a command's `run_command`) is hashed as it is stored. Null
 * for what is not an action at all.
 */
export function coveredAction(action: unknown): Record<string, unknown> | null {
  if (!isPlainObject(action)) return null;
  if (action.kind === 'send_message' || action.kind === 'send_data') return digestInput(action as unknown as ApprovalAction);
  return action;
}

/** True when `action` hashes to `digest` by the digest rule. */
export function actionHashesTo(action: unknown, digest: string): boolean {
  const covered = coveredAction(action);
  return covered !== null && canonicalSha256(covered) === digest;
}

/** Signs an approval; `decidedAt` is its iat. */
export function signApproval(keys: ApprovalKeys, subject: ApprovalSubject, decidedAt: Date): Promise<string> {
  return keys.sign(approvalClaims(subject), decidedAt);
}

/**
 * `token` when Taskbay's keys signed it for exactly this subject (every claim equal; taskId
 * compared only when the caller knows it), else null: nothing stored is trusted as it is.
 */
export function storedSignature(
  keys: ApprovalKeys,
  token: string | null | undefined,
  subject: Omit<ApprovalSubject, 'taskId'> & { taskId?: string | null },
): string | null {
  if (!token) return null;
  const claims = keys.verify(token);
  if (!claims) return null;
  const same =
    claims.requestId === subject.requestId &&
    claims.decisionId === subject.decisionId &&
    claims.revision === subject.revision &&
    claims.revisionDigest === subject.revisionDigest &&
    (subject.taskId === undefined || claims.taskId === subject.taskId) &&
    (subject.externalId === null ? !('externalId' in claims) : claims.externalId === subject.externalId);
  return same ? token : null;
}

/** A decision row as far as its signed approval is concerned. */
export interface SignedDecision {
  id: string;
  approvalId: string;
  outcome: string;
  revision: number;
  digest: string;
  vote: boolean;
  signature?: string | null;
}

/**
 * The signed approval of a decision, or null when there is honestly none: not a final approval,
 * nothing stored (a rejection, a vote, a row older than decision signatures or one Taskbay did
 * not write), a JWS that does not verify with Taskbay's published keys or names another decision, or
 * an action (the decided revision's) that does not hash to the signed digest.
 */
export function signedApprovalOf(
  keys: ApprovalKeys,
  decision: SignedDecision,
  request: { externalId?: string | null },
  action: unknown,
): SignedApprovalView | null {
  if (decision.vote || (decision.outcome !== 'APPROVE' && decision.outcome !== 'EDIT_AND_APPROVE')) return null;
  const externalId = request.externalId ?? null;
  const signature = storedSignature(keys, decision.signature, {
    requestId: decision.approvalId,
    decisionId: decision.id,
    revision: decision.revision,
    revisionDigest: decision.digest,
    externalId,
  });
  const covered = coveredAction(action);
  if (!signature || !covered || canonicalSha256(covered) !== decision.digest) return null;
  return {
    requestId: decision.approvalId,
    decisionId: decision.id,
    revision: decision.revision,
    revisionDigest: decision.digest,
    signature,
    action: covered,
    externalId,
  };
}
