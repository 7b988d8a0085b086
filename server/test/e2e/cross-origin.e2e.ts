import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS, startTestInstance, type TestInstance } from '../support/harness.js';
import { launchChromium } from '../support/chromium.js';

// Another site on the same host (SECURITY.md, "other site"): a reviewer is signed in to the
// console at 127.0.0.1:<taskbay port>; a page served from 127.0.0.1:<another port> is the same
// site, so the browser sends the reviewer's SameSite=Lax cookie with its requests. Without CORS
// granted to that origin it must read nothing and change nothing: no approvals listed, no API
// token minted, no WebSocket session. In Debian's Chromium, with the real cookie.

const EMAIL = 'rita@example.test';
const PASSWORD = 'correct horse battery staple';

/** What the attacker's page tries, each attempt reported as text (never thrown). */
const ATTACK = `
async function attempt(name, fn) {
  try { return name + ': ' + (await fn()); } catch (e) { return name + ': blocked (' + e.name + ')'; }
}
window.attack = async (target) => {
  const gql = target + '/graphql';
  const list = JSON.stringify({ query: '{ approvals(first: 5) { edges { node { id title } } } viewer { email } }' });
  const mint = JSON.stringify({ query: 'mutation { createApiToken(input: { label: "stolen" }) { token } }' });
  const results = [];
  // 1. A credentialed JSON request (needs a CORS preflight and a CORS answer to be read).
  results.push(await attempt('json-read', async () => {
    const r = await fetch(gql, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json', 'x-taskbay-csrf': '1' }, body: list });
    return 'read ' + (await r.text());
  }));
  // 2. The same for minting a token.
  results.push(await attempt('json-mint', async () => {
    const r = await fetch(gql, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json', 'x-taskbay-csrf': '1' }, body: mint });
    return 'read ' + (await r.text());
  }));
  // 3. A "simple" request (no preflight): the browser sends it, the response is opaque.
  results.push(await attempt('simple-mint', async () => {
    const r = await fetch(gql, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: mint });
    return 'sent (opaque ' + r.type + ')';
  }));
  // 4. A GET with the query in the URL (simple, credentialed).
  results.push(await attempt('simple-get', async () => {
    const r = await fetch(gql + '?query=' + encodeURIComponent('{ viewer { email } }'), { mode: 'no-cors', credentials: 'include' });
    return 'sent (opaque ' + r.type + ')';
  }));
  // 5. A WebSocket with the cookie (browsers send cookies on cross-site upgrades).
  results.push(await attempt('websocket', () => new Promise((resolve) => {
    const ws = new WebSocket(target.replace('http', 'ws') + '/graphql', 'graphql-transport-ws');
    ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    ws.onmessage = (m) => {
      const msg = JSON.parse(m.data);
      if (msg.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ viewer { email } }' } }));
      else if (msg.type === 'next') { resolve('read ' + JSON.stringify(msg.payload)); ws.close(); }
    };
    ws.onclose = (e) => resolve('closed ' + e.code);
    ws.onerror = () => resolve('error');
  })));
  return results;
};
`;

let t: TestInstance;
let browser: Browser;
let attacker: Server;
let attackerUrl: string;

beforeAll(async () => {
  t = await startTestInstance({ worker: false });
  const u = await t.gql(OPS.createUser, { email: EMAIL, name: 'Rita Reviewer', role: 'ADMIN', password: PASSWORD });
  expect(u.errors).toBeUndefined();
  // One pending request the attacker would like to read.
  const a = await t.gql(`mutation { createApproval(input: { title: "Rotate the production keys", action: { kind: "send_message", text: "rotate" } }) { id } }`);
  expect(a.errors).toBeUndefined();
  attacker = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>elsewhere</title><script>${ATTACK}</script></head><body>another site</body></html>`);
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => attacker?.close(r));
  await t?.stop();
});

describe('another site on the same host', () => {
  it("gets nothing and changes nothing with the signed-in reviewer's cookie", async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    // The reviewer signs in on the console's own origin: the session cookie is set for the host.
    await page.goto(t.instance.url + '/');
    const signedIn = await page.evaluate(
      async ([email, password]) => {
        const r = await fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-taskbay-csrf': '1' },
          body: JSON.stringify({
            query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email } }',
            variables: { e: email, p: password },
          }),
        });
        const own = await fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-taskbay-csrf': '1' },
          body: JSON.stringify({ query: '{ approvals(first: 5) { edges { node { title } } } }' }),
        });
        return { signIn: await r.json(), own: await own.json() };
      },
      [EMAIL, PASSWORD],
    );
    expect(signedIn.signIn.data.signIn.email).toBe(EMAIL);
    // The console itself (same origin) reads the request: the cookie works.
    expect(JSON.stringify(signedIn.own)).toContain('Rotate the production keys');
    const cookies = await ctx.cookies(t.instance.url);
    expect(cookies.map((c) => c.name)).toContain('taskbay_session');

    const tokensBefore = await t.sql('select count(*)::int as n from api_token');
    const sessionsBefore = await t.sql('select count(*)::int as n from web_session');

    // The same browser (same cookie jar) visits the other site on another port of the host.
    await page.goto(attackerUrl + '/');
    expect(new URL(page.url()).port).not.toBe(new URL(t.instance.url).port);
    const results: string[] = await page.evaluate((target) => (window as any).attack(target), t.instance.url);

    const byName = Object.fromEntries(results.map((r) => [r.slice(0, r.indexOf(':')), r.slice(r.indexOf(':') + 2)]));
    // Nothing readable: the credentialed requests fail in the browser (no CORS answer).
    expect(byName['json-read']).toMatch(/^blocked/);
    expect(byName['json-mint']).toMatch(/^blocked/);
    expect(results.join('\n')).not.toContain('Rotate the production keys');
    expect(results.join('\n')).not.toContain(EMAIL);
    expect(results.join('\n')).not.toContain('tb_');
    // The WebSocket from the other origin is refused before any operation.
    expect(byName['websocket']).not.toMatch(/^read/);

    // Nothing changed: no token was minted by any of the attempts, including the opaque ones
    // the browser did send.
    expect(await t.sql('select count(*)::int as n from api_token')).toEqual(tokensBefore);
    expect(await t.sql(`select count(*)::int as n from api_token where label = 'stolen'`)).toEqual([{ n: 0 }]);
    expect(await t.sql('select count(*)::int as n from web_session')).toEqual(sessionsBefore);
    await ctx.close();
  });
});
