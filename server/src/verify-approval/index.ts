import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { actionDigest, type ApprovalAction } from '../approvals/digest.js';
import { canonicalJson } from '../lib/hashing.js';

export type { ApprovalAction, SendDataAction, SendMessageAction } from '../approvals/digest.js';
export * from './evidence.js';

// For agent authors: verify an approved message from Taskbay (docs/VERIFYING-APPROVALS.md).
// Plain TypeScript on node:crypto, no JOSE library: packaged as `agent-taskbay/verify-approval`
// with the digest rule (approvals/digest.ts) bundled in. The fixture agent uses it, and Taskbay's
// signer (approval-signing/keys.ts) takes the token type and the JWKS path from here.
//
// An approved message carries metadata.approval = {requestId, decisionId, revision,
// revisionDigest, signature}; `signature` is a compact JWS (EdDSA, Ed25519) whose payload names
// the same four fields, the agent's task id, the issuer (Taskbay's public URL) and iat.

/** The JWS `typ` of an approval signature (RFC 8725 explicit typing: no other token passes for one). */
export const APPROVAL_TOKEN_TYPE = 'taskbay-approval+jwt';

/** Where Taskbay publishes its approval signing keys, below its public URL. */
export const JWKS_PATH = '/.well-known/jwks.json';

/** The fields of metadata.approval (seed 000) that the signature covers. */
export const SIGNED_FIELDS = ['requestId', 'decisionId', 'revision', 'revisionDigest'] as const;

export interface ApprovalClaims {
  /** Taskbay's public URL. */
  iss: string;
  /** The decision time, seconds since the epoch. */
  iat: number;
  requestId: string;
  decisionId: string;
  revision: number;
  revisionDigest: string;
  /** The agent's id of the task the approval was delivered on (null when Taskbay knew none). */
  taskId: string | null;
}

/** A public key as JWKS lists it (RFC 7517); only OKP / Ed25519 keys are used. */
export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
  use?: string;
  [member: string]: unknown;
}

export interface Jwks {
  keys: Jwk[];
}

/** What is read of a received A2A message (a Message object, as it arrived). */
export interface ReceivedApprovedMessage {
  parts: readonly { text?: unknown; data?: unknown; mediaType?: unknown }[];
  metadata?: Record<string, unknown> | null;
}

export interface VerifyOptions {
  /** The keys of the Taskbay the agent trusts: fetched from its JWKS URL (fetchJwks), or configured. */
  jwks: Jwks;
  /** That Taskbay's public URL, as configured by the agent (never taken from the message). */
  issuer: string;
  /** The agent's own id of the task the message arrived on. */
  taskId: string;
  /** send_data: the form the agent asked with (the digest covers it). */
  form?: Record<string, unknown>;
}

export type Verdict = { ok: true; claims: ApprovalClaims; action: ApprovalAction; keyId: string } | { ok: false; reason: string };

const JSON_MEDIA_TYPE = 'application/json';
/** Far above a real signature (~400 characters): longer input is refused before decoding. */
const MAX_SIGNATURE_CHARS = 4096;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JWKS URL of a Taskbay public URL. */
export function jwksUrl(issuer: string): string {
  return issuer.replace(/\/+$/, '') + JWKS_PATH;
}

/** Fetches a JWKS (GET, JSON); throws when the answer is not one. */
export async function fetchJwks(url: string, fetchImpl: typeof fetch = fetch): Promise<Jwks> {
  const res = await fetchImpl(url, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`GET ${url} answered HTTP ${res.status}`);
  const body: unknown = await res.json();
  if (!isObject(body) || !Array.isArray(body.keys) || !body.keys.every(isObject)) throw new Error(`${url} is not a JWKS (no keys array)`);
  return body as unknown as Jwks;
}

/**
 * The action the message carries, as received (the inverse of how Taskbay builds it): text parts
 * and metadata.decision are a send_message; one application/json data part and no text are a
 * send_data, with the form the agent asked with.
 */
