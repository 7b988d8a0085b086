import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './repo-root.js';

// The files of docs/samples, which the pages embed and the tests run or read as the server does.

/** docs/samples in this checkout. */
export const SAMPLES = join(REPO_ROOT, 'docs/samples');

/** A sample's text. */
export const sampleText = (name: string) => readFileSync(join(SAMPLES, name), 'utf8');

/** A JSON sample, parsed. */
export const sampleJson = (name: string) => JSON.parse(sampleText(name));

/** The shape of a value, to compare a sample with placeholders to the real thing: the same keys at every level, and the same kind of value. */
export function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shapeOf);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shapeOf((v as any)[k])]),
    );
  return v === null ? 'null' : typeof v;
}
