import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

// The console's JavaScript as browsers download it (docs/PERFORMANCE.md, "Console bytes"), from
// the build's manifest (web/dist/.vite/manifest.json, `build.manifest` in web/vite.config.ts):
// - firstLoad: the entry chunk and every chunk it imports statically, followed through their
//   own static imports: what a reviewer's browser fetches before the console shows (the inbox,
//   an approval, sign-in). Dynamic imports (the pages fetched when first opened) are not in it.
// - all: every JavaScript chunk of the build.
// Each as raw bytes, gzip -9 and brotli at its highest quality (how web/precompress.ts writes
// the siblings the server sends), each file compressed on its own as it travels.
//
//   npx tsx server/scripts/console-bytes.ts [dist]   (default web/dist; run `npm run build` first)

type ManifestChunk = { file: string; isEntry?: boolean; imports?: string[]; dynamicImports?: string[] };
export type Bytes = { files: number; rawBytes: number; gzipBytes: number; brotliBytes: number };

const DEFAULT_DIST = resolve(fileURLToPath(import.meta.url), '../../../web/dist');

function sizes(dist: string, files: string[]): Bytes {
  const total: Bytes = { files: files.length, rawBytes: 0, gzipBytes: 0, brotliBytes: 0 };
  for (const file of files) {
    const body = readFileSync(join(dist, file));
    total.rawBytes += body.length;
    total.gzipBytes += gzipSync(body, { level: 9 }).length;
    total.brotliBytes += brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY } }).length;
  }
  return total;
}

/** The chunks the entries load before running: the entries and their static imports, transitively. */
export function firstLoadFiles(manifest: Record<string, ManifestChunk>): string[] {
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    const chunk = manifest[key];
    if (!chunk) throw new Error(`manifest: ${key} imported but not listed`);
    seen.add(key);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);
  if (!seen.size) throw new Error('manifest: no entry chunk');
  return [...seen].map((key) => manifest[key]!.file).filter((file) => file.endsWith('.js'));
}

export function consoleBytes(dist = DEFAULT_DIST): { firstLoad: Bytes & { chunks: string[] }; all: Bytes } | { note: string } {
  let manifest: Record<string, ManifestChunk>;
  try {
    manifest = JSON.parse(readFileSync(join(dist, '.vite/manifest.json'), 'utf8')) as Record<string, ManifestChunk>;
  } catch {
    return { note: 'web/dist/.vite/manifest.json absent: run `npm run build` first' };
  }
  const first = firstLoadFiles(manifest);
  const all = [...new Set(Object.values(manifest).map((c) => c.file))].filter((file) => file.endsWith('.js'));
  return { firstLoad: { ...sizes(dist, first), chunks: first }, all: sizes(dist, all) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(consoleBytes(process.argv[2] ? resolve(process.argv[2]) : undefined), null, 2));
}
