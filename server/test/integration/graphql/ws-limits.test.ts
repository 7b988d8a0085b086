import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMember, eventually, startTestInstance, untilProbeArrives, type TestInstance } from '../../support/harness.js';

// GraphQL over WebSocket (graphql-ws on the real port): how a connection authenticates, the
// same query limits as HTTP, and what only a socket needs: a cap on operations running at once,
// a rate of operations started, and the size of one message.

let t: TestInstance; // defaults
let capped: TestInstance; // 3 operations at once, 32 KiB messages, input depth 10
let throttled: TestInstance; // 2 operations a second
let guarded: TestInstance; // per address: 3 unauthenticated sockets, 5 sockets and streams; 400 ms to authenticate

beforeAll(async () => {
  [t, capped, throttled, guarded] = await Promise.all([
    startTestInstance({ worker: false }),
    startTestInstance({
      worker: false,
      env: {
        TASKBAY_WS_MAX_SUBSCRIPTIONS: '3',
        TASKBAY_WS_OPERATIONS_PER_SECOND: '1000',
        TASKBAY_GRAPHQL_MAX_BODY_BYTES: String(32 * 1024),
        TASKBAY_GRAPHQL_MAX_INPUT_DEPTH: '10',
      },
    }),
    startTestInstance({ worker: false, env: { TASKBAY_WS_OPERATIONS_PER_SECOND: '2' } }),
    startTestInstance({
      worker: false,
      env: { TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: '3', TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS: '5', TASKBAY_WS_AUTH_GRACE_MS: '400' },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), capped?.stop(), throttled?.stop(), guarded?.stop()]);
});

const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.dispose();
});

function client(on: TestInstance, opts: { params?: Record<string, unknown>; headers?: Record<string, string> } = {}): Client {
  const headers = opts.headers ?? {};
  // ws takes request headers as a constructor option; graphql-ws passes (url, protocol).
  class HeaderSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  const c = createClient({
    url: `ws://127.0.0.1:${on.instance.port}/graphql`,
    webSocketImpl: HeaderSocket,
    connectionParams: opts.params ?? {},
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => {},
  });
  clients.push(c);
  return c;
}

type Outcome = { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[]; closed?: number };

/** Runs one operation to its end: the result, the error payload, or the close code. */
function run(c: Client, query: string, variables?: Record<string, unknown>): Promise<Outcome> {
  return new Promise((resolve) => {
    let last: Outcome = {};
    c.subscribe(
      { query, variables },
      {
        next: (v) => {
          last = v as Outcome;
        },
        error: (e) => {
          if (Array.isArray(e)) resolve({ errors: e });
          else resolve({ closed: (e as { code?: number }).code });
        },
        complete: () => resolve(last),
      },
    );
  });
}

const VIEWER = '{ viewer { email } }';

