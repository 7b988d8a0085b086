import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

// The one digest of an approval action (seed 000, "What the approved message carries"):
// SHA-256 hex of RFC 8785 canonical JSON of {kind, text, data} (data null when absent) or
// {kind, form, values}. The fixture agent recomputes it with this same function.

export type SendMessageAction = { kind: 'send_message'; text: string; data?: Record<string, unknown> | null };
export type SendDataAction = { kind: 'send_data'; form: Record<string, unknown>; values: Record<string, unknown> };
export type ApprovalAction = SendMessageAction | SendDataAction;

export function digestInput(action: ApprovalAction): Record<string, unknown> {
  return action.kind === 'send_message'
    ? { kind: action.kind, text: action.text, data: action.data ?? null }
    : { kind: action.kind, form: action.form, values: action.values };
}

export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new Error('value cannot be canonicalized');
  return out;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A UUID-shaped id (version nibble 5, RFC 4122 variant) made from a SHA-256 hex digest: stable for the same input. */
export function uuidFromDigest(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function actionDigest(action: ApprovalAction): string {
  return sha256Hex(canonicalJson(digestInput(action)));
}

/** Request key (seed 000, step 4): agent:<local task id>:<message id>:<first 16 hex of digest>. */
export function approvalRequestKey(localTaskId: string, messageId: string, digest: string): string {
  return `agent:${localTaskId}:${messageId}:${digest.slice(0, 16)}`;
}
