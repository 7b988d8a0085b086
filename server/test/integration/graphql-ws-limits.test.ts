import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestInstance, type TestInstance } from '../support/harness.js';

// GraphQL over WebSocket (graphql-ws on the real port): how a connection authenticates, the
// same query limits as HTTP, and what only a socket needs: a cap on operations running at once,
// a rate of operations started, and the size of one message.

let t: TestInstance; // defaults
let capped: TestInstance; // 3 operations at once, 32 KiB messages, input depth 10
let throttled: TestInstance; // 2 operations a second

beforeAll(async () => {
  [t, capped, throttled] = await Promise.all([
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
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), capped?.stop(), throttled?.stop()]);
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

  test('no token and no cookie: connected, anonymous', async () => {
    expect(await run(client(t), VIEWER)).toEqual({ data: { viewer: null } });
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
