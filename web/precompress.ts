import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

// The post-build step: every compressible file under web/dist/assets gets a .br and a .gz
// sibling, made once at build time at the highest levels (node:zlib, no dependency). The
// server picks one by Accept-Encoding (server/src/http/console.ts); hashed names make them
// cacheable forever.

const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json', '.txt', '.map', '.html']);

export function precompress(dir: string): { files: number; bytes: number; br: number; gz: number } {
  const total = { files: 0, bytes: 0, br: 0, gz: 0 };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return total;
  }
  for (const name of names) {
    const file = join(dir, name);
    if (!COMPRESSIBLE.has(extname(name)) || !statSync(file).isFile()) continue;
    const body = readFileSync(file);
    const br = brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
    const gz = gzipSync(body, { level: 9 });
    // A variant no smaller than the file is not worth a header.
    if (br.length < body.length) writeFileSync(`${file}.br`, br);
    if (gz.length < body.length) writeFileSync(`${file}.gz`, gz);
    total.files++;
    total.bytes += body.length;
    total.br += Math.min(br.length, body.length);
    total.gz += Math.min(gz.length, body.length);
  }
  return total;
}

/** Vite plugin: precompress the assets of every build (npm run build, packages/agent-taskbay/build.mjs). */
export function precompressPlugin() {
  return {
    name: 'taskbay-precompress',
    apply: 'build' as const,
    writeBundle(options: { dir?: string }) {
      if (!options.dir) return;
      const t = precompress(join(options.dir, 'assets'));
      const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
      console.log(`precompressed ${t.files} assets: ${kb(t.bytes)} → brotli ${kb(t.br)}, gzip ${kb(t.gz)}`);
    },
  };
}