export function receivedAction(message: ReceivedApprovedMessage, form?: Record<string, unknown>): ApprovalAction {
  const texts = message.parts.filter((p) => typeof p.text === 'string').map((p) => p.text as string);
  const values = message.parts.find((p) => p.mediaType === JSON_MEDIA_TYPE && isObject(p.data))?.data as Record<string, unknown> | undefined;
  if (texts.length === 0 && values) return { kind: 'send_data', form: form ?? {}, values };
  // Whatever arrived in metadata.decision is hashed as it is: an agent acts on what it received.
  const decision = message.metadata?.decision;
  return { kind: 'send_message', text: texts.join(''), data: (decision ?? null) as Record<string, unknown> | null };
}

function decodeJson(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function publicKeyOf(jwk: Jwk): KeyObject | null {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || 'd' in jwk) return null;
  if ((jwk.alg !== undefined && jwk.alg !== 'EdDSA' && jwk.alg !== 'Ed25519') || (jwk.use !== undefined && jwk.use !== 'sig')) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch {
    return null;
  }
}

/** The signature's header and claims when it is a well-formed approval JWS signed by a key of `jwks`. */
function checkSignature(token: string, jwks: Jwks): { claims: Record<string, unknown>; keyId: string } | string {
  if (token.length > MAX_SIGNATURE_CHARS) return 'the signature is too long';
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every((s) => BASE64URL.test(s))) return 'the signature is not a compact JWS';
  const [headerB64, payloadB64, signatureB64] = segments as [string, string, string];
  const header = decodeJson(headerB64);
  const claims = decodeJson(payloadB64);
  if (!header || !claims) return 'the signature is not a compact JWS';
  if (header.alg !== 'EdDSA' && header.alg !== 'Ed25519') return `the signature's algorithm is ${JSON.stringify(header.alg)}, not EdDSA`;
  if (header.typ !== APPROVAL_TOKEN_TYPE) return `the signature's type is ${JSON.stringify(header.typ)}, not ${APPROVAL_TOKEN_TYPE}`;
  if ('crit' in header) return 'the signature names critical header parameters';
  if (typeof header.kid !== 'string') return 'the signature names no key (kid)';
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  const key = jwk ? publicKeyOf(jwk) : null;
  if (!key) return `key ${header.kid} is not an Ed25519 key of the trusted JWKS`;
  const valid = verify(null, Buffer.from(`${headerB64}.${payloadB64}`), key, Buffer.from(signatureB64, 'base64url'));
  if (!valid) return `the signature does not verify with key ${header.kid}`;
  return { claims, keyId: header.kid };
}

/**
 * Verifies an approved message: Taskbay's signature (by a key of the trusted JWKS, from the
 * trusted issuer), that it names exactly the metadata.approval received and the task it arrived
 * on, and that the digest recomputed from the received content is the signed one. Never throws
 * on hostile input: a refusal says why.
 */
export function verifyApprovedMessage(message: ReceivedApprovedMessage, opts: VerifyOptions): Verdict {
  const refuse = (reason: string): Verdict => ({ ok: false, reason });
  const approval = message.metadata?.approval;
  if (!isObject(approval)) return refuse('the message carries no metadata.approval');
  if (typeof approval.signature !== 'string') return refuse('metadata.approval carries no signature');

  const checked = checkSignature(approval.signature, opts.jwks);
  if (typeof checked === 'string') return refuse(checked);
  const { claims, keyId } = checked;
  if (claims.iss !== opts.issuer) return refuse(`the signature was issued by ${JSON.stringify(claims.iss)}, not ${JSON.stringify(opts.issuer)}`);
  if (typeof claims.iat !== 'number') return refuse('the signature carries no iat');
  for (const field of SIGNED_FIELDS) {
    if (claims[field] === undefined || claims[field] !== approval[field]) {
      return refuse(`metadata.approval.${field} is ${JSON.stringify(approval[field])}; the signature says ${JSON.stringify(claims[field])}`);
    }
  }
  if (claims.taskId !== opts.taskId) return refuse(`the approval was signed for task ${JSON.stringify(claims.taskId)}, not ${JSON.stringify(opts.taskId)}`);

  const action = receivedAction(message, opts.form);
  const digest = actionDigest(action);
  if (digest !== claims.revisionDigest) return refuse(`the received content has digest ${digest}; the approved one is ${String(claims.revisionDigest)}`);
  return { ok: true, claims: claims as unknown as ApprovalClaims, action, keyId };
}