describe('authentication', () => {
  test.each([
    ['connectionParams.authorization', () => ({ params: { authorization: `Bearer ${t.adminToken}` } })],
    ['connectionParams.Authorization', () => ({ params: { Authorization: `Bearer ${t.adminToken}` } })],
    ['the upgrade request Authorization header', () => ({ headers: { authorization: `Bearer ${t.adminToken}` } })],
  ])('the API token from %s', async (_name, opts) => {
    expect(await run(client(t, opts()), VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });

  test('no token and no cookie: refused at connect (4403)', async () => {
    expect(await run(client(t), VIEWER)).toEqual({ closed: 4403 });
  });

  test.each([
    ['a malformed connectionParams.authorization', () => ({ params: { authorization: `Token ${t.adminToken}` } })],
    ['a malformed connectionParams.Authorization', () => ({ params: { Authorization: 'Bearer' } })],
    ['an unknown token in connectionParams.Authorization', () => ({ params: { Authorization: 'Bearer tb_nope' } })],
    ['an unknown token in the upgrade header', () => ({ headers: { authorization: 'Bearer tb_nope' } })],
  ])('%s is refused at connect (4403)', async (_name, opts) => {
    expect(await run(client(t, opts()), VIEWER)).toEqual({ closed: 4403 });
  });
});

describe('the HTTP limits hold on WebSocket, and the socket stays usable', () => {
  test('tokens', async () => {
    const c = client(t, { params: { authorization: `Bearer ${t.adminToken}` } });
    const r = await run(c, `{ viewer { ${'email '.repeat(10_000)}} }`);
    expect(r.errors?.[0]).toEqual({
      message: 'the query has more than 500 tokens; the limit is 500',
      extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_MANY_TOKENS' },
    });
    expect(await run(c, VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });

  test('aliases', async () => {
    const c = client(t, { params: { authorization: `Bearer ${t.adminToken}` } });
    const r = await run(c, `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`);
    expect(r.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'TOO_MANY_ALIASES' });
  });

  test('variables nesting, and characters Postgres cannot store', async () => {
    const c = client(capped, { params: { authorization: `Bearer ${capped.adminToken}` } });
    let deep: unknown = 1;
    for (let i = 0; i < 11; i++) deep = [deep];
    const q = 'mutation($data: JSON) { startTask(input: { agentId: "x", data: $data }) { id } }';
    expect((await run(c, q, { data: deep })).errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'INPUT_TOO_DEEP' });
    expect((await run(c, q, { data: { text: 'a\u0000b' } })).errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT' },
      message: expect.stringContaining('NUL'),
    });
    expect(await run(c, VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });
});

describe('per socket', () => {
  test('at most TASKBAY_WS_MAX_SUBSCRIPTIONS operations run at once on one socket', async () => {
    const c = client(capped, { params: { authorization: `Bearer ${capped.adminToken}` } });
    // Three live subscriptions (graphql-ws registers each as its message arrives, in order).
    const disposers = [0, 1, 2].map(() =>
      c.subscribe({ query: 'subscription { approvalRequested { id } }' }, { next: () => {}, error: () => {}, complete: () => {} }),
    );
    const fourth = await run(c, 'subscription { approvalSuperseded { approvalId } }');
    expect(fourth.errors?.[0]).toEqual({
      message: 'this connection already runs 3 operations; the limit is 3',
      extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_MANY_OPERATIONS' },
    });
    // A query counts too while the three run.
    expect((await run(c, VIEWER)).errors?.[0]?.extensions?.reason).toBe('TOO_MANY_OPERATIONS');
    // Another socket has its own room.
    const other = client(capped, { params: { authorization: `Bearer ${capped.adminToken}` } });
    expect(await run(other, VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
    // Completing one makes room on the first socket.
    disposers[0]!();
    expect(await run(c, VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });

  test('operations started per second are limited per socket', async () => {
    const c = client(throttled, { params: { authorization: `Bearer ${throttled.adminToken}` } });
    // Connected first, so the burst below is one burst.
    expect(await run(c, VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
    const burst = await Promise.all([1, 2, 3, 4, 5].map(() => run(c, VIEWER)));
    const limited = burst.filter((r) => r.errors?.[0]?.extensions?.reason === 'RATE_LIMITED');
    expect(limited.length).toBeGreaterThanOrEqual(3);
    expect(limited[0]!.errors![0]).toEqual({
      message: 'more than 2 operations a second on this connection; the limit is 2',
      extensions: { code: 'BAD_USER_INPUT', reason: 'RATE_LIMITED' },
    });
    // Another socket is not slowed by this one.
    const other = client(throttled, { params: { authorization: `Bearer ${throttled.adminToken}` } });
    expect(await run(other, VIEWER)).toEqual({ data: { viewer: { email: 'admin@localhost' } } });
  });
});

describe('message size', () => {
  /** A raw graphql-transport-ws socket, acknowledged. */
  async function rawSocket(on: TestInstance): Promise<WebSocket> {
    const ws = new WebSocket(`ws://127.0.0.1:${on.instance.port}/graphql`, 'graphql-transport-ws');
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${on.adminToken}` } }));
    await new Promise<void>((resolve) => ws.once('message', () => resolve()));
    return ws;
  }

  const subscribe = (pad: number) => JSON.stringify({ id: '1', type: 'subscribe', payload: { query: VIEWER, variables: { pad: 'x'.repeat(pad) } } });

  test('a message under the limit is answered', async () => {
    const ws = await rawSocket(capped);
    const answer = new Promise<string>((resolve) => ws.once('message', (m) => resolve(String(m))));
    ws.send(subscribe(20 * 1024));
    expect(JSON.parse(await answer)).toEqual({ id: '1', type: 'next', payload: { data: { viewer: { email: 'admin@localhost' } } } });
    ws.close();
  });

  test('a message over TASKBAY_GRAPHQL_MAX_BODY_BYTES closes the socket (1009)', async () => {
    const ws = await rawSocket(capped);
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(subscribe(40 * 1024));
    expect(await closed).toBe(1009);
    // The server goes on.
    expect(await run(client(capped, { params: { authorization: `Bearer ${capped.adminToken}` } }), VIEWER)).toEqual({
      data: { viewer: { email: 'admin@localhost' } },
    });
  });
});

// Issue 22, finding 9: anonymous WebSockets were acknowledged and held without limit (19,500
// from one address). A socket must now authenticate, and one address holds few that have not.
describe('sockets that have not authenticated', () => {
  const opened: WebSocket[] = [];
  afterAll(() => {
    for (const ws of opened) ws.terminate();
  });

  /** A raw graphql-transport-ws socket, open (the upgrade answered 101), nothing sent. */
  function open(on: TestInstance): Promise<WebSocket> {
    const ws = new WebSocket(`ws://127.0.0.1:${on.instance.port}/graphql`, 'graphql-transport-ws');
    opened.push(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => reject(Object.assign(new Error(body), { status: res.statusCode })));
      });
      ws.once('error', reject);
    });
  }
  /** How the socket ended: closed (code, reason, what it received first), or acknowledged (held open). */
  function untilClosed(ws: WebSocket): Promise<{ messages: string[]; code: number; reason: string } | { acknowledged: true }> {
    const messages: string[] = [];
    return new Promise((resolve) => {
      ws.on('message', (m) => {
        messages.push(String(m));
        if (JSON.parse(String(m)).type === 'connection_ack') resolve({ acknowledged: true });
      });
      ws.once('close', (code, reason) => resolve({ messages, code, reason: String(reason) }));
    });
  }
  // The server counts a socket out when it sees it close, which may come just after the client
  // sees it: a test's own sockets wait for the room earlier tests' sockets leave.
  const openWhenRoom = (on: TestInstance) => eventually(() => open(on).catch(() => null), 5000, 50);
  const init = (ws: WebSocket, payload: Record<string, unknown>) => ws.send(JSON.stringify({ type: 'connection_init', payload }));
  const acknowledged = (ws: WebSocket) =>
    new Promise<void>((resolve, reject) => {
      ws.once('message', (m) => (JSON.parse(String(m)).type === 'connection_ack' ? resolve() : reject(new Error(String(m)))));
      ws.once('close', (code) => reject(new Error(`closed ${code}`)));
    });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: Error & { status?: number }) => ({ status: e.status, body: e.message }),
    );

  test('a connection_init without any credential is never acknowledged: closed at once (4403), saying what is missing', async () => {
    const ws = await open(t);
    const closed = untilClosed(ws);
    init(ws, {});
    expect(await closed).toEqual({
      messages: [],
      code: 4403,
      reason: 'Forbidden: send an API token (connectionParams.authorization) or sign in to the console',
    });
  });

  test('a session cookie that names no session is refused like a wrong token (4403)', async () => {
    const host = `127.0.0.1:${t.instance.port}`;
    const ws = new WebSocket(`ws://${host}/graphql`, 'graphql-transport-ws', {
      headers: { cookie: `taskbay_session=${'x'.repeat(43)}`, origin: `http://${host}` },
    });
    opened.push(ws);
    await new Promise((r) => ws.once('open', r));
    const closed = untilClosed(ws);
    init(ws, {});
    expect(await closed).toMatchObject({ messages: [], code: 4403 });
  });

  test('a socket that sends no connection_init is closed once TASKBAY_WS_AUTH_GRACE_MS has passed (4408)', async () => {
    const started = performance.now();
    const ws = await open(guarded);
    expect(await untilClosed(ws)).toMatchObject({ code: 4408, messages: [] });
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
  });

  test('one address holds at most TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS of them: the next upgrade is 429, no socket; one that authenticates frees its place', async () => {
    const waiting: WebSocket[] = [];
    for (let i = 0; i < 3; i++) waiting.push(await openWhenRoom(guarded));
    expect(await refusal(open(guarded))).toEqual({
      status: 429,
      body: 'this address already holds 3 WebSockets that have not authenticated; the limit is 3',
    });
    const first = waiting[0]!;
    const ack = acknowledged(first);
    init(first, { authorization: `Bearer ${guarded.adminToken}` });
    await ack;
    const next = await open(guarded);
    for (const ws of [...waiting, next]) ws.close();
    await Promise.all([...waiting, next].map((ws) => (ws.readyState === ws.CLOSED ? null : new Promise((r) => ws.once('close', r)))));
  });

  test('one address holds at most TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS sockets, authenticated ones too; a closed one frees its place', async () => {
    const sockets: WebSocket[] = [];
    for (let i = 0; i < 5; i++) {
      const ws = await openWhenRoom(guarded);
      const ack = acknowledged(ws);
      init(ws, { authorization: `Bearer ${guarded.adminToken}` });
      await ack;
      sockets.push(ws);
    }
    expect(await refusal(open(guarded))).toEqual({ status: 429, body: 'this address already holds 5 WebSockets and subscription streams; the limit is 5' });
    const closed = new Promise((r) => sockets[0]!.once('close', r));
    sockets[0]!.close();
    await closed;
    const again = await openWhenRoom(guarded);
    for (const ws of [...sockets.slice(1), again]) ws.close();
    await Promise.all([...sockets.slice(1), again].map((ws) => (ws.readyState === ws.CLOSED ? null : new Promise((r) => ws.once('close', r)))));
  });
});

// Issue 22, finding 9: a subscription over HTTP (SSE, `Accept: text/event-stream`, one request
// each) skipped the WebSocket caps: one token held as many as it opened. Each viewer now has the
// room of one socket, and each stream counts against its address.
describe('subscriptions over SSE', () => {
  const streams: { close(): void }[] = [];
  afterAll(() => {
    for (const s of streams) s.close();
  });

  /** One SSE subscription: its `next` payloads as they arrive, and how it ended. */
  function sse(on: TestInstance, token: string, query = 'subscription { approvalRequested { id } }') {
    const controller = new AbortController();
    const events: any[] = [];
    const ended = (async () => {
      const res = await fetch(`${on.instance.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'ended';
        buffer += decoder.decode(value, { stream: true });
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1];
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (event === 'next' && data) events.push(JSON.parse(data));
          if (event === 'complete') return 'complete';
        }
      }
    })().catch((e: unknown) => (controller.signal.aborted ? 'aborted' : Promise.reject(e)));
    const stream = { events, ended, close: () => controller.abort() };
    streams.push(stream);
    return stream;
  }
  type Stream = ReturnType<typeof sse>;

  const CREATE = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "probe" } }) { id } }`;
  let probes = 0;
  /** Until a request created now reaches every stream given: they are all live. */
  async function live(on: TestInstance, list: Stream[]): Promise<void> {
    await untilProbeArrives(async () => {
      const r = await on.gql(CREATE, { title: `probe ${++probes}` });
      const id = r.data.createApproval.id as string;
      return () => list.every((s) => s.events.some((e) => e.data?.approvalRequested?.id === id));
    });
  }
  /**
   * The stream's first payload: its refusal, or the first event once it is live (a request
   * created for it arrives). Probes stop as soon as it has one, so none outlives the test.
   */
  async function firstOf(on: TestInstance, s: Stream): Promise<any> {
    for (let round = 0; round < 10 && s.events.length === 0; round++) {
      await on.gql(CREATE, { title: `probe ${++probes}` });
      await eventually(async () => s.events.length > 0, 1000, 20).catch(() => undefined);
    }
    if (s.events.length === 0) throw new Error('the stream neither was refused nor received a request');
    return s.events[0];
  }

  test('one viewer runs at most TASKBAY_WS_MAX_SUBSCRIPTIONS at once; another viewer has its own room; an ended one makes room', async () => {
    const held = [0, 1, 2].map(() => sse(capped, capped.adminToken));
    await live(capped, held);
    const fourth = sse(capped, capped.adminToken);
    expect(await firstOf(capped, fourth)).toEqual({
      errors: [
        {
          message: 'this viewer already runs 3 subscriptions over HTTP; the limit is 3',
          extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_MANY_OPERATIONS' },
        },
      ],
    });
    expect(await fourth.ended).toBe('complete');

    const other = await createMember(capped, { role: 'ADMIN' });
    const theirs = sse(capped, other.token);
    expect((await firstOf(capped, theirs)).data.approvalRequested.id).toEqual(expect.any(String));

    held[0]!.close();
    // The server gives the room back when it sees the request end: wait for that state.
    const again = await eventually(async () => {
      const s = sse(capped, capped.adminToken);
      const first = await firstOf(capped, s);
      if (first.errors) return null;
      return s;
    }, 10_000);
    expect(again.events[0].data.approvalRequested.id).toEqual(expect.any(String));
  });

  test('one viewer starts at most TASKBAY_WS_OPERATIONS_PER_SECOND a second', async () => {
    const burst = [1, 2, 3, 4, 5].map(() => sse(throttled, throttled.adminToken));
    await Promise.all(burst.map((s) => firstOf(throttled, s)));
    const limited = burst.filter((s) => s.events[0]?.errors?.[0]?.extensions?.reason === 'RATE_LIMITED');
    expect(limited.length).toBeGreaterThanOrEqual(3);
    expect(limited[0]!.events[0].errors[0]).toEqual({
      message: 'more than 2 subscriptions over HTTP a second by this viewer; the limit is 2',
      extensions: { code: 'BAD_USER_INPUT', reason: 'RATE_LIMITED' },
    });
  });

  test('streams count against their address with its WebSockets (TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS)', async () => {
    const viewers = await Promise.all([0, 1, 2, 3, 4].map(() => createMember(guarded, { role: 'ADMIN' })));
    const held = viewers.map((v) => sse(guarded, v.token));
    await live(guarded, held);
    const sixth = sse(guarded, guarded.adminToken);
    expect((await firstOf(guarded, sixth)).errors[0]).toEqual({
      message: 'this address already holds 5 WebSockets and subscription streams; the limit is 5',
      extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_MANY_OPERATIONS' },
    });
    for (const s of held) s.close();
  });
});
