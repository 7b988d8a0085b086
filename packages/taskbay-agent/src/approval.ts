import { type ApprovalAction, type ApprovalClaims, fetchJwks, JWKS_PATH, type SignedApproval, verifySignedApproval } from '@taskbay/verify';
import { apiError, baseUrl, delay, gql, rawId, type TaskbayConnection } from './connection.js';
import { ApprovalTimeoutError, ApprovalVerificationError, TaskbayAgentError, TaskbayApiError } from './errors.js';
import { subscribe } from './sse.js';

// requestApproval: open a request in Taskbay, wait for its decision (live over SSE, with a slow
// read as a safety net), and return it only once its signed approval verifies.

export type Risk = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';

/** What a reviewer is asked to approve: seed 000's two kinds of action, as @taskbay/verify digests them. */
export type { ApprovalAction };

export interface ApprovalRequestInput {
  /** What the reviewer sees first (1..200 characters). */
  title: string;
  /** More words for the reviewer (at most 4000 characters). */
  summary?: string;
  /** Default MEDIUM. Lower case is accepted. */
  risk?: Risk | Lowercase<Risk>;
  /** What is to happen; the digest covers it, and an approval approves exactly it (or the reviewer's edit of it). */
  action: ApprovalAction;
  /** The agent the request is about (its OPERATE grant holders decide); without it only admins decide. */
  agentId?: string;
  /**
   * The framework's own id of what is asked (a tool call id, a thread id): kept beside the
   * request, out of the digest, never editable, and signed with the approval, so an approval of
   * one call can never be taken for another's.
   */
  externalId?: string;
  /** false: the reviewer can approve or reject, not edit then approve. Default: editable. */
  editable?: boolean;
  /** Seconds until the request expires (1..2592000). Default: ceil(timeoutMs / 1000) when timeoutMs is set, else Taskbay's default. */
  expiresInSeconds?: number;
}

export interface WaitOptions {
  /** Aborting stops waiting (the request stays open in Taskbay) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Stop waiting after this long with an ApprovalTimeoutError (the request stays open until it expires). Default: no limit. */
  timeoutMs?: number;
  /** Called with the request's status on each change Taskbay reports while waiting (PENDING for a change that decides nothing). */
  onChange?: (change: { approvalId: string; status: string }) => void;
}

export type RequestApprovalOptions = TaskbayConnection &
  ApprovalRequestInput &
  WaitOptions & {
    /** Called once the request is open, before waiting (log its id, store it to wait again later). */
    onRequested?: (request: OpenedApproval) => void;
  };

export interface OpenedApproval {
  /** Taskbay's id of the request (a GraphQL id). */
  approvalId: string;
  revision: number;
  /** SHA-256 of the canonical action, as Taskbay computed it. */
  digest: string;
  externalId: string | null;
  editable: boolean;
}

export interface Reviewer {
  id: string;
  name: string;
  email: string;
}

/** What a signed approval says (its verified claims) and the signed approval as Taskbay sends it: @taskbay/verify's types. */
export type { ApprovalClaims, SignedApproval };

interface OutcomeBase {
  approvalId: string;
  /** The revision decided on: for an approval, the signed one (an edit makes a new revision). */
  revision: number;
  /** Its digest: for an approval, the signed revisionDigest, which the returned action hashes to. */
  digest: string;
  /** Who decided (null when nobody did: EXPIRED, SUPERSEDED). */
  decidedBy: Reviewer | null;
  comment: string | null;
}

/** An approval whose signature verified. `action` is what was approved: the reviewer's edit when they edited. */
export interface ApprovedOutcome extends OutcomeBase {
  status: 'APPROVED';
  action: ApprovalAction;
  /** The reviewer edited the action before approving (EDIT_AND_APPROVE). */
  edited: boolean;
  decisionId: string;
  signedApproval: SignedApproval;
  claims: ApprovalClaims;
  /** The key that signed it (JWK thumbprint). */
  keyId: string;
}

/** Anything but an approval: nothing may run. `action` is the request's action as it stands. */
export interface NotApprovedOutcome extends OutcomeBase {
  status: 'REJECTED' | 'CHANGES_REQUESTED' | 'EXPIRED' | 'SUPERSEDED';
  action: unknown;
  edited: false;
  decisionId: string | null;
  signedApproval: null;
  claims: null;
}

export type ApprovalOutcome = ApprovedOutcome | NotApprovedOutcome;

export interface PendingOutcome {
  status: 'PENDING';
  approvalId: string;
}

