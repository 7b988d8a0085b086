import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { A2UI_EXTENSION, APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION } from '../../../src/a2a/extensions.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';

// docs/ARCHITECTURE.md, "The flow":
//   1. "An admin registers an agent by its Agent Card URL. Taskbay fetches the card and stores an
//       immutable card snapshot (every refresh adds one). Extension negotiation always reads the
//       latest stored snapshot."
//   2. "Taskbay sends A2A SendMessage [...] with headers `A2A-Version: 1.0` and
//       `A2A-Extensions: <the Taskbay URIs the agent advertises>`."

let t: TestInstance;
let fixture: FixtureAgent;
let cardServer: Server;
let cardBase: string;

/** What the tiny card server answers, by path; tests change it between calls. */
const served = new Map<string, { status?: number; type?: string; body: string }>();

const UNKNOWN_EXTENSION = 'https://example.test/extensions/not-taskbay/v1';

function card(opts: { name: string; a2aUrl: string; extensions?: string[]; skills?: { id: string; name: string }[] }) {
  return {
    name: opts.name,
    description: 'A card served by the test',
    version: '2.1.0',
    supportedInterfaces: [{ url: opts.a2aUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extensions: (opts.extensions ?? []).map((uri) => ({ uri, required: false })),
    },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: opts.skills ?? [{ id: 'chat', name: 'Chat', description: 'Talks', tags: ['test'] }],
  };
}

function serve(path: string, body: unknown, opts: { status?: number; type?: string } = {}) {
  served.set(path, { body: typeof body === 'string' ? body : JSON.stringify(body), ...opts });
  return `${cardBase}${path}`;
}

const AGENT_QUERY = `query($id: ID!) { agent(id: $id) {
  id name cardUrl extensions skills { id name }
  card { number extensions card }
  snapshots { number fetchedAt extensions card } } }`;

async function counts() {
  const [c] = await t.sql(
    `select (select count(*)::int from agent) agents, (select count(*)::int from card_snapshot) snapshots,
            (select count(*)::int from audit_event where type like 'agent.%') events`,
  );
  return c as { agents: number; snapshots: number; events: number };
}

const register = (url: string) => t.gql(OPS.register, { url });
const refresh = (id: string) => t.gql(`mutation($id: ID!) { refreshAgentCard(id: $id) { id name extensions } }`, { id });

/** Starts a task and returns what the fixture received for it. */
async function startAndCapture(agentId: string, text = 'hello') {
  const st = await t.gql(OPS.startTask, { agentId, text });
  expect(st.errors).toBeUndefined();
  const received = fixture.received.filter((r) => r.taskId === st.data.startTask.remoteTaskId);
  expect(received).toHaveLength(1);
  return { task: st.data.startTask as { id: string; remoteTaskId: string }, received: received[0]! };
}

const extensionHeader = (h: string | undefined) =>
  h === undefined
    ? undefined
    : h
        .split(',')
        .map((s) => s.trim())
        .sort();

beforeAll(async () => {
  fixture = await startFixtureAgent();
  cardServer = createServer((req, res) => {
    const entry = served.get((req.url ?? '/').split('?')[0]!);
    if (!entry) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    res.writeHead(entry.status ?? 200, { 'content-type': entry.type ?? 'application/json' }).end(entry.body);
  });
  await new Promise<void>((r) => cardServer.listen(0, '127.0.0.1', () => r()));
  cardBase = `http://127.0.0.1:${(cardServer.address() as AddressInfo).port}`;
  t = await startTestInstance();
});

afterAll(async () => {
  await t?.stop();
  await fixture?.close();
  await new Promise<void>((r) => (cardServer ? cardServer.close(() => r()) : r()));
});

beforeEach(() => served.clear());

describe('agent catalog: registerAgent stores an immutable card snapshot', () => {
  it('registerAgent fetches the A2A v1.0 card and stores it as snapshot 1 (interfaces, extensions, skills)', async () => {
    const served1 = {
      ...card({ name: 'Catalog agent', a2aUrl: fixture.a2aUrl('approver'), extensions: [APPROVAL_REQUEST_EXTENSION] }),
      'x-unrecognised': { anything: 'goes' }, // not part of the card: not stored
    };
    const url = serve('/catalog/card.json', served1);
    const r = await register(url);
    expect(r.errors).toBeUndefined();
    expect(r.data.registerAgent).toMatchObject({ name: 'Catalog agent', extensions: [APPROVAL_REQUEST_EXTENSION] });

    const a = (await t.gql(AGENT_QUERY, { id: r.data.registerAgent.id })).data.agent;
    expect(a.cardUrl).toBe(url);
    expect(a.snapshots).toHaveLength(1);
    expect(a.card.number).toBe(1);
    const stored = a.snapshots[0].card;
    expect(stored.supportedInterfaces).toEqual(served1.supportedInterfaces);
    expect(stored.capabilities.extensions).toEqual(served1.capabilities.extensions);
    expect(stored.skills).toEqual(served1.skills);
    expect(stored.name).toBe('Catalog agent');
    expect(stored).not.toHaveProperty('x-unrecognised');
    expect(a.skills).toEqual([{ id: 'chat', name: 'Chat' }]);

    const rows = await t.sql(`select s.number, s.card from card_snapshot s join agent a on a.id = s.agent_id where a.card_url = $1`, [url]);
    expect(rows).toEqual([{ number: 1, card: stored }]);
    const [ev] = await t.sql(`select data from audit_event where type = 'agent.registered' and data->>'cardUrl' = $1`, [url]);
    expect(ev.data).toMatchObject({ snapshot: 1, name: 'Catalog agent' });

    // "an immutable card snapshot": the database refuses to change or remove one.
    const where = `agent_id = (select id from agent where card_url = $1)`;
    await expect(t.sql(`update card_snapshot set card = '{}'::jsonb where ${where}`, [url])).rejects.toThrow(/immutable/);
    await expect(t.sql(`delete from card_snapshot where ${where}`, [url])).rejects.toThrow(/immutable/);
    expect(await t.sql(`select s.number, s.card from card_snapshot s join agent a on a.id = s.agent_id where a.card_url = $1`, [url])).toEqual([
      { number: 1, card: stored },
    ]);
  });

  it('refreshAgentCard adds snapshot 2 (latest first); snapshot 1 is unchanged and the new extensions show', async () => {
    const path = '/refresh/card.json';
    const url = serve(path, card({ name: 'Refresh v1', a2aUrl: fixture.a2aUrl('approver'), extensions: [APPROVAL_REQUEST_EXTENSION] }));
    const r = await register(url);
    const id = r.data.registerAgent.id;
    const before = (await t.gql(AGENT_QUERY, { id })).data.agent;

    serve(
      path,
      card({
        name: 'Refresh v2',
        a2aUrl: fixture.a2aUrl('approver'),
        extensions: [APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION],
        skills: [
          { id: 'chat', name: 'Chat' },
          { id: 'report', name: 'Report' },
        ],
      }),
    );
    const rr = await refresh(id);
    expect(rr.errors).toBeUndefined();
    expect(rr.data.refreshAgentCard).toMatchObject({ name: 'Refresh v2', extensions: [APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION] });

    const after = (await t.gql(AGENT_QUERY, { id })).data.agent;
    expect(after.snapshots.map((s: { number: number }) => s.number)).toEqual([2, 1]);
    expect(after.card.number).toBe(2);
    expect(after.snapshots[1]).toEqual(before.snapshots[0]); // snapshot 1: same card, same fetchedAt
    expect(after.snapshots[1].extensions).toEqual([APPROVAL_REQUEST_EXTENSION]);
    expect(after.extensions).toEqual([APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION]);
    expect(after.skills.map((s: { id: string }) => s.id)).toEqual(['chat', 'report']);

    // A refresh that cannot fetch the card adds nothing and keeps the latest snapshot.
    served.delete(path);
    const before404 = await counts();
    const failed = await refresh(id);
    expect(codeOf(failed)).toBe('BAD_USER_INPUT');
    expect(failed.errors![0]!.message).toMatch(/HTTP 404/);
    expect(await counts()).toEqual(before404);
    expect((await t.gql(AGENT_QUERY, { id })).data.agent.card.number).toBe(2);
  });

  it('an unusable card URL is BAD_USER_INPUT with a clear message, and nothing is stored', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));

    const { supportedInterfaces: _drop, ...noInterfaces } = card({ name: 'No interfaces', a2aUrl: fixture.a2aUrl('approver') });
    const cases: [string, string, RegExp][] = [
      ['closed port', `http://127.0.0.1:${closedPort}/card.json`, /could not be fetched: connection refused/],
      ['404', `${cardBase}/nothing-here/card.json`, /could not be fetched: HTTP 404/],
      ['500', serve('/broken/card.json', '{}', { status: 500 }), /could not be fetched: HTTP 500/],
      ['not JSON', serve('/html/card.json', '<html><body>hello</body></html>', { type: 'text/html' }), /not JSON/],
      ['no supportedInterfaces', serve('/no-ifaces/card.json', noInterfaces), /supportedInterfaces is missing/],
      ['not an object', serve('/array/card.json', [1, 2, 3]), /not a JSON object/],
      ['ftp URL', 'ftp://127.0.0.1/card.json', /must be http or https/],
      ['file URL', 'file:///etc/passwd', /must be http or https/],
      ['javascript URL', 'javascript:alert(1)', /must be http or https/],
      ['not a URL', 'not a url at all', /not a URL/],
    ];
    const before = await counts();
    for (const [what, url, message] of cases) {
      const r = await register(url);
      expect({ what, code: codeOf(r) }).toEqual({ what, code: 'BAD_USER_INPUT' });
      expect(r.errors![0]!.message, what).toMatch(message);
      expect(r.data?.registerAgent ?? null).toBeNull();
    }
    expect(await counts()).toEqual(before);
  });

  it('registering the same card URL twice is BAD_USER_INPUT and stores nothing more', async () => {
    const url = serve('/twice/card.json', card({ name: 'Twice', a2aUrl: fixture.a2aUrl('approver') }));
    const first = await register(url);
    expect(first.errors).toBeUndefined();
    const before = await counts();
    for (const again of [url, url.replace('http://127.0.0.1', 'HTTP://127.0.0.1'), ` ${url} `]) {
      const r = await register(again);
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toMatch(/already registered/);
      expect(r.errors![0]!.extensions!.agentId).toBe(first.data!.registerAgent.id);
    }
    expect(await counts()).toEqual(before);
  });

  it('concurrent registrations of one URL give one agent and BAD_USER_INPUT for the rest; concurrent refreshes number snapshots without collisions', async () => {
    const url = serve('/race/card.json', card({ name: 'Race', a2aUrl: fixture.a2aUrl('approver') }));
    const before = await counts();
    const results = await Promise.all([register(url), register(url), register(url)]);
    const ok = results.filter((r) => !r.errors);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.errors).map(codeOf)).toEqual(['BAD_USER_INPUT', 'BAD_USER_INPUT']);
    expect(await counts()).toEqual({ agents: before.agents + 1, snapshots: before.snapshots + 1, events: before.events + 1 });
    const id = ok[0]!.data.registerAgent.id;
    // The losers (of the race on the unique index, or of the check before it) are told the winner's id.
    for (const r of results.filter((x) => x.errors)) expect(r.errors![0]!.extensions!.agentId).toBe(id);

    // Concurrent refreshes each add one snapshot, numbered without gaps or collisions.
    const refreshed = await Promise.all([refresh(id), refresh(id), refresh(id)]);
    expect(refreshed.map((r) => r.errors ?? null)).toEqual([null, null, null]);
    const a = (await t.gql(AGENT_QUERY, { id })).data.agent;
    expect(a.snapshots.map((s: { number: number }) => s.number)).toEqual([4, 3, 2, 1]);
  });
});

