// The one digest of an approval action (seed 000, "What the approved message carries"):
// SHA-256 hex of RFC 8785 canonical JSON of {kind, text, data} (data null when absent) or
// {kind, form, values}. The rule is written once, in the package agents verify with
// (packages/taskbay-verify/src/digest.ts, @taskbay/verify): Taskbay computes the digest it stores
// and signs with the same function an agent recomputes it with.
export { actionDigest, digestInput, type ApprovalAction, type SendDataAction, type SendMessageAction } from '../../../packages/taskbay-verify/src/digest.js';

/** Request key (seed 000, step 4): agent:<local task id>:<message id>:<first 16 hex of digest>. */
export function approvalRequestKey(localTaskId: string, messageId: string, digest: string): string {
  return `agent:${localTaskId}:${messageId}:${digest.slice(0, 16)}`;
}