/** What the agent asked with, to check the approval against (waitForApproval reads what it is not told). */
export interface ApprovalExpectation {
  approvalId: string;
  /** The externalId the request was opened with; the signed approval must carry it. */
  externalId?: string;
  /** false: the request was not editable, so the approved digest must be the requested one. */
  editable?: boolean;
  /** The digest the request was opened with (revision 1). */
  requestedDigest?: string;
}

const CREATE = `mutation TaskbayAgentCreateApproval($input: CreateApprovalInput!) {
  createApproval(input: $input) { id revision digest externalId editable } }`;
const STATUS = `query TaskbayAgentApprovalStatus($id: ID!) { approval(id: $id) { id status } }`;
const DECIDED = `query TaskbayAgentApprovalDecided($id: ID!) { approval(id: $id) {
  id status revision digest action externalId editable revisions { number digest }
  signedApproval { requestId decisionId revision revisionDigest signature action externalId }
  decisions { id outcome comment vote reviewer { id name email } } } }`;
const CHANGED = `subscription TaskbayAgentApprovalChanged($id: ID!) { approvalChanged(approvalId: $id) { id status } }`;

interface DecisionRow {
  /** The decision's local id (a UUID), as signed. */
  id: string;
  outcome: 'APPROVE' | 'EDIT_AND_APPROVE' | 'REJECT' | 'REQUEST_CHANGES' | 'DELEGATE';
  comment: string | null;
  vote: boolean;
  reviewer: Reviewer | null;
}

interface ApprovalRow {
  id: string;
  status: string;
  revision: number;
  digest: string;
  action: unknown;
  externalId: string | null;
  editable: boolean;
  revisions: { number: number; digest: string }[];
  /** The signed approval of the decision that approved the request (null unless APPROVED). */
  signedApproval: SignedApproval | null;
  decisions: DecisionRow[];
}

const DEFAULT_POLL_MS = 15_000;
/** Reconnects of a stream that ended wait this long first, doubling up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
/** Codes that waiting longer cannot cure. */
const FATAL_CODES = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT']);
/** BAD_USER_INPUT reasons that are Taskbay's limits on one viewer's streams (50 at once, 20 a second by default): they pass. */
const LIMIT_REASONS = new Set(['TOO_MANY_OPERATIONS', 'RATE_LIMITED']);

/** Whether a GraphQL error while waiting ends the wait. A limit does not: the reads and the next connection carry on. */
function isFinal(error: { extensions?: Record<string, unknown> } | undefined): boolean {
  const code = error?.extensions?.code;
  return typeof code === 'string' && FATAL_CODES.has(code) && !LIMIT_REASONS.has(error?.extensions?.reason as string);
}

/** Opens a request (GraphQL createApproval) and answers at once, without waiting. */
export async function openApproval(opts: TaskbayConnection & ApprovalRequestInput & { signal?: AbortSignal; timeoutMs?: number }): Promise<OpenedApproval> {
  const input: Record<string, unknown> = { title: opts.title, action: opts.action };
  if (opts.summary !== undefined) input.summary = opts.summary;
  if (opts.risk !== undefined) input.risk = opts.risk.toUpperCase();
  if (opts.agentId !== undefined) input.agentId = opts.agentId;
  if (opts.externalId !== undefined) input.externalId = opts.externalId;
  if (opts.editable !== undefined) input.editable = opts.editable;
  const ttl = opts.expiresInSeconds ?? (opts.timeoutMs ? Math.ceil(opts.timeoutMs / 1000) : undefined);
  if (ttl !== undefined) input.expiresInSeconds = ttl;
  const { createApproval: a } = await gql<{ createApproval: { id: string; revision: number; digest: string; externalId: string | null; editable: boolean } }>(
    opts,
    CREATE,
    { input },
    { signal: opts.signal },
  );
  return { approvalId: a.id, revision: a.revision, digest: a.digest, externalId: a.externalId, editable: a.editable };
}

/**
 * Opens a request in Taskbay and waits for its decision. Answers APPROVED only with a signed
 * approval that verified (issuer, key, request, externalId, digest of the action); an approval
 * that does not verify throws ApprovalVerificationError. Anything else (REJECTED,
 * CHANGES_REQUESTED, EXPIRED, SUPERSEDED) is answered as it is: nothing may run.
 */
export async function requestApproval(opts: RequestApprovalOptions): Promise<ApprovalOutcome> {
  const opened = await openApproval(opts);
  opts.onRequested?.(opened);
  return waitForApproval({
    ...opts,
    approvalId: opened.approvalId,
    editable: opts.editable ?? opened.editable,
    requestedDigest: opened.digest,
  });
}

