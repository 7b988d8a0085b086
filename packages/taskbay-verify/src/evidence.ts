import { EVIDENCE_DETAIL_MAX_CHARS, EXECUTION_EVIDENCE_MEDIA_TYPE } from './constants.js';
import { actionDigest, type ApprovalAction } from './digest.js';

// The execution-evidence part (docs/VERIFYING-APPROVALS.md "Reporting execution"). After acting
// on a verified approval, a cooperating agent whose card advertises EXECUTION_EVIDENCE_EXTENSION
// puts this data part in a message of the same task (its reply to the approved message, or a
// later status message), naming the decision, the digest of what it executed (recomputed from
// what it received) and the outcome. Taskbay records it as evidence next to the task state it
// observes.

export type ExecutionOutcome = 'succeeded' | 'failed';

/** The part's `data`. */
export interface ExecutionEvidence {
  /** metadata.approval.requestId of the approved message. */
  requestId: string;
  /** metadata.approval.decisionId of the approved message. */
  decisionId: string;
  /** SHA-256 hex (the digest rule) of the action the agent executed, recomputed from what it received. */
  executedDigest: string;
  outcome: ExecutionOutcome;
  /** Optional, at most EVIDENCE_DETAIL_MAX_CHARS characters; shown to reviewers as plain text. */
  detail?: string;
}

/** The part in the A2A v1.0 JSON shape (an @a2a-js/sdk 1.x agent sends it as { content: { $case: 'data', value: part.data }, mediaType: part.mediaType }). */
export interface ExecutionEvidencePart {
  data: ExecutionEvidence;
  mediaType: typeof EXECUTION_EVIDENCE_MEDIA_TYPE;
}

/**
 * The evidence part for an approval the agent acted on. `approval` is metadata.approval as
 * received (or a verdict's claims); `executed` is the action the agent executed (for example
 * `verdict.action`), or its digest when the agent computed it itself.
 */
export function executionEvidencePart(
  approval: { requestId: string; decisionId: string },
  executed: ApprovalAction | string,
  outcome: ExecutionOutcome,
  detail?: string,
): ExecutionEvidencePart {
  const data: ExecutionEvidence = {
    requestId: approval.requestId,
    decisionId: approval.decisionId,
    executedDigest: typeof executed === 'string' ? executed : actionDigest(executed),
    outcome,
  };
  if (detail !== undefined) data.detail = detail.slice(0, EVIDENCE_DETAIL_MAX_CHARS);
  return { data, mediaType: EXECUTION_EVIDENCE_MEDIA_TYPE };
}
