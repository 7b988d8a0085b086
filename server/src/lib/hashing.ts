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

/**
 * canonicalSha256 of a large value without holding the event loop: an audit
 * checkpoint's heads and the verifier's stored state name every stream, and at 10,000 streams
 * canonicalising them in one go took 50 to 70 ms. The value is written member by member into a
 * streaming SHA-256, each container whose members are all plain values in one piece through the
 * same `canonicalize`, and the loop turns every `sliceMs`. Same result as canonicalSha256 for JSON
 * data (hashing.test.ts); functions and cycles are not JSON and not expected here.
 */
export async function canonicalSha256Yielding(value: unknown, sliceMs = 3): Promise<string> {
  const hash = createHash('sha256');
  let since = performance.now();
  const turn = async () => {
    if (performance.now() - since <= sliceMs) return;
    await new Promise((r) => setImmediate(r));
    since = performance.now();
  };
  const write = async (v: unknown): Promise<void> => {
    if (v === null || typeof v !== 'object') return void hash.update(canonicalJson(v), 'utf8');
    const json = (v as { toJSON?: () => unknown }).toJSON;
    if (typeof json === 'function') return write(json.call(v));
    const members = Array.isArray(v) ? v : Object.values(v);
    if (members.every((m) => m === null || typeof m !== 'object')) return void hash.update(canonicalJson(v), 'utf8');
    if (Array.isArray(v)) {
      hash.update('[');
      for (let i = 0; i < v.length; i++) {
        if (i) hash.update(',');
        const m = v[i];
        await write(m === undefined || typeof m === 'symbol' ? null : m);
        await turn();
      }
      return void hash.update(']');
    }
    hash.update('{');
    let first = true;
    for (const key of Object.keys(v).sort()) {
      const m = (v as Record<string, unknown>)[key];
      if (m === undefined || typeof m === 'symbol') continue;
      if (!first) hash.update(',');
      first = false;
      hash.update(`${canonicalJson(key)}:`, 'utf8');
      await write(m);
      await turn();
    }
    hash.update('}');
  };
  await write(value);
  return hash.digest('hex');
}
