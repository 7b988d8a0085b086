import { JSON_MEDIA_TYPE, SIGNED_FIELDS } from './constants.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { actionDigest, type ApprovalAction } from './digest.js';
import { checkSignature, isObject, type Jwks } from './jws.js';
import { readMessage, type ReadPart, type ReceivedApprovedMessage } from './message.js';

// Verifying an approval (docs/VERIFYING-APPROVALS.md "How an agent verifies"): Taskbay's
// signature by a key of the trusted JWKS, from the trusted issuer, naming exactly the
// metadata.approval received and the task it arrived on, over the digest of what arrived.
// Nothing here throws on hostile input: a refusal says why.

export interface ApprovalClaims {
  /** Taskbay's public URL. */
  iss: string;
  /** The decision time, seconds since the epoch. */
  iat: number;
  requestId: string;
  decisionId: string;
  revision: number;
  revisionDigest: string;
  /** The agent's id of the task the approval was delivered on; null for a request without an A2A task. */
  taskId: string | null;
  /** The caller's own id of a request without a task, when it gave one. */
  externalId?: string;
}

export interface VerifyOptions {
  /** The keys of the Taskbay the agent trusts: fetched from its JWKS URL (fetchJwks), or configured. */
  jwks: Jwks;
  /** That Taskbay's public URL, as configured by the agent (never taken from the message). */
  issuer: string;
  /** The agent's own id of the task the message arrived on (in an @a2a-js/sdk executor, requestContext.taskId). */
  taskId: string;
  /** send_data: the form the agent asked with (the digest covers it). */
  form?: Record<string, unknown>;
}

/** A verdict: what was approved, or why not. `A` is the approved action's type. */
export type Verdict<A = ApprovalAction> = { ok: true; claims: ApprovalClaims; action: A; keyId: string } | { ok: false; reason: string };

const refuse = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });
const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The action of parts read by readMessage: the inverse of how Taskbay builds the approved message. */
function actionOf(parts: ReadPart[], metadata: Record<string, unknown> | undefined, form?: Record<string, unknown>): ApprovalAction {
  const texts = parts.filter((p) => typeof p.text === 'string').map((p) => p.text as string);
  const values = parts.find((p) => p.mediaType === JSON_MEDIA_TYPE && isObject(p.data))?.data as Record<string, unknown> | undefined;
  if (texts.length === 0 && values) return { kind: 'send_data', form: form ?? {}, values };
  // Whatever arrived in metadata.decision is hashed as it is: an agent acts on what it received.
  const decision = metadata?.decision;
  return { kind: 'send_message', text: texts.join(''), data: (decision ?? null) as Record<string, unknown> | null };
}

/**
 * The action the message carries, as received, in either shape (A2A JSON or the @a2a-js/sdk
 * message): text parts and metadata.decision are a send_message; one application/json data part
 * and no text are a send_data, with the form the agent asked with. Throws a TypeError saying what
 * was given when it is not a message.
 */
export function receivedAction(message: ReceivedApprovedMessage, form?: Record<string, unknown>): ApprovalAction {
  const read = readMessage(message);
  if (!read.ok) throw new TypeError(read.reason);
  return actionOf(read.parts, read.metadata, form);
}

/** The checks a signed approval shares, whatever carried it: signature, issuer, iat, the four fields. */
function checkApproval(
  approval: Record<string, unknown>,
  jwks: Jwks,
  issuer: string,
  where: string,
): { claims: Record<string, unknown>; keyId: string } | string {
  if (typeof approval.signature !== 'string') return `${where} carries no signature`;
  const checked = checkSignature(approval.signature, jwks);
  if (typeof checked === 'string') return checked;
  const { claims } = checked;
  if (claims.iss !== issuer) return `the signature was issued by ${JSON.stringify(claims.iss)}, not ${JSON.stringify(issuer)}`;
  if (typeof claims.iat !== 'number') return 'the signature carries no iat';
  for (const field of SIGNED_FIELDS) {
    if (claims[field] === undefined || claims[field] !== approval[field]) {
      return `${where}.${field} is ${JSON.stringify(approval[field])}; the signature says ${JSON.stringify(claims[field])}`;
    }
  }
  return checked;
}

