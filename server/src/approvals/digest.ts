import { canonicalSha256 } from '../lib/hashing.js';

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

export function actionDigest(action: ApprovalAction): string {
  return canonicalSha256(digestInput(action));
}

/** Request key (seed 000, step 4): agent:<local task id>:<message id>:<first 16 hex of digest>. */
export function approvalRequestKey(localTaskId: string, messageId: string, digest: string): string {
  return `agent:${localTaskId}:${messageId}:${digest.slice(0, 16)}`;
}
