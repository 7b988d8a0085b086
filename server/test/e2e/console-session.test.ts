import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect } from 'node:net';
import { sha256 } from '../support/independent-digest.js';
import { startTestInstance, type TestInstance } from '../support/harness.js';

// The console's session: email + password sign-in, an HTTP-only cookie accepted by HTTP and
// the graphql-ws upgrade, Yoga's CSRF prevention, sign-out, and the console served at /.

let t: TestInstance;
const email = 'reviewer@example.test';
const password = 'correct horse battery';

beforeAll(async () => {
  t = await startTestInstance({ worker: false });
  const r = await t.gql(`mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, {
    i: { email, name: 'Rita Reviewer', password, role: 'MEMBER' },
  });
  expect(r.errors).toBeUndefined();
});
afterAll(() => t?.stop());

const url = () => `${t.instance.url}/graphql`;
async function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}
async function signIn(pw = password) {
  return post({ query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email name } }', variables: { e: email, p: pw } });
}
const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0]!;

describe('console session', () => {
  it('refuses a wrong password without setting a cookie', async () => {
    const res = await signIn('wrong password');
    const body = (await res.json()) as any;
    expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('signs in with an HTTP-only cookie that authenticates queries, and signs out', async () => {
    const res = await signIn();
    const body = (await res.json()) as any;
    expect(body.data.signIn.email).toBe(email);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^taskbay_session=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Lax/);
    const cookie = cookieOf(res);
    const rows = await t.sql('select id from web_session');
    expect(rows).toHaveLength(1);
    // Only the SHA-256 of the secret is stored: a copy of the table signs nobody in.
    expect(rows[0].id).toBe(sha256(cookie.split('=')[1]!));

    const viewer = (await (await post({ query: '{ viewer { email } }' }, { cookie })).json()) as any;
    expect(viewer.data.viewer.email).toBe(email);

    const out = await post({ query: 'mutation { signOut }' }, { cookie });
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    const after = (await (await post({ query: '{ viewer { email } }' }, { cookie })).json()) as any;
    expect(after.data.viewer).toBeNull();
  });

  it('refuses an expired session', async () => {
    const cookie = cookieOf(await signIn());
    await t.sql(`update web_session set expires_at = now() - interval '1 second'`);
    const r = (await (await post({ query: '{ viewer { email } }' }, { cookie })).json()) as any;
    expect(r.data.viewer).toBeNull();
  });

  it('refuses simple (CSRF-able) requests without the CSRF header', async () => {
    const cookie = cookieOf(await signIn());
    const q = encodeURIComponent('{ viewer { email } }');
    const bare = await fetch(`${url()}?query=${q}`, { headers: { cookie, accept: 'application/json' } });
    expect(bare.status).toBe(403);
    const form = await fetch(url(), {
      method: 'POST',
      headers: { cookie, 'content-type': 'text/plain' },
      body: JSON.stringify({ query: 'mutation { signOut }' }),
    });
    expect(form.status).toBe(403);
    const ok = await fetch(`${url()}?query=${q}`, { headers: { cookie, accept: 'application/json', 'x-taskbay-csrf': '1' } });
    expect(((await ok.json()) as any).data.viewer.email).toBe(email);
  });

  it('accepts the cookie on the graphql-ws upgrade from the same origin only', async () => {
    const cookie = cookieOf(await signIn());
    const host = new URL(t.instance.url).host;
    const run = (origin: string) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://${host}/graphql`, 'graphql-transport-ws', { headers: { cookie, origin } });
        ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} })));
        ws.on('message', (raw) => {
          const m = JSON.parse(String(raw));
          if (m.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ viewer { email } }' } }));
          if (m.type === 'next') {
            resolve(m.payload.data.viewer?.email ?? 'anonymous');
            ws.close();
          }
        });
        ws.on('close', (code) => resolve(`closed ${code}`));
      });
    expect(await run(`http://${host}`)).toBe(email);
    expect(await run('http://evil.example')).toMatch(/^closed 4403/);
  });

  it('serves the console at / with a strict CSP and falls back to it for app routes', async () => {
    for (const path of ['/', '/approvals/abc']) {
      const res = await fetch(`${t.instance.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    }
  });

  it('serves no file outside web/dist, whatever the raw path says', async () => {
    // fetch() would tidy "/../" away before sending: send the raw request line over a socket.
    const raw = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(t.instance.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
        let out = '';
        socket.on('data', (d) => (out += d));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
    // web/dist/../../package.json is the repository's package.json: a file with an extension,
    // which the server would send if the path escaped web/dist.
    const escapes = [
      '/../../package.json',
      '/%2e%2e/%2e%2e/package.json',
      '/assets/../../../package.json',
      '/..%2f..%2fpackage.json',
      '/%2e%2e%2f%2e%2e%2fpackage.json',
    ];
    for (const path of escapes) {
      const answer = await raw(path);
      expect(answer, path).toMatch(/^HTTP\/1\.1 \d{3}/);
      expect(answer, path).not.toContain('"name": "taskbay"');
    }
  });
});