/** An approved action of another kind than seed 000's: a command approval's run_command, hashed whole. */
export type OtherApprovedAction = { kind: string; [field: string]: unknown };

/** The digest of an action: seed 000's rule for its two kinds, the canonical JSON of the whole action for any other. */
function digestOfAction(action: ApprovalAction | OtherApprovedAction): string {
  if (action.kind === 'send_message' || action.kind === 'send_data') return actionDigest(action as ApprovalAction);
  return createHash('sha256').update(canonicalJson(action), 'utf8').digest('hex');
}

function digestOf(action: ApprovalAction | OtherApprovedAction, claims: Record<string, unknown>, what: string): string | null {
  let digest: string;
  try {
    digest = digestOfAction(action);
  } catch (e) {
    return `the ${what} cannot be hashed (${errorText(e)})`;
  }
  return digest === claims.revisionDigest ? null : `the ${what} has digest ${digest}; the approved one is ${String(claims.revisionDigest)}`;
}

function checkOptions(opts: unknown): string | null {
  if (!isObject(opts)) return 'no options given: pass { jwks, issuer, taskId }';
  if (!isObject(opts.jwks) || !Array.isArray(opts.jwks.keys)) return 'opts.jwks is not a JWKS ({ keys: [...] }): pass the trusted keys (fetchJwks)';
  if (typeof opts.issuer !== 'string') return "opts.issuer is not a string: pass the trusted Taskbay's public URL";
  return null;
}

function verifyMessage(message: unknown, opts: VerifyOptions): Verdict {
  const bad = checkOptions(opts);
  if (bad) return refuse(bad);
  if (typeof opts.taskId !== 'string') {
    return refuse(
      'opts.taskId is not a string: pass your id of the task the message arrived on (in an @a2a-js/sdk executor, requestContext.taskId); for an approval without a task, use verifySignedApproval',
    );
  }
  const read = readMessage(message);
  if (!read.ok) return refuse(read.reason);
  const approval = read.metadata?.approval;
  if (!isObject(approval)) return refuse('the message carries no metadata.approval');

  const checked = checkApproval(approval, opts.jwks, opts.issuer, 'metadata.approval');
  if (typeof checked === 'string') return refuse(checked);
  const { claims, keyId } = checked;
  if (claims.taskId !== opts.taskId) return refuse(`the approval was signed for task ${JSON.stringify(claims.taskId)}, not ${JSON.stringify(opts.taskId)}`);

  const action = actionOf(read.parts, read.metadata, opts.form);
  const wrong = digestOf(action, claims, 'received content');
  if (wrong) return refuse(wrong);
  return { ok: true, claims: claims as unknown as ApprovalClaims, action, keyId };
}

/**
 * Verifies an approved message, in the A2A JSON Taskbay sends or as @a2a-js/sdk hands it to an
 * executor (requestContext.userMessage): Taskbay's signature (by a key of the trusted JWKS, from
 * the trusted issuer), that it names exactly the metadata.approval received and the task it
 * arrived on, and that the digest recomputed from the received content is the signed one. Never
 * throws: a refusal says why, and for input that is not a message, what it was and what to pass.
 */
