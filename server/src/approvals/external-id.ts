import { EXTERNAL_ID_LIMITS } from '../limits.js';
import { describeType } from '../lib/untrusted.js';

// A request's externalId (limits.ts EXTERNAL_ID_LIMITS): checked where it comes in
// (createApproval, approvals(externalId:), the command-approvals REST body), before anything is
// written. Absent (undefined or null) is none.

export type ParsedExternalId = { ok: true; value: string | null } | { ok: false; error: string };

export function parseExternalId(value: unknown, field = 'externalId'): ParsedExternalId {
  if (value === undefined || value === null) return { ok: true, value: null };
  const { min, max, characters } = EXTERNAL_ID_LIMITS;
  const rule = `${min} to ${max} characters of printable ASCII (space to ~)`;
  if (typeof value !== 'string') return { ok: false, error: `${field} must be a string of ${rule}, got ${describeType(value)}` };
  if (value.length < min || value.length > max) return { ok: false, error: `${field} must be ${rule}; it has ${value.length}` };
  if (!characters.test(value)) return { ok: false, error: `${field} must be ${rule}; it has other characters` };
  return { ok: true, value };
}
