import { MEDIA_TYPE } from '../a2a/extensions.js';
import type { Part } from '../a2a/types.js';
import { codePointLength, EVIDENCE_LIMITS } from '../limits.js';
import { describeType, isPlainObject, isUuid, own } from '../lib/untrusted.js';
import { EVIDENCE_DETAIL_MAX_CHARS } from '../verify-approval/index.js';
import type { EvidenceOutcome } from './entities.js';

// Reading an execution-evidence part (docs/VERIFYING-APPROVALS.md "Reporting execution"): agent
// content, so nothing here throws, spreads or trusts it. The first part of the media type in a
// message is the report; a malformed one is refused with a reason that never echoes its values.

const DIGEST = /^[0-9a-f]{64}$/;
const OUTCOMES: Record<string, EvidenceOutcome> = { succeeded: 'SUCCEEDED', failed: 'FAILED' };

export interface EvidenceReport {
  requestId: string;
  decisionId: string;
  executedDigest: string;
  outcome: EvidenceOutcome;
  detail: string | null;
}

export type EvidenceRead =
  | { ok: true; report: EvidenceReport }
  /** `decisionId` when the part named a well-formed one (so the refusal can say which). */
  | { ok: false; reason: string; decisionId: string | null };

/** The first evidence part of a message, read; null when the message carries none. */
export function readEvidencePart(parts: readonly Part[]): EvidenceRead | null {
  const part = parts.find((p) => p.mediaType === MEDIA_TYPE.executionEvidence);
  if (!part) return null;
  const data = part.data;
  let decisionId: string | null = null;
  const refuse = (reason: string): EvidenceRead => ({ ok: false, reason, decisionId });
  if (!isPlainObject(data)) return refuse(`the part's data is ${describeType(data)}, not an object`);
  if (new TextEncoder().encode(JSON.stringify(data)).length > EVIDENCE_LIMITS.partMaxBytes) {
    return refuse(`the part is larger than ${EVIDENCE_LIMITS.partMaxBytes} bytes`);
  }
  const rawDecision = own(data, 'decisionId');
  if (typeof rawDecision === 'string' && isUuid(rawDecision)) decisionId = rawDecision.toLowerCase();
  else return refuse('decisionId must be a UUID');
  const requestId = own(data, 'requestId');
  if (typeof requestId !== 'string' || !isUuid(requestId)) return refuse('requestId must be a UUID');
  const executedDigest = own(data, 'executedDigest');
  if (typeof executedDigest !== 'string' || !DIGEST.test(executedDigest)) return refuse('executedDigest must be 64 lower-case hex characters');
  const outcome = own(data, 'outcome');
  const mapped = typeof outcome === 'string' && Object.hasOwn(OUTCOMES, outcome) ? OUTCOMES[outcome]! : null;
  if (!mapped) return refuse('outcome must be "succeeded" or "failed"');
  const detail = own(data, 'detail');
  if (detail !== undefined && detail !== null && typeof detail !== 'string') return refuse(`detail is ${describeType(detail)}, not a string`);
  if (typeof detail === 'string' && codePointLength(detail, EVIDENCE_DETAIL_MAX_CHARS) > EVIDENCE_DETAIL_MAX_CHARS)
    return refuse(`detail is longer than ${EVIDENCE_DETAIL_MAX_CHARS} characters`);
  return {
    ok: true,
    report: { requestId: requestId.toLowerCase(), decisionId, executedDigest, outcome: mapped, detail: typeof detail === 'string' && detail ? detail : null },
  };
}
