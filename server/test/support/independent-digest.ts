import { createHash } from 'node:crypto';

// Tests recompute digests and fingerprints without the product's code, so a wrong digest in the
// product cannot agree with itself. RFC 8785 for the plain values tests use (strings, integers,
// booleans, null, objects, arrays): object keys sorted at every level.
export function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
