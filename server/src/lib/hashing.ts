import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

// The building blocks of every content hash in Taskbay: RFC 8785 canonical JSON and SHA-256 hex.
// What is hashed is each rule's own (approvals/digest.ts, audit/log.ts, grants/rules.ts).

export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new Error('value cannot be canonicalized');
  return out;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Canonical JSON (RFC 8785) then SHA-256 hex. */
export const canonicalSha256 = (value: unknown): string => sha256Hex(canonicalJson(value));
