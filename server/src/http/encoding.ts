// Content negotiation for precompressed files (RFC 9110 §12.5.3 Accept-Encoding): the
// acceptable coding with the highest weight among those available, brotli first on a tie;
// null means send the file as it is.

export type Coding = 'br' | 'gzip';

/** Weights by coding name (lower case); `*` stands for any coding not listed. */
function weights(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of header.split(',')) {
    const [name, ...params] = item.trim().split(';');
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k?.trim().toLowerCase() === 'q') {
        const n = Number(v);
        q = Number.isFinite(n) && n >= 0 && n <= 1 ? n : 0;
      }
    }
    out.set(name.trim().toLowerCase(), q);
  }
  return out;
}

export function negotiateEncoding(acceptEncoding: string | string[] | undefined, available: readonly Coding[]): Coding | null {
  if (!acceptEncoding || available.length === 0) return null;
  const w = weights(Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding);
  let best: Coding | null = null;
  let bestQ = 0;
  for (const coding of (['br', 'gzip'] as const).filter((c) => available.includes(c))) {
    const q = w.get(coding) ?? (coding === 'gzip' ? w.get('x-gzip') : undefined) ?? w.get('*') ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}