// ---------------------------------------------------------------------------------------------
// For authors of AG-UI agents (docs/AG-UI.md "Verifying a resume"): Taskbay answers an interrupt
// with a resume entry. A resolved entry carries, in its metadata, `approval` = {requestId,
// decisionId, revision, revisionDigest, signature} exactly as an A2A approved message does, and
// `action`, the approved action the digest covers; its payload is derived from that action by
// resumePayloadOf. verifyResumeEntry checks all of it with the same rules as
// verifyApprovedMessage, with the thread id in the place of the A2A task id.

/**
 * The payload of a resolved entry, from the approved action: a form's values (send_data); for a
 * send_message (a tool call to approve) `{ approved: true }`, plus `editedArgs` (the full
 * replacement of the tool call's arguments, as AG-UI's approve-with-edits pattern names it) when
 * a reviewer edited the request (revision > 1) and the action's data holds `arguments`.
 */
export function resumePayloadOf(action: ApprovalAction, revision: number): unknown {
  if (action.kind === 'send_data') return action.values;
  const data = action.data;
  if (revision > 1 && isObject(data) && Object.hasOwn(data, 'arguments')) return { approved: true, editedArgs: data.arguments };
  return { approved: true };
}

/** A resume entry as received (AG-UI ResumeEntry). */
export interface ReceivedResumeEntry {
  interruptId?: unknown;
  status?: unknown;
  payload?: unknown;
  metadata?: Record<string, unknown> | null;
}

export interface VerifyResumeOptions {
  jwks: Jwks;
  /** The Taskbay the agent trusts (its public URL), as configured by the agent. */
  issuer: string;
  /** The thread the resume arrived on. */
  threadId: string;
}

/**
 * Verifies a resolved resume entry: Taskbay's signature over metadata.approval, signed for this
 * thread, the digest of metadata.action, and that the payload is the one that action gives.
 * Never throws on hostile input. The agent then acts on the verified action (and checks it
 * answers its own interrupt: its tool call, its form).
 */
export function verifyResumeEntry(entry: ReceivedResumeEntry, opts: VerifyResumeOptions): Verdict {
  const refuse = (reason: string): Verdict => ({ ok: false, reason });
  if (entry.status !== 'resolved') return refuse(`the entry is ${JSON.stringify(entry.status)}, not resolved: nothing was approved`);
  const metadata = entry.metadata;
  if (!isObject(metadata) || !isObject(metadata.approval)) return refuse('the entry carries no metadata.approval');
  const action = metadata.action;
  if (!isObject(action) || (action.kind !== 'send_message' && action.kind !== 'send_data')) return refuse('the entry carries no metadata.action');
  const message =
    action.kind === 'send_data'
      ? { parts: [{ data: action.values, mediaType: 'application/json' }], metadata: { approval: metadata.approval } }
      : { parts: [{ text: action.text }], metadata: { approval: metadata.approval, decision: action.data ?? null } };
  const verdict = verifyApprovedMessage(message, {
    jwks: opts.jwks,
    issuer: opts.issuer,
    taskId: opts.threadId,
    ...(action.kind === 'send_data' && isObject(action.form) ? { form: action.form } : {}),
  });
  if (!verdict.ok) return verdict;
  const expected = resumePayloadOf(verdict.action, verdict.claims.revision);
  if (canonicalJson(entry.payload ?? null) !== canonicalJson(expected)) return refuse('the payload is not the one the approved action gives');
  return verdict;
}
