import { createHash } from 'node:crypto';
import type { ApprovalAction } from './action.js';
import { canonicalJson } from './canonical-json.js';

// The one digest of an approval action (seed 000, "What the approved message carries"): SHA-256
// hex of RFC 8785 canonical JSON of {kind, text, data} (data null when absent) or {kind, form,
// values}. Taskbay computes it with this very function (server/src/approvals/digest.ts re-exports
// it), and an agent recomputes it with it from what it received.

export type { ApprovalAction, SendDataAction, SendMessageAction } from './action.js';

/** What the digest hashes: the action's fields of its kind, and nothing else it may carry. */
export function digestInput(action: ApprovalAction): Record<string, unknown> {
  return action.kind === 'send_message'
    ? { kind: action.kind, text: action.text, data: action.data ?? null }
    : { kind: action.kind, form: action.form, values: action.values };
}

/** SHA-256 hex of the canonical JSON of the digest input. Throws on content JSON cannot carry (a lone surrogate, NaN). */
export function actionDigest(action: ApprovalAction): string {
  return createHash('sha256')
    .update(canonicalJson(digestInput(action)), 'utf8')
    .digest('hex');
}
