import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precompress } from '../../../web/precompress.js';
import { negotiateEncoding } from '../../src/http/encoding.js';
import { serveConsole } from '../../src/http/console.js';

// Issue 9, item 12: hashed assets go out compressed (brotli or gzip, made at build time) with a
// year of immutable caching and Vary: Accept-Encoding; index.html is never cached.

let dir: string;
let server: Server;
const JS = `export const x = ${JSON.stringify('console '.repeat(4000))};\n`;
const PAGE = `export const PoliciesPage = ${JSON.stringify('policies '.repeat(2000))};\n`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'taskbay-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/app-abc123.js"></script>');
  writeFileSync(join(dir, 'assets', 'app-abc123.js'), JS);
  writeFileSync(join(dir, 'assets', 'tiny-abc123.css'), 'a{}');
  // A page's own chunk, fetched by import() from the entry; the manifest Vite writes beside.
  writeFileSync(join(dir, 'assets', 'Policies-def456.js'), PAGE);
  mkdirSync(join(dir, '.vite'));
  writeFileSync(join(dir, '.vite', 'manifest.json'), '{"index.html":{"file":"assets/app-abc123.js","isEntry":true}}');
  precompress(join(dir, 'assets'));
  server = createServer((req, res) => {
    void serveConsole(req, res, 'placeholder', dir).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A raw GET (node:http does not decompress), with the body as sent. */
function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('precompressed console assets', () => {
  it('the build step writes .br and .gz siblings only where they are smaller', () => {
    expect(brotliDecompressSync(readFileSync(join(dir, 'assets', 'app-abc123.js.br'))).toString()).toBe(JS);
    expect(existsSync(join(dir, 'assets', 'tiny-abc123.css.br'))).toBe(false);
  });

  it('sends brotli to a browser that accepts it, cached for a year, varying by Accept-Encoding', async () => {
    const r = await get('/assets/app-abc123.js', { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(r.body.length).toBeLessThan(JS.length / 10);
    expect(brotliDecompressSync(r.body).toString()).toBe(JS);
  });

  it('sends gzip when brotli is not accepted, and the file as it is when nothing is', async () => {
    const gz = await get('/assets/app-abc123.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(JS);
    expect((await get('/assets/app-abc123.js', { 'accept-encoding': 'br;q=0, gzip;q=0.5' })).headers['content-encoding']).toBe('gzip');
    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'br;q=0, gzip;q=0' }] as Record<string, string>[]) {
      const plain = await get('/assets/app-abc123.js', headers);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('Accept-Encoding');
      expect(plain.body.toString()).toBe(JS);
    }
  });

  it('sends a lazily loaded page chunk like the entry: precompressed, cached for a year', async () => {
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const r = await get('/assets/Policies-def456.js', { 'accept-encoding': encoding });
      expect(r.headers['content-encoding']).toBe(encoding);
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(decode(r.body).toString()).toBe(PAGE);
    }
  });

  it('does not serve the build manifest or other hidden files', async () => {
    expect((await get('/.vite/manifest.json')).status).toBe(404);
    expect((await get('/assets/../.vite/manifest.json')).status).toBe(404);
  });

  it('answers HEAD with the headers of the GET and no body', async () => {
    const r = await get('/assets/app-abc123.js', { 'accept-encoding': 'br' }, 'HEAD');
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.body.length).toBe(0);
  });

  it('never caches index.html, at / or at an app route', async () => {
    for (const path of ['/', '/index.html', '/approvals/abc']) {
      const r = await get(path, { 'accept-encoding': 'br, gzip' });
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.body.toString()).toContain('app-abc123.js');
    }
  });
});

describe('negotiateEncoding', () => {
  it('takes the highest weight, brotli on a tie, * for codings not named', () => {
    expect(negotiateEncoding('gzip;q=1, br;q=0.5', ['br', 'gzip'])).toBe('gzip');
    expect(negotiateEncoding('gzip, br', ['br', 'gzip'])).toBe('br');
    expect(negotiateEncoding('*', ['br', 'gzip'])).toBe('br');
    expect(negotiateEncoding('*;q=0, gzip', ['br', 'gzip'])).toBe('gzip');
    expect(negotiateEncoding('BR', ['gzip'])).toBeNull();
    expect(negotiateEncoding('br;q=abc', ['br'])).toBeNull();
    expect(negotiateEncoding(undefined, ['br'])).toBeNull();
  });
});