/**
 * Waits for the decision of a request already open (requestApproval's second half): for a
 * process that opened it and stopped, or a webhook handler. Pass what the request was opened
 * with (externalId, editable) so the approval is checked against it.
 */
export async function waitForApproval(opts: TaskbayConnection & ApprovalExpectation & WaitOptions): Promise<ApprovalOutcome> {
  await untilDecided(opts);
  const outcome = await readApproval(opts);
  if (outcome.status === 'PENDING') throw new TaskbayAgentError('API_ERROR', `Taskbay reported a decision on ${opts.approvalId} but reads it as PENDING`, opts);
  return outcome;
}

/** Reads a request once: its verified outcome, or PENDING. */
export async function readApproval(opts: TaskbayConnection & ApprovalExpectation & { signal?: AbortSignal }): Promise<ApprovalOutcome | PendingOutcome> {
  const { approval: a } = await gql<{ approval: ApprovalRow | null }>(
    opts,
    DECIDED,
    { id: opts.approvalId },
    { signal: opts.signal, approvalId: opts.approvalId },
  );
  if (!a) throw new TaskbayApiError('NOT_FOUND', `NOT_FOUND: no approval ${opts.approvalId} visible to this token`, { approvalId: opts.approvalId });
  if (a.status === 'PENDING') return { status: 'PENDING', approvalId: a.id };
  if (a.status !== 'APPROVED') {
    const final = a.decisions.filter((d) => !d.vote && d.outcome !== 'DELEGATE').at(-1) ?? null;
    const status = a.status as NotApprovedOutcome['status'];
    const decided = status === 'REJECTED' || status === 'CHANGES_REQUESTED' ? final : null;
    return {
      status,
      approvalId: a.id,
      revision: a.revision,
      digest: a.digest,
      action: a.action,
      edited: false,
      decisionId: decided?.id ?? null,
      decidedBy: decided?.reviewer ?? null,
      comment: decided?.comment ?? null,
      signedApproval: null,
      claims: null,
    };
  }
  const signed = a.signedApproval;
  if (!signed) throw new ApprovalVerificationError('the request is APPROVED but carries no signed approval', opts);
  // Who approved, and their comment: the decision the signature names (checked again once it verifies).
  const approving = a.decisions.find((d) => d.id === signed.decisionId && !d.vote && (d.outcome === 'APPROVE' || d.outcome === 'EDIT_AND_APPROVE'));
  if (!approving) throw new ApprovalVerificationError(`the signed approval names decision ${signed.decisionId}, which did not approve this request`, opts);
  return verifyOutcome(opts, a, approving, signed);
}

async function verifyOutcome(
  opts: TaskbayConnection & ApprovalExpectation,
  a: ApprovalRow,
  final: DecisionRow,
  signed: SignedApproval,
): Promise<ApprovedOutcome> {
  const requested = opts.requestedDigest ?? a.revisions.find((r) => r.number === 1)?.digest;
  const verified = await verifySigned(opts, signed, { ...opts, editable: opts.editable ?? a.editable, requestedDigest: requested });
  return {
    status: 'APPROVED',
    approvalId: a.id,
    revision: verified.claims.revision,
    digest: verified.claims.revisionDigest,
    action: verified.action,
    edited: final.outcome === 'EDIT_AND_APPROVE' || verified.claims.revisionDigest !== requested,
    decisionId: verified.claims.decisionId,
    decidedBy: final.reviewer,
    comment: final.comment,
    signedApproval: signed,
    claims: verified.claims,
    keyId: verified.keyId,
  };
}

/**
 * Verifies a signed approval with Taskbay's verifier (@taskbay/verify: the JWS, the issuer, the
 * key, the claims against the fields, the digest of the action), then what only the agent
 * knows: that it names the request the agent opened, with the externalId it asked with, and,
 * for a request that was not editable, the digest it asked for. Throws ApprovalVerificationError.
 */
