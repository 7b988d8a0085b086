// RFC 8785 (JCS) canonical JSON, the rule every Taskbay digest hashes with. Written here so the
// package needs nothing but Node: members sorted by their UTF-16 code units at every level, no
// whitespace, strings and numbers as ECMAScript's JSON.stringify writes them (RFC 8785 sections
// 3.2.2.2 and 3.2.2.3 are defined as exactly that). It gives the same text as the server's
// lib/hashing.ts `canonicalJson` (the `canonicalize` package) for every value JSON can carry, and
// refuses what that refuses: NaN and infinities, lone surrogates, cycles, a top-level value that
// is no JSON at all (server/test/unit/taskbay-verify-canonical-json.test.ts checks both over
// generated values).

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next < 0xdc00 || next > 0xdfff) return true;
      i++;
    }
  }
  return false;
}

function str(s: string): string {
  if (hasLoneSurrogate(s)) throw new Error('Lone surrogate is not allowed');
  return JSON.stringify(s);
}

/** The canonical text of `v`, or undefined where JSON has no value (undefined, a symbol, a function). */
function write(v: unknown, seen: Set<object>): string | undefined {
  switch (typeof v) {
    case 'string':
      return str(v);
    case 'number':
      if (Number.isNaN(v)) throw new Error('NaN is not allowed');
      if (!Number.isFinite(v)) throw new Error('Infinity is not allowed');
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'undefined':
    case 'symbol':
    case 'function':
      return undefined;
  }
  if (v === null) return 'null';
  const o = v as object;
  if (seen.has(o)) throw new Error('Circular reference detected');
  seen.add(o);
  try {
    const toJSON = (o as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return write(toJSON.call(o), seen);
    if (Array.isArray(o)) return `[${o.map((m) => write(m, seen) ?? 'null').join(',')}]`;
    const members: string[] = [];
    const record = o as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) {
      const member = write(record[key], seen);
      if (member !== undefined) members.push(`${str(key)}:${member}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    seen.delete(o);
  }
}

/** RFC 8785 canonical JSON of `value`; throws on a value JSON cannot carry. */
export function canonicalJson(value: unknown): string {
  const out = write(value, new Set());
  if (out === undefined) throw new Error('value cannot be canonicalized');
  return out;
}