export function verifyApprovedMessage(message: ReceivedApprovedMessage, opts: VerifyOptions): Verdict {
  try {
    return verifyMessage(message, opts);
  } catch (e) {
    // A getter or proxy that throws, nesting deeper than the stack: not a message that verifies.
    return refuse(`the message could not be read (${errorText(e)})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests without an A2A task: a caller that opened a request itself (a person's createApproval,
// a command hook; perhaps with its own externalId) receives the decision and its signature: the
// same JWS over the same claims, with taskId null.

/** A signed approval of a request without an A2A task, as Taskbay hands it out. */
export interface SignedApproval {
  requestId: string;
  decisionId: string;
  revision: number;
  revisionDigest: string;
  /** The compact JWS over the claims (the same key, typ and JWKS as an approved message's). */
  signature: string;
  /**
   * The approved action, as the digest covers it; its digest is revisionDigest. A send_message or
   * send_data by seed 000's rule; any other kind (a command approval's run_command) is hashed whole.
   */
  action: ApprovalAction | OtherApprovedAction;
  /** The caller's own id of the request, when it gave one. */
  externalId?: string | null;
}

export interface VerifySignedOptions {
  jwks: Jwks;
  /** The Taskbay the caller trusts (its public URL), as configured, never taken from the approval. */
  issuer: string;
  /** The task the approval must be signed for; null (the default) for a request without a task. */
  taskId?: string | null;
  /** When given, the signature must name this externalId. */
  externalId?: string;
}

/**
 * The action as the digest covers it, when `v` is one: for send_message and send_data only their
 * kind's fields, nothing else it carries; any other kind whole (all of it is hashed).
 */
function actionIn(v: unknown): ApprovalAction | OtherApprovedAction | null {
  if (!isObject(v)) return null;
  if (v.kind === 'send_message') {
    if (typeof v.text !== 'string') return null;
    if (v.data !== undefined && v.data !== null && !isObject(v.data)) return null;
    return { kind: 'send_message', text: v.text, data: (v.data ?? null) as Record<string, unknown> | null };
  }
  if (v.kind === 'send_data') {
    if (!isObject(v.form) || !isObject(v.values)) return null;
    return { kind: 'send_data', form: v.form, values: v.values };
  }
  return typeof v.kind === 'string' && v.kind !== '' ? (v as OtherApprovedAction) : null;
}

function verifySigned(signed: unknown, opts: VerifySignedOptions): Verdict<ApprovalAction | OtherApprovedAction> {
  const bad = checkOptions(opts);
  if (bad) return refuse(bad.replace('{ jwks, issuer, taskId }', '{ jwks, issuer }'));
  if (!isObject(signed)) {
    return refuse(
      `expected a signed approval ({ requestId, decisionId, revision, revisionDigest, signature, action }), got ${signed === null ? 'null' : Array.isArray(signed) ? 'an array' : typeof signed === 'string' ? 'a string' : `a ${typeof signed}`}`,
    );
  }
  if (Array.isArray(signed.parts))
    return refuse('expected a signed approval, got an A2A message: verify a message delivered on a task with verifyApprovedMessage');
  const expectedTask = opts.taskId ?? null;
  if (expectedTask !== null && typeof expectedTask !== 'string') return refuse('opts.taskId is neither a string nor null');
  const checked = checkApproval(signed, opts.jwks, opts.issuer, 'approval');
  if (typeof checked === 'string') return refuse(checked);
  const { claims, keyId } = checked;
  if (!('taskId' in claims)) return refuse('the signature carries no taskId claim');
  if (claims.taskId !== expectedTask) {
    return refuse(
      expectedTask === null
        ? `the approval was signed for task ${JSON.stringify(claims.taskId)}, not for a request without a task`
        : `the approval was signed for task ${JSON.stringify(claims.taskId)}, not ${JSON.stringify(expectedTask)}`,
    );
  }
  const claimed = claims.externalId ?? null;
  if ((signed.externalId ?? null) !== claimed)
    return refuse(`approval.externalId is ${JSON.stringify(signed.externalId)}; the signature says ${JSON.stringify(claims.externalId)}`);
  if (opts.externalId !== undefined && claimed !== opts.externalId) {
    return refuse(`the approval was signed for externalId ${JSON.stringify(claims.externalId ?? null)}, not ${JSON.stringify(opts.externalId)}`);
  }
  const action = actionIn(signed.action);
  if (!action) return refuse('the approval carries no action ({ kind: "send_message", text, data? }, { kind: "send_data", form, values }, or another kind)');
  const wrong = digestOf(action, claims, 'action');
  if (wrong) return refuse(wrong);
  return { ok: true, claims: claims as unknown as ApprovalClaims, action, keyId };
}

/**
 * Verifies a signed approval of a request without an A2A task: Taskbay's signature (the trusted
 * JWKS and issuer), that it names exactly this requestId, decisionId, revision and revisionDigest,
 * no task (or opts.taskId), the externalId when there is one (and opts.externalId when given), and
 * that the action's digest is the signed revisionDigest. Never throws: a refusal says why.
 */
export function verifySignedApproval(signed: SignedApproval, opts: VerifySignedOptions): Verdict<ApprovalAction | OtherApprovedAction> {
  try {
    return verifySigned(signed, opts);
  } catch (e) {
    return refuse(`the approval could not be read (${errorText(e)})`);
  }
}
