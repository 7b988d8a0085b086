import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { negotiateEncoding } from './encoding.js';

// Serves the built reviewer console (web/dist) at / with a single-page-app fallback. Every
// response carries a strict Content-Security-Policy: scripts and connections only to this
// origin, no framing, no plugins, images only from here or data: URLs. Agent content is
// rendered as text by the console; the policy is the second wall.

/** The header the console sends with every GraphQL request (Yoga's CSRF prevention). */
export const CSRF_HEADER = 'x-taskbay-csrf';

/** Set by the packaged CLI's build (packages/agent-taskbay/build.mjs): its console beside the bundle. */
declare const TASKBAY_CONSOLE_DIR: string | undefined;

/** The built console: web/dist in the repository, `console/` beside `dist/` in the packaged CLI. */
export const WEB_DIST = resolve(dirname(fileURLToPath(import.meta.url)), typeof TASKBAY_CONSOLE_DIR === 'string' ? TASKBAY_CONSOLE_DIR : '../../../web/dist');

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** True when an Origin header names the same host as the Host header (or there is no Origin). */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (!origin) return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

async function fileOrNull(path: string): Promise<Buffer | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? await readFile(path) : null;
  } catch {
    return null;
  }
}

/**
 * Answers GET/HEAD for the console; false when the request is not for it (other methods, or
 * a path with a dot that is not a file, which falls through to the API's 404).
 */
export async function serveConsole(req: IncomingMessage, res: ServerResponse, placeholder: string, dist = WEB_DIST): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  let path: string;
  try {
    path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
  } catch {
    return false;
  }
  const file = resolve(dist, '.' + path);
  if (file !== dist && !file.startsWith(dist + sep)) return false;
  const send = (status: number, type: string, body: Buffer | string, cache: string, extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': cache, 'content-length': String(Buffer.byteLength(body)), ...extra, ...SECURITY_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  if (path !== '/' && extname(path)) {
    // Hidden files are the build's own records (.vite/manifest.json, read by the bench), not the site.
    if (path.split('/').some((segment) => segment.startsWith('.'))) return false;
    const body = await fileOrNull(file);
    if (!body) return false;
    const type = TYPES[extname(path)] ?? 'application/octet-stream';
    if (!path.startsWith('/assets/')) {
      send(200, type, body, 'no-cache');
      return true;
    }
    // Hashed assets: cached for a year, sent as the build's .br or .gz sibling when the
    // client accepts it (web/precompress.ts), so caches keep one copy per coding.
    const suffix = { br: '.br', gzip: '.gz' } as const;
    const available = (['br', 'gzip'] as const).filter((c) => existsSync(file + suffix[c]));
    const coding = negotiateEncoding(req.headers['accept-encoding'], available);
    const encoded = coding ? await fileOrNull(file + suffix[coding]) : null;
    const extra: Record<string, string> = { vary: 'Accept-Encoding' };
    if (coding && encoded) extra['content-encoding'] = coding;
    send(200, type, encoded ?? body, 'public, max-age=31536000, immutable', extra);
    return true;
  }
  const index = await fileOrNull(join(dist, 'index.html'));
  send(200, 'text/html; charset=utf-8', index ?? placeholder, 'no-cache');
  return true;
}
