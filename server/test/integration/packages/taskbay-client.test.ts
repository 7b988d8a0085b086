import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTaskbayClient, isTaskbayError, type TaskbayClient, TaskbayError } from '../../../../packages/taskbay-client/src/index.js';
import { createMember, eventually, probeRequests, startTestInstance, type TestInstance, untilProbeArrives } from '../../support/harness.js';

// @taskbay/client (packages/taskbay-client) against a real server on real HTTP and WebSocket
// ports: API token auth, a query, a mutation, a subscription, the pagination helper over several
// pages and the contract's error codes as TaskbayError. The packed package is tested in
// packages/taskbay-client-pack.test.ts.

let t: TestInstance;
let requester: { id: string; token: string };
const clients: TaskbayClient[] = [];
const probes = probeRequests(() => t);

/** A client of the test server (the admin's token unless told), with ws on Node 20. */
function client(token: string | undefined = t.adminToken, extra: { fetch?: typeof fetch } = {}): TaskbayClient {
  const c = createTaskbayClient({ url: t.instance.url, token, webSocketImpl: WebSocket, ...extra });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  t = await startTestInstance();
  requester = await createMember(t);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.stop();
});

/** A person's request (no agent: only admins decide it), opened by the requester through the client. */
async function openRequest(title: string) {
  return client(requester.token).createApproval({ input: { title, action: { kind: 'send_message', text: title } } });
}

describe('@taskbay/client against a real server', () => {
  it('authenticates with an API token: viewer is the token holder', async () => {
    const me = await client(requester.token).viewer();
    expect(me).toMatchObject({ id: requester.id, role: 'MEMBER' });
    expect((await client().viewer())?.role).toBe('ADMIN');
  });

  it('a query and a mutation: reads a pending request and approves it from a script', async () => {
    const opened = await openRequest('Deploy v2 to production');
    expect(opened).toMatchObject({ status: 'PENDING', revision: 1, source: 'USER', requester: { id: requester.id } });
    const admin = client();
    const read = await admin.approval({ id: opened.id });
    expect(read).toMatchObject({ id: opened.id, title: 'Deploy v2 to production', digest: opened.digest, decisions: [] });
    const decision = await admin.approve({ input: { approvalId: opened.id, revision: read!.revision, digest: read!.digest, comment: 'go' } });
    expect(decision).toMatchObject({ outcome: 'APPROVE', revision: 1, comment: 'go', approval: { id: opened.id, status: 'APPROVED' } });
    expect((await admin.approval({ id: opened.id }))?.status).toBe('APPROVED');
  });

  it('the pagination helper follows endCursor over several pages, one request a page', async () => {
    const titles = ['page 1', 'page 2', 'page 3', 'page 4', 'page 5'].map((p) => `${p} ${Date.now()}`);
    for (const title of titles) await openRequest(title);
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const mine = client(requester.token, { fetch: counting });
    const seen: string[] = [];
    for await (const a of mine.all.approvals({ status: ['PENDING'] }, { pageSize: 2 })) seen.push(a.title);
    expect(seen).toEqual(expect.arrayContaining(titles));
    expect(new Set(seen).size).toBe(seen.length);
    // ceil(n / 2) pages; the last one says hasNextPage false.
    expect(requests).toBe(Math.ceil(seen.length / 2));
    expect(seen.length).toBeGreaterThan(4);
  });

  it('a subscription streams the inbox: approvalRequested over graphql-ws with the token', async () => {
    const admin = client();
    const inbox = admin.approvalRequested();
    const seen: { id: string; title: string; status: string }[] = [];
    const reading = (async () => {
      for await (const a of inbox) seen.push(a);
    })();
    await untilProbeArrives(async () => {
      const id = await probes.open();
      return () => seen.some((a) => a.id === id);
    });
    const opened = await openRequest('Rotate the database password');
    await eventually(async () => seen.find((a) => a.id === opened.id));
    expect(seen.find((a) => a.id === opened.id)).toMatchObject({ title: 'Rotate the database password', status: 'PENDING' });
    await inbox.return!();
    await reading;
  });

  it('waitForDecision resolves on the approvalChanged event that decides the request (rechecks off)', async () => {
    const opened = await openRequest('Wait for me');
    const changes: string[] = [];
    const waiting = client(requester.token).waitForDecision(opened.id, { recheckEveryMs: 0, onChange: (a) => changes.push(a.status) });
    // The subscription is live once a change of this request reaches it (a probe event in its stream).
    const { appendProbeEvent } = await import('../../support/harness.js');
    await untilProbeArrives(async () => {
      const before = changes.length;
      await appendProbeEvent(t, opened.id);
      return () => changes.length > before;
    });
    await client().reject({ input: { approvalId: opened.id, revision: opened.revision, digest: opened.digest, comment: 'not today' } });
    const decided = await waiting;
    expect(decided).toMatchObject({ id: opened.id, status: 'REJECTED' });
    expect(changes.at(-1)).toBe('REJECTED');
  });

  it('contract errors are TaskbayErrors with typed codes: STALE_REVISION (with the current revision), NOT_FOUND, SEPARATION_OF_DUTIES', async () => {
    const opened = await openRequest('Stale');
    const admin = client();
    const stale = await admin.approve({ input: { approvalId: opened.id, revision: opened.revision, digest: 'sha256:0000' } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(stale).toBeInstanceOf(TaskbayError);
    expect(isTaskbayError(stale, 'STALE_REVISION')).toBe(true);
    if (!isTaskbayError(stale, 'STALE_REVISION')) throw stale;
    // Typed per code: the narrowed extensions name currentRevision as a number (tsc checks the assignment).
    const current: { revision: number; digest: string } = { revision: stale.extensions.currentRevision, digest: stale.extensions.currentDigest };
    expect(current).toEqual({ revision: 1, digest: opened.digest });
    expect((stale as TaskbayError).status).toBeGreaterThanOrEqual(200);

    const missing = await admin
      .approve({ input: { approvalId: 'QXBwcm92YWw6MDAwMDAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAw', revision: 1, digest: 'x' } })
      .catch((e) => e);
    expect(missing).toMatchObject({ name: 'TaskbayError', code: 'NOT_FOUND' });

    const own = await client(requester.token)
      .approve({ input: { approvalId: opened.id, revision: opened.revision, digest: opened.digest } })
      .catch((e) => e);
    expect(own).toMatchObject({ code: 'SEPARATION_OF_DUTIES' });
    // Nothing changed.
    expect((await admin.approval({ id: opened.id }))?.status).toBe('PENDING');
  });

  it('a token that names no active token is UNAUTHENTICATED, over HTTP and over WebSocket', async () => {
    const bad = client('tb_not_a_token');
    const http = await bad.approvals().catch((e) => e);
    expect(http).toBeInstanceOf(TaskbayError);
    expect(http).toMatchObject({ code: 'UNAUTHENTICATED' });

    const stream = bad.approvalRequested();
    const ws = await stream.next().catch((e) => e);
    expect(ws).toBeInstanceOf(TaskbayError);
    expect(ws).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('an unreachable server is NETWORK_ERROR', async () => {
    const gone = createTaskbayClient({ url: 'http://127.0.0.1:9/', token: t.adminToken });
    await expect(gone.viewer()).rejects.toMatchObject({ name: 'TaskbayError', code: 'NETWORK_ERROR' });
  });
});
