import { randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually, OPS, type TestInstance, ok, rawId, startReplicas } from '../../support/harness.js';

// Issue 22, the person lifecycle on live connections: a subscription keeps the viewer it started
// with, so a revoked or expired token, or a person disabled or given another role, kept
// receiving new approvals on an open socket or SSE stream (every new request was refused, the
// open console was not). Now each live connection is checked again when its person changes, on
// every instance (taskbay_auth), and at its credential's expiry (graphql/credential-watch.ts).
// Two instances on one database: the change is made on one, the connection is open on the other.

let a: TestInstance;
let b: TestInstance;
const clients: Client[] = [];

beforeAll(async () => {
  [a, b] = await startReplicas(
    { worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } },
    { worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } },
  );
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await b?.stop();
  await a?.stop();
});

async function person(role: 'ADMIN' | 'MEMBER' = 'ADMIN') {
  const email = `p-${randomBytes(4).toString('hex')}@example.test`;
  const id = ok(await a.gql(OPS.createUser, { email, name: email, role, password: 'correct horse battery' })).createUser.id as string;
  const created = ok(
    await a.gql(`mutation($u: ID) { createApiToken(input: { userId: $u, label: "live" }) { token apiToken { id } } }`, { u: id }),
  ).createApiToken;
  return { id, token: created.token as string, tokenId: created.apiToken.id as string };
}

/** A socket on instance b subscribed to new requests, acknowledged: its close code once it closes. */
async function liveSocket(token: string) {
  let closed!: (code: number) => void;
  const closedWith = new Promise<number>((r) => (closed = r));
  let connected!: () => void;
  const acknowledged = new Promise<void>((r) => (connected = r));
  const client = createClient({
    url: `ws://127.0.0.1:${b.instance.port}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: false,
    // The close is what the test reads; graphql-ws would also print it.
    onNonLazyError: () => {},
    on: { connected: () => connected(), closed: (e) => closed((e as { code: number }).code) },
  });
  clients.push(client);
  const received: string[] = [];
  client.subscribe(
    { query: 'subscription { approvalRequested { title } }' },
    { next: (v: any) => received.push(v.data?.approvalRequested?.title), error: () => {}, complete: () => {} },
  );
  await acknowledged;
  return { closedWith, received };
}

/** An SSE subscription on instance b's real port: resolves with the titles it received once the stream ends. */
async function liveStream(token: string) {
  const res = await fetch(`http://127.0.0.1:${b.instance.port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: 'subscription { approvalRequested { title } }' }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let first!: () => void;
  const live = new Promise<void>((r) => (first = r));
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += decoder.decode(value);
      if (text.includes('"title"')) first();
    }
  })();
  return { live, ended };
}

const open = (title: string) =>
  a.gql(`mutation($t: String!) { createApproval(input: { title: $t, action: { kind: "send_message", text: "x" } }) { id } }`, { t: title });

describe('a live connection ends when its credential stops holding', () => {
  it('a socket of a person disabled on the other instance is closed (4401), and receives nothing more', async () => {
    const p = await person();
    const socket = await liveSocket(p.token);
    ok(await a.gql('mutation($id: ID!) { disableUser(userId: $id) { id } }', { id: p.id }));
    expect(await socket.closedWith).toBe(4401);
    ok(await open('after the disable'));
    expect(socket.received).not.toContain('after the disable');
  });

  it('a socket whose token is revoked is closed (4401); another of the same person, on another token, stays', async () => {
    const p = await person();
    const second = ok(await a.gql(`mutation($u: ID) { createApiToken(input: { userId: $u, label: "other" }) { token } }`, { u: p.id })).createApiToken.token;
    const revoked = await liveSocket(p.token);
    const kept = await liveSocket(second);
    ok(await a.gql('mutation($id: ID!) { revokeApiToken(tokenId: $id) { id } }', { id: p.tokenId }));
    expect(await revoked.closedWith).toBe(4401);
    // The kept socket still receives: the revocation ended only what it revoked.
    ok(await open('after the revocation'));
    await eventually(async () => kept.received.includes('after the revocation'));
  });

  it('a socket of a person given another role is closed with 1012, so it connects again as who they are now', async () => {
    const p = await person('ADMIN');
    await person('ADMIN'); // not the last admin of the tenant
    const socket = await liveSocket(p.token);
    ok(await a.gql('mutation($id: ID!) { setUserRole(input: { userId: $id, role: MEMBER }) { id } }', { id: p.id }));
    expect(await socket.closedWith).toBe(1012);
  });

  it("a socket is closed at its token's expiry, which nothing notifies of", async () => {
    const p = await person();
    // Set behind the API so the expiry is seconds away (the API's shortest is 60 s); the trigger's notification comes before the socket opens.
    await a.sql(`update api_token set expires_at = now() + interval '3 seconds' where user_id = $1`, [rawId(p.id)]);
    const socket = await liveSocket(p.token);
    expect(await socket.closedWith).toBe(4401);
  });

  it('an SSE subscription of a person disabled on the other instance ends', async () => {
    const p = await person();
    const stream = await liveStream(p.token);
    ok(await open('before the disable'));
    await stream.live;
    ok(await a.gql('mutation($id: ID!) { disableUser(userId: $id) { id } }', { id: p.id }));
    const text = await stream.ended;
    expect(text).toContain('before the disable');
    ok(await open('after the disable, over SSE'));
    expect(text).not.toContain('after the disable, over SSE');
  });
});
