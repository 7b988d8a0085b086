import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

// The building blocks of every content hash in Taskbay: RFC 8785 canonical JSON and SHA-256 hex.
// What is hashed is each rule's own (approvals/digest.ts, audit/log.ts, commands/rules.ts).

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

/** A UUID-shaped id (version nibble 5, RFC 4122 variant) made from a SHA-256 hex digest: stable for the same input. */
export function uuidFromDigest(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