export async function verifySigned(
  conn: Pick<TaskbayConnection, 'url' | 'issuer' | 'jwksUrl' | 'fetch'>,
  signed: SignedApproval,
  expect: ApprovalExpectation,
): Promise<{ claims: ApprovalClaims; action: ApprovalAction; keyId: string }> {
  const issuer = baseUrl(conn.issuer ?? conn.url);
  const keysAt = conn.jwksUrl ?? `${baseUrl(conn.url)}${JWKS_PATH}`;
  const jwks = await fetchJwks(keysAt, conn.fetch ?? fetch).catch((e: unknown) => {
    throw new TaskbayAgentError('NETWORK_ERROR', `Taskbay's keys could not be read from ${keysAt}: ${(e as Error)?.message ?? String(e)}`, {
      cause: e,
      approvalId: expect.approvalId,
    });
  });
  const verdict = await verifySignedApproval(signed, {
    jwks,
    issuer,
    taskId: null,
    ...(expect.externalId !== undefined ? { externalId: expect.externalId } : {}),
  });
  if (!verdict.ok) throw new ApprovalVerificationError(verdict.reason, expect);
  const { claims } = verdict;
  const requestId = rawId(expect.approvalId);
  if (claims.requestId !== requestId) throw new ApprovalVerificationError(`the signed approval is of request ${claims.requestId}, not ${requestId}`, expect);
  if (expect.externalId !== undefined && claims.externalId !== expect.externalId) {
    throw new ApprovalVerificationError(
      `the signed approval is for externalId ${JSON.stringify(claims.externalId)}, not ${JSON.stringify(expect.externalId)}`,
      expect,
    );
  }
  if (expect.editable === false && claims.revisionDigest !== expect.requestedDigest) {
    throw new ApprovalVerificationError('the request was not editable, but the signed approval is of another action than the one requested', expect);
  }
  return { claims, action: verdict.action as ApprovalAction, keyId: verdict.keyId };
}

/**
 * Resolves once the request is no longer PENDING. Listens to approvalChanged over SSE
 * (reconnecting when the stream ends), reads the status when the stream is live (a decision made
 * before that is found) and every pollIntervalMs (a stream that died without a sign loses
 * nothing).
 */
async function untilDecided(opts: TaskbayConnection & ApprovalExpectation & WaitOptions): Promise<void> {
  const { approvalId, signal, timeoutMs, onChange } = opts;
  const pollMs = opts.pollIntervalMs ?? DEFAULT_POLL_MS;
  if (signal?.aborted) throw signal.reason;
  const stop = new AbortController();
  let timeout: ReturnType<typeof setTimeout> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  const onAbort = () => stop.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (e: unknown) => {
        reject(e);
        stop.abort(e);
      };
      stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true });
      if (timeoutMs !== undefined) timeout = setTimeout(() => fail(new ApprovalTimeoutError(approvalId, timeoutMs)), timeoutMs);
      const seen = (status: string) => {
        if (status !== 'PENDING') resolve();
      };
      const check = async () => {
        try {
          const { approval } = await gql<{ approval: { status: string } | null }>(opts, STATUS, { id: approvalId }, { signal: stop.signal, approvalId });
          if (!approval) return fail(new TaskbayApiError('NOT_FOUND', `NOT_FOUND: no approval ${approvalId} visible to this token`, { approvalId }));
          seen(approval.status);
        } catch (e) {
          if (stop.signal.aborted) return;
          // Unreachable for now: the next read or the stream will tell. A refusal is final.
          if (e instanceof TaskbayApiError && isFinal(e.errors[0])) fail(e);
        }
      };
      void check();
      if (pollMs > 0) poll = setInterval(() => void check(), pollMs);
      void (async () => {
        let wait = RECONNECT_MIN_MS;
        while (!stop.signal.aborted) {
          try {
            const results = await subscribe(opts, CHANGED, { id: approvalId }, stop.signal);
            // Live: whatever was decided before the subscription is found by this read.
            void check();
            for await (const r of results) {
              if (r.errors?.length) {
                if (isFinal(r.errors[0])) return fail(apiError(r.errors, undefined, approvalId));
                continue;
              }
              const change = (r.data as { approvalChanged?: { status: string } } | undefined)?.approvalChanged;
              if (!change) continue;
              wait = RECONNECT_MIN_MS;
              onChange?.({ approvalId, status: change.status });
              seen(change.status);
            }
          } catch (e) {
            if (stop.signal.aborted) return;
            if (e instanceof TaskbayApiError && isFinal(e.errors[0])) return fail(e);
          }
          // The stream ended (a restart, a proxy's timeout): connect again after a while.
          await delay(wait, stop.signal).catch(() => {});
          wait = Math.min(wait * 2, RECONNECT_MAX_MS);
        }
      })();
    });
  } finally {
    clearTimeout(timeout);
    clearInterval(poll);
    signal?.removeEventListener('abort', onAbort);
    if (!stop.signal.aborted) stop.abort(new Error('decided'));
  }
}
