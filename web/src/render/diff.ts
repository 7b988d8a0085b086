// Line diff (longest common subsequence) between two revisions of an action, on a stable text
// form: send_message shows its text line by line and data as sorted, indented JSON.

import { isPlainObject } from '../../../server/src/lib/untrusted.js';

export type DiffLine = { op: '=' | '+' | '-'; text: string };

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

export function jsonLines(v: unknown): string[] {
  return (JSON.stringify(sorted(v), null, 2) ?? 'undefined').split('\n');
}

export function actionLines(action: unknown): string[] {
  const a = (action ?? {}) as Record<string, unknown>;
  if (a.kind === 'send_message' && typeof a.text === 'string') {
    const lines = ['kind: send_message', 'text:', ...a.text.split('\n').map((l) => `  ${l}`)];
    if (a.data !== undefined && a.data !== null) lines.push('data:', ...jsonLines(a.data).map((l) => `  ${l}`));
    return lines;
  }
  if (a.kind === 'send_data') {
    return ['kind: send_data', 'values:', ...jsonLines(a.values ?? null).map((l) => `  ${l}`), 'form:', ...jsonLines(a.form ?? null).map((l) => `  ${l}`)];
  }
  return jsonLines(action);
}

export function diffLines(before: string[], after: string[]): DiffLine[] {
  const n = before.length;
  const m = after.length;
  // Very large inputs: fall back to "all removed, all added" rather than an n*m table.
  if (n * m > 4_000_000) return [...before.map((text) => ({ op: '-' as const, text })), ...after.map((text) => ({ op: '+' as const, text }))];
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      out.push({ op: '=', text: before[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', text: before[i++]! });
    else out.push({ op: '+', text: after[j++]! });
  }
  while (i < n) out.push({ op: '-', text: before[i++]! });
  while (j < m) out.push({ op: '+', text: after[j++]! });
  return out;
}

export type PathChange = { path: string; op: 'added' | 'removed' | 'changed' };

/** The JSON paths whose values differ (objects by key, arrays by index), sorted. */
export function changedPaths(before: unknown, after: unknown, prefix = ''): PathChange[] {
  const at = (k: string | number) => (typeof k === 'number' ? `${prefix}[${k}]` : prefix ? `${prefix}.${k}` : k);
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) =>
      !Object.hasOwn(after, k)
        ? [{ path: at(k), op: 'removed' as const }]
        : !Object.hasOwn(before, k)
          ? [{ path: at(k), op: 'added' as const }]
          : changedPaths(before[k], after[k], at(k)),
    );
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: PathChange[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (i >= after.length) out.push({ path: at(i), op: 'removed' });
      else if (i >= before.length) out.push({ path: at(i), op: 'added' });
      else out.push(...changedPaths(before[i], after[i], at(i)));
    }
    return out;
  }
  return JSON.stringify(sorted(before)) === JSON.stringify(sorted(after)) ? [] : [{ path: prefix || '(whole value)', op: 'changed' }];
}

export type DiffChunk = DiffLine | { op: 'skip'; lines: DiffLine[] };

/** Unchanged runs longer than 2 × context collapse to one "skip" chunk, keeping `context` lines around changes. */
export function collapseUnchanged(lines: DiffLine[], context = 2): DiffChunk[] {
  const out: DiffChunk[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.op !== '=') {
      out.push(lines[i++]!);
      continue;
    }
    let j = i;
    while (j < lines.length && lines[j]!.op === '=') j++;
    const run = lines.slice(i, j);
    const head = i === 0 ? 0 : context;
    const tail = j === lines.length ? 0 : context;
    if (run.length > head + tail + 1) {
      out.push(...run.slice(0, head), { op: 'skip', lines: run.slice(head, run.length - tail) }, ...run.slice(run.length - tail));
    } else out.push(...run);
    i = j;
  }
  return out;
}
