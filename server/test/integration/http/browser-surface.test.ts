import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CSRF_HEADER } from '../../../src/http/console.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';

// What a browser may do with /graphql from another origin (CORS), and GraphiQL: off by
// default; when on, local assets only under a strict Content-Security-Policy. Real HTTP.

const ALLOWED = ['http://console.example:8080', 'https://admin.example'];
let plain: TestInstance; // defaults: no CORS, no GraphiQL
let open: TestInstance; // TASKBAY_CORS_ORIGINS and TASKBAY_GRAPHIQL=1

beforeAll(async () => {
  [plain, open] = await Promise.all([
    startTestInstance({ worker: false }),
    startTestInstance({ worker: false, env: { TASKBAY_CORS_ORIGINS: ALLOWED.join(','), TASKBAY_GRAPHIQL: '1' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), open?.stop()]);
});

function postFrom(on: TestInstance, origin: string | null) {
  return fetch(`${on.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${on.adminToken}`, ...(origin ? { origin } : {}) },
    body: JSON.stringify({ query: '{ viewer { email } }' }),
  });
}

function preflightFrom(on: TestInstance, origin: string) {
  return fetch(`${on.instance.url}/graphql`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': `content-type,${CSRF_HEADER}` },
  });
}

function noCors(res: Response) {
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
}

describe('CORS', () => {
  test('by default no origin gets CORS headers, whatever it sends', async () => {
    for (const origin of ['http://evil.example', 'http://127.0.0.1:1', 'null']) {
      const res = await postFrom(plain, origin);
      // The request itself is answered (CORS is the browser's read permission), without CORS headers.
      expect(res.status).toBe(200);
      noCors(res);
      const pre = await preflightFrom(plain, origin);
      noCors(pre);
    }
  });

  test('configured origins get CORS with credentials, exactly their own origin', async () => {
    for (const origin of ALLOWED) {
      const res = await postFrom(open, origin);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
      expect(res.headers.get('vary')).toMatch(/Origin/i);
      const pre = await preflightFrom(open, origin);
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
      expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET, POST');
      expect(pre.headers.get('access-control-allow-headers')?.split(', ')).toEqual(expect.arrayContaining(['content-type', 'authorization', CSRF_HEADER]));
    }
  });

  test('any other origin, "null" and no Origin get none (never reflected, never "null")', async () => {
    for (const origin of ['https://evil.example', 'http://console.example:8081', 'https://admin.example.evil.example', 'null']) {
      noCors(await postFrom(open, origin));
      noCors(await preflightFrom(open, origin));
    }
    noCors(await postFrom(open, null));
  });

  test('the CSRF header check stays: a simple GET without it is refused', async () => {
    const url = `${open.instance.url}/graphql?query=${encodeURIComponent('{ viewer { email } }')}`;
    const headers = { accept: 'application/json', authorization: `Bearer ${open.adminToken}`, origin: ALLOWED[0]! };
    const without = await fetch(url, { headers });
    expect(without.status).toBe(403);
    const withHeader = await fetch(url, { headers: { ...headers, [CSRF_HEADER]: '1' } });
    expect(await withHeader.json()).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });
});

describe('GraphiQL', () => {
  const asBrowser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

  test('off by default: a browser GET /graphql gets no GraphiQL', async () => {
    const res = await fetch(`${plain.instance.url}/graphql`, { headers: asBrowser });
    const body = await res.text();
    expect(res.headers.get('content-type')).not.toMatch(/text\/html/);
    expect(body).not.toContain('GraphiQL');
  });

  test('on: the page is local (no external script, style or CDN) and its CSP allows exactly its inline script', async () => {
    const res = await fetch(`${open.instance.url}/graphql`, { headers: asBrowser });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+rel="stylesheet"/i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);

    const csp = Object.fromEntries(
      res.headers
        .get('content-security-policy')!
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    const inlineScripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
    expect(inlineScripts).toHaveLength(1);
    expect(csp['script-src']).toEqual(inlineScripts);
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['connect-src']).toEqual(["'self'"]);
    expect(csp['worker-src']).toEqual(['blob:']);
    expect(csp['frame-ancestors']).toEqual(["'none'"]);
    expect(csp['base-uri']).toEqual(["'none'"]);
    expect(csp['object-src']).toBeUndefined(); // default-src 'none' covers it
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('on: API answers are not affected', async () => {
    const res = await postFrom(open, null);
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(await res.json()).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });
});

describe('paths that belong to machines', () => {
  // Issue 23 item 5: an integrator's typo under /api, /mcp or /.well-known got the console's HTML with 200.
  test.each([
    ['GET', '/api/command-aprovals'],
    ['POST', '/api/nothing-here'],
    ['GET', '/api'],
    ['GET', '/mcp/nothing-here'],
    ['POST', '/mcp/sessions'],
    ['GET', '/.well-known/jwks'],
    ['GET', '/.well-known/agent-card.json'],
  ])('%s %s is a 404 in JSON, not the console', async (method, path) => {
    const res = await fetch(`${plain.instance.url}${path}`, { method, headers: { accept: 'text/html,*/*' }, body: method === 'POST' ? '{}' : undefined });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ error: 'NOT_FOUND', message: expect.stringContaining(path) });
  });

  test('a real route under them still answers, and the console still serves its own paths', async () => {
    const jwks = await fetch(`${plain.instance.url}/.well-known/jwks.json`);
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    const page = await fetch(`${plain.instance.url}/approvals/some-id`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // A console path that merely starts with the same letters is the console's.
    const near = await fetch(`${plain.instance.url}/mcpx`, { headers: { accept: 'text/html' } });
    expect(near.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
