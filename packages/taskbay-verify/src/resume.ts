import { canonicalJson } from './canonical-json.js';
import { JSON_MEDIA_TYPE } from './constants.js';
import type { ApprovalAction } from './digest.js';
import { isObject, type Jwks } from './jws.js';
import { verifyApprovedMessage, type Verdict } from './verify.js';

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

function verifyEntry(entry: ReceivedResumeEntry, opts: VerifyResumeOptions): Verdict {
  const refuse = (reason: string): Verdict => ({ ok: false, reason });
  if (!isObject(entry)) return refuse('expected an AG-UI resume entry ({ interruptId, status, payload, metadata })');
  if (entry.status !== 'resolved') return refuse(`the entry is ${JSON.stringify(entry.status)}, not resolved: nothing was approved`);
  const metadata = entry.metadata;
  if (!isObject(metadata) || !isObject(metadata.approval)) return refuse('the entry carries no metadata.approval');
  const action = metadata.action;
  if (!isObject(action) || (action.kind !== 'send_message' && action.kind !== 'send_data')) return refuse('the entry carries no metadata.action');
  const message =
    action.kind === 'send_data'
      ? { parts: [{ data: action.values, mediaType: JSON_MEDIA_TYPE }], metadata: { approval: metadata.approval } }
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

/**
 * Verifies a resolved resume entry: Taskbay's signature over metadata.approval, signed for this
 * thread, the digest of metadata.action, and that the payload is the one that action gives.
 * Never throws on hostile input. The agent then acts on the verified action (and checks it
 * answers its own interrupt: its tool call, its form).
 */
export function verifyResumeEntry(entry: ReceivedResumeEntry, opts: VerifyResumeOptions): Verdict {
  try {
    return verifyEntry(entry, opts);
  } catch (e) {
    return { ok: false, reason: `the entry could not be read (${e instanceof Error ? e.message : String(e)})` };
  }
}