describe('A2A headers: A2A-Version 1.0 and exactly the advertised Taskbay extensions', () => {
  it('startTask names the Taskbay extensions the showcase card advertises', async () => {
    const r = await register(fixture.cardUrl('showcase'));
    const { received } = await startAndCapture(r.data.registerAgent.id);
    expect(received.headers['a2a-version']).toBe('1.0');
    expect(extensionHeader(received.headers['a2a-extensions'])).toEqual([APPROVAL_REQUEST_EXTENSION, STRUCTURED_FORM_EXTENSION, A2UI_EXTENSION].sort());
  });

  it('extensions the card advertises that Taskbay does not know are not named', async () => {
    const url = serve(
      '/mixed/card.json',
      card({ name: 'Mixed', a2aUrl: fixture.a2aUrl('approver'), extensions: [UNKNOWN_EXTENSION, APPROVAL_REQUEST_EXTENSION] }),
    );
    const r = await register(url);
    expect(r.data.registerAgent.extensions).toEqual([UNKNOWN_EXTENSION, APPROVAL_REQUEST_EXTENSION]);
    const { received } = await startAndCapture(r.data.registerAgent.id);
    expect(received.headers['a2a-version']).toBe('1.0');
    expect(extensionHeader(received.headers['a2a-extensions'])).toEqual([APPROVAL_REQUEST_EXTENSION]);
  });

  it('an agent that advertises no extension gets no A2A-Extensions header', async () => {
    const r = await register(fixture.cardUrl('plain'));
    expect(r.data.registerAgent.extensions).toEqual([]);
    const { received } = await startAndCapture(r.data.registerAgent.id);
    expect(received.headers['a2a-version']).toBe('1.0');
    expect(received.headers['a2a-extensions']).toBeUndefined();
  });

  it('negotiation reads the latest snapshot: after a refresh that adds the approval extension, it is named and requests open', async () => {
    const path = '/grows/card.json';
    const url = serve(path, card({ name: 'Grows', a2aUrl: fixture.a2aUrl('approver'), extensions: [] }));
    const r = await register(url);
    const id = r.data.registerAgent.id;
    const approvalsOf = async (taskId: string) =>
      (await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id } } } }`, { t: taskId })).data.approvals.edges;

    const before = await startAndCapture(id, 'approve');
    expect(before.received.headers['a2a-extensions']).toBeUndefined();
    expect(await approvalsOf(before.task.id)).toEqual([]); // not advertised: the request part stays content

    serve(path, card({ name: 'Grows', a2aUrl: fixture.a2aUrl('approver'), extensions: [APPROVAL_REQUEST_EXTENSION] }));
    expect((await refresh(id)).errors).toBeUndefined();
    const after = await startAndCapture(id, 'approve');
    expect(extensionHeader(after.received.headers['a2a-extensions'])).toEqual([APPROVAL_REQUEST_EXTENSION]);
    expect(await approvalsOf(after.task.id)).toHaveLength(1);
  });
});
