import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP, type Server } from 'node:net';
import { lookup } from 'node:dns/promises';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, eventually, OPS, startTestInstance, type GqlResult, type TestInstance, ok } from '../../support/harness.js';
import { closeAll, connectionTrap, listenLocal, passA2a, readAll, sendJson } from '../../support/local-servers.js';

// Security finding "Agent URLs reach anything": card and interface URLs are resolved and judged
// before every connection (also on redirects and after a name is rebound); A2A POSTs follow no
// redirect; callers see a classified error and never the agent's body, which admins read
// (truncated) on the agent.
//
// Names resolve through the test's own resolver (meta.test -> 169.254.169.254, db.test -> the
// test database, self.test -> Taskbay's own port, agent.test -> loopback), and the instance
// dials 127.0.0.1 whatever address it judged: a policy that let something through shows up as a
// connection to a local trap, never as traffic to a real link-local or private address.

const SECRET = 'SECRET-db-password-hunter2';
const META = '169.254.169.254';

let t: TestInstance;
let fixture: FixtureAgent;
const servers: Server[] = [];
const names: Record<string, string[]> = {};

/** A local TCP server that only counts connections. */
let trap: { port: number; connections: number };
/** The agent under test: serves a card naming itself by the Host it was asked for, and proxies A2A to the fixture. */
let proxy: { port: number; mode: 'pass' | 'secret500' | 'rpcSecret'; cardRequests: number; a2aRequests: number };
/** Answers redirects: card hops and a 307 to a POST. */
let redirector: { port: number };
/** Where the 307 points: must never be reached. */
let redirectTarget: { port: number; requests: number };

const listen = (server: Server) => listenLocal(servers, server);

async function proxyHandler(req: IncomingMessage, res: ServerResponse) {
  const body = await readAll(req);
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'GET' && path.endsWith('card.json')) {
    proxy.cardRequests += 1;
    const card = (await (await fetch(fixture.cardUrl('showcase'))).json()) as { supportedInterfaces: unknown[]; capabilities: Record<string, unknown> };
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const iface =
      path === '/meta-card.json'
        ? `http://meta.test:${trap.port}/a2a`
        : path === '/redirect-card.json'
          ? `http://agent.test:${redirector.port}/a2a-307`
          : query.has('creds')
            ? `http://taskbay:${SECRET}@${req.headers.host}/a2a`
            : `http://${req.headers.host}/a2a`;
    card.supportedInterfaces = [{ url: iface, protocolBinding: query.has('rest') ? 'HTTP+JSON' : 'JSONRPC', protocolVersion: '1.0' }];
    if (query.has('streaming')) card.capabilities.streaming = true;
    return sendJson(res, 200, JSON.stringify(card));
  }
  proxy.a2aRequests += 1;
  if (proxy.mode === 'secret500') {
    return sendJson(res, 500, JSON.stringify({ error: { code: 500, message: `connection to postgres failed: ${SECRET}` }, pad: 'x'.repeat(6000) }));
  }
  if (proxy.mode === 'rpcSecret') {
    const { id } = JSON.parse(body.toString('utf8')) as { id: string };
    return sendJson(res, 200, JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: `internal: ${SECRET}` } }));
  }
  const upstream = await passA2a(req, body, fixture.a2aUrl('showcase'));
  return sendJson(res, upstream.status, upstream.text);
}

beforeAll(async () => {
  fixture = await startFixtureAgent();
  trap = await connectionTrap(servers);
  proxy = { port: 0, mode: 'pass', cardRequests: 0, a2aRequests: 0 };
  proxy.port = await listen(createHttpServer((req, res) => void proxyHandler(req, res)));
  redirectTarget = { port: 0, requests: 0 };
  redirectTarget.port = await listen(
    createHttpServer((req, res) => {
      redirectTarget.requests += 1;
      req.resume();
      sendJson(res, 200, '{}');
    }),
  );
  redirector = { port: 0 };
  redirector.port = await listen(
    createHttpServer((req, res) => {
      req.resume();
      const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      if (hop) {
        const n = Number(hop[1]);
        const next = n === 0 ? `http://agent.test:${proxy.port}/card.json` : `/hop/${n - 1}`;
        return sendJson(res, 302, '', { location: next });
      }
      if (req.url === '/to-meta') return sendJson(res, 302, '', { location: `http://meta.test:${trap.port}/card.json` });
      if (req.url === '/a2a-307') return sendJson(res, 307, '', { location: `http://agent.test:${redirectTarget.port}/a2a` });
      sendJson(res, 404, '{}');
    }),
  );

  t = await startTestInstance({
    env: { TASKBAY_DELIVERY_MAX_ATTEMPTS: '1' },
    network: {
      resolve: async (hostname) => {
        const found = names[hostname];
        if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return found;
      },
      dial: () => '127.0.0.1',
    },
  });
  const db = new URL(t.databaseUrl);
  const dbAddresses = isIP(db.hostname) ? [db.hostname] : (await lookup(db.hostname, { all: true })).map((a) => a.address);
  Object.assign(names, {
    'agent.test': ['127.0.0.1'],
    'flip.test': ['127.0.0.1'],
    'flip2.test': ['127.0.0.1'],
    'meta.test': [META],
    'db.test': dbAddresses,
    'self.test': ['127.0.0.1'],
  });
});

afterAll(async () => {
  await t?.stop();
  await fixture?.close();
  await closeAll(servers);
});

const AGENT = `query($id: ID!) { agent(id: $id) { id lastError { kind message detail at } snapshots { number } } }`;
const REFRESH = `mutation($id: ID!) { refreshAgentCard(id: $id) { id } }`;
const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { ${OPS.approvalFields} events { type data } } } } }`;
const APPROVAL = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} events { type data } } }`;

const register = (url: string) => t.gql(OPS.register, { url });
const agentCount = async () => Number((await t.sql(`select count(*)::int as n from agent`))[0].n);

describe('registerAgent and refreshAgentCard judge the card URL before connecting', () => {
  it.each([
    [
      'a name resolving to the metadata address',
      () => `http://meta.test:${trap.port}/card.json`,
      'meta.test is refused by the agent network policy (protected: cloud metadata)',
    ],
    [
      'the metadata address itself',
      () => `http://${META}:${trap.port}/card.json`,
      `${META} is refused by the agent network policy (protected: cloud metadata)`,
    ],
    [
      'an IPv4-mapped metadata address',
      () => `http://[::ffff:${META}]:${trap.port}/card.json`,
      'is refused by the agent network policy (protected: cloud metadata)',
    ],
    [
      "the test database's address and port",
      () => `http://db.test:${new URL(t.databaseUrl).port}/card.json`,
      "db.test is refused by the agent network policy (protected: the database's address)",
    ],
    [
      "Taskbay's own port",
      () => `http://self.test:${t.instance.port}/card.json`,
      "self.test is refused by the agent network policy (protected: Taskbay's own port)",
    ],
  ])('%s: BAD_USER_INPUT (refused), nothing connects, nothing is stored', async (_label, url, reason) => {
    const before = { agents: await agentCount(), trap: trap.connections };
    const r = await register(url());
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain(`Agent card at ${new URL(url()).toString()} could not be fetched: `);
    expect(r.errors![0]!.message).toContain(reason);
    expect(r.errors![0]!.extensions).toMatchObject({ failure: 'refused' });
    expect(trap.connections).toBe(before.trap);
    expect(await agentCount()).toBe(before.agents);
  });

  it('an allowed name registers; a card redirect is followed up to 3 hops, each hop judged again', async () => {
    ok(await register(`http://agent.test:${proxy.port}/card.json`));
    ok(await register(`http://agent.test:${redirector.port}/hop/2`));

    const tooMany = await register(`http://agent.test:${redirector.port}/hop/3`);
    expect(codeOf(tooMany)).toBe('BAD_USER_INPUT');
    expect(tooMany.errors![0]!.message).toContain('could not be fetched: more than 3 redirects');

    const toMeta = await register(`http://agent.test:${redirector.port}/to-meta`);
    expect(codeOf(toMeta)).toBe('BAD_USER_INPUT');
    expect(toMeta.errors![0]!.message).toContain('meta.test is refused by the agent network policy (protected: cloud metadata)');
    expect(trap.connections).toBe(0);
  });

  it('a refresh after the card host was rebound to the metadata address is refused; the admin sees why on the agent', async () => {
    const id = ok(await register(`http://flip.test:${proxy.port}/card.json`)).registerAgent.id;
    const cardRequests = proxy.cardRequests;
    names['flip.test'] = [META];
    try {
      const r = await t.gql(REFRESH, { id });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toContain('flip.test is refused by the agent network policy (protected: cloud metadata)');
    } finally {
      names['flip.test'] = ['127.0.0.1'];
    }
    expect(proxy.cardRequests).toBe(cardRequests);
    const agent = ok(await t.gql(AGENT, { id })).agent;
    expect(agent.snapshots).toHaveLength(1);
    expect(agent.lastError).toMatchObject({ kind: 'refused' });
    expect(agent.lastError.detail).toContain(`flip.test (${META})`);
  });
});

describe('sending to an agent', () => {
  it.each([
    ['JSON-RPC', '', 'SendMessage'],
    ['JSON-RPC streaming', '?streaming', 'SendStreamingMessage'],
    ['HTTP+JSON', '?rest', 'SendMessage'],
  ])(
    'an interface URL the policy refuses (%s): startTask fails (AGENT_ERROR, refused), nothing connects, no task is kept',
    async (_label, query, operation) => {
      const id = ok(await register(`http://agent.test:${proxy.port}/meta-card.json${query}`)).registerAgent.id;
      const tasks = Number((await t.sql(`select count(*)::int as n from task`))[0].n);
      const r = await t.gql(OPS.startTask, { agentId: id, text: 'approve' });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.extensions).toMatchObject({ reason: 'AGENT_ERROR', failure: 'refused' });
      expect(r.errors![0]!.message).toBe(
        `the agent did not accept the message: ${operation} to meta.test:${trap.port} failed: meta.test is refused by the agent network policy (protected: cloud metadata)`,
      );
      expect(trap.connections).toBe(0);
      expect(Number((await t.sql(`select count(*)::int as n from task`))[0].n)).toBe(tasks);
      expect(ok(await t.gql(AGENT, { id })).agent.lastError.kind).toBe('refused');
    },
  );

  it('an interface answering a POST with 307 is not followed: the caller gets the status, the target nothing', async () => {
    const id = ok(await register(`http://agent.test:${proxy.port}/redirect-card.json`)).registerAgent.id;
    const r = await t.gql(OPS.startTask, { agentId: id, text: 'approve' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'AGENT_ERROR', failure: 'http_status' });
    expect(r.errors![0]!.message).toBe(
      `the agent did not accept the message: SendMessage to agent.test:${redirector.port} answered HTTP 307 (a redirect; not followed)`,
    );
    expect(redirectTarget.requests).toBe(0);
    const lastError = ok(await t.gql(AGENT, { id })).agent.lastError;
    expect(lastError.detail).toContain(`location: http://agent.test:${redirectTarget.port}/a2a`);
  });

  it("an agent answering 500 (or a JSON-RPC error) with a secret: the caller's error has the status only; the admin reads the body, truncated; a member gets null", async () => {
    const id = ok(await register(`http://agent.test:${proxy.port}/card.json?secret`)).registerAgent.id;
    const member = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: member.id, agentId: id, permission: 'OPERATE' }));
    proxy.mode = 'secret500';
    let r: GqlResult;
    try {
      r = await t.gql(OPS.startTask, { agentId: id, text: 'hello' }, member.token);
    } finally {
      proxy.mode = 'pass';
    }
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toBe(`the agent did not accept the message: SendMessage to agent.test:${proxy.port} answered HTTP 500`);
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'AGENT_ERROR', failure: 'http_status' });
    expect(JSON.stringify(r)).not.toContain(SECRET);

    const asAdmin = ok(await t.gql(AGENT, { id })).agent.lastError;
    expect(asAdmin.kind).toBe('http_status');
    expect(asAdmin.message).toBe(`SendMessage to agent.test:${proxy.port} answered HTTP 500`);
    expect(asAdmin.detail).toContain(SECRET);
    expect(asAdmin.detail).toContain('(truncated)');
    expect(asAdmin.detail.length).toBeLessThan(2300);
    const asMember = ok(await t.gql(AGENT, { id }, member.token)).agent;
    expect(asMember.id).toBe(id);
    expect(asMember.lastError).toBeNull();

    proxy.mode = 'rpcSecret';
    try {
      r = await t.gql(OPS.startTask, { agentId: id, text: 'hello' }, member.token);
    } finally {
      proxy.mode = 'pass';
    }
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toBe(`the agent did not accept the message: SendMessage to agent.test:${proxy.port} answered JSON-RPC error -32000`);
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(ok(await t.gql(AGENT, { id })).agent.lastError).toMatchObject({ kind: 'rpc', detail: expect.stringContaining(SECRET) });
  });
});

describe('deliveries', () => {
  async function openApproval(cardUrl: string) {
    const agentId = ok(await register(cardUrl)).registerAgent.id;
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    expect(task.state).toBe('INPUT_REQUIRED');
    const [edge] = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
    return { agentId, approval: edge.node };
  }

  const failedExecution = (id: string) =>
    eventually(async () => {
      const a = ok(await t.gql(APPROVAL, { id })).approval;
      return a.execution?.status === 'FAILED' ? a : null;
    }, 20_000);

  it('an agent answering 500 with a secret: the reviewers see the status, never the body; the admin reads it on the agent', async () => {
    const { agentId, approval } = await openApproval(`http://agent.test:${proxy.port}/card.json?delivery`);
    proxy.mode = 'secret500';
    try {
      ok(await t.gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }));
      const failed = await failedExecution(approval.id);
      expect(failed.execution.lastError).toBe(`SendMessage to agent.test:${proxy.port} answered HTTP 500`);
      expect(JSON.stringify(failed)).not.toContain(SECRET);
    } finally {
      proxy.mode = 'pass';
    }
    const [row] = await t.sql(`select last_error from delivery where approval_id = (select id from approval where digest = $1)`, [approval.digest]);
    expect(row.last_error).not.toContain(SECRET);
    expect(ok(await t.gql(AGENT, { id: agentId })).agent.lastError.detail).toContain(SECRET);
  });

  it('an agent whose host is rebound to the metadata address after the request opened: the delivery is refused and nothing connects', async () => {
    const { approval } = await openApproval(`http://flip2.test:${proxy.port}/card.json`);
    const a2aRequests = proxy.a2aRequests;
    names['flip2.test'] = [META];
    try {
      ok(await t.gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }));
      const failed = await failedExecution(approval.id);
      expect(failed.execution.lastError).toBe(
        `SendMessage to flip2.test:${proxy.port} failed: flip2.test is refused by the agent network policy (protected: cloud metadata)`,
      );
    } finally {
      names['flip2.test'] = ['127.0.0.1'];
    }
    expect(proxy.a2aRequests).toBe(a2aRequests);
  });
});

// Issue 22, finding 9: registerAgent accepted a `user:pass@` card URL and repeated it in its
// error ("Agent card at http://user:pass@… could not be fetched"), where every caller, log line
// and trace reads it.
describe('URLs with credentials are refused and never repeated', () => {
  const credentialedCardUrl = () => `http://taskbay-reader:${SECRET}@agent.test:${proxy.port}/card.json`;

  it('registerAgent refuses a card URL with user:password@ (BAD_USER_INPUT): nothing fetched, nothing stored or audited, the credentials not repeated', async () => {
    const before = { agents: await agentCount(), cards: proxy.cardRequests };
    const r = await register(credentialedCardUrl());
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toBe('cardUrl must not carry credentials (user:password@)');
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(JSON.stringify(r)).not.toContain('taskbay-reader');
    expect(proxy.cardRequests).toBe(before.cards);
    expect(await agentCount()).toBe(before.agents);
    expect((await t.sql(`select count(*)::int as n from audit_event where data::text like $1`, [`%${SECRET}%`]))[0].n).toBe(0);
  });

  it('a card URL, AG-UI endpoint or webhook URL that does not parse is refused without being quoted', async () => {
    const broken = `http://taskbay-reader:${SECRET}@[agent.test:${proxy.port}/card.json`;
    const card = await register(broken);
    expect(card.errors![0]!.message).toBe('cardUrl is not a URL (expected http(s)://host[:port]/path)');
    const agui = await t.gql(`mutation($url: String!) { registerAgUiAgent(input: { endpointUrl: $url, name: "x" }) { id } }`, { url: broken });
    expect(agui.errors![0]!.message).toBe('endpointUrl is not a URL (expected http(s)://host[:port]/path)');
    const hook = await t.gql(`mutation($url: String!) { createWebhookEndpoint(input: { url: $url, eventTypes: [APPROVAL_REQUESTED] }) { secret } }`, {
      url: broken,
    });
    expect(hook.errors![0]!.message).toBe('url is not a URL (expected http(s)://host[:port]/path)');
    for (const r of [card, agui, hook]) {
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(r)).not.toContain(SECRET);
    }
  });

  it('an interface URL the card advertises with credentials: startTask fails, and neither the caller nor the admin reads them', async () => {
    const id = ok(await register(`http://agent.test:${proxy.port}/card.json?creds`)).registerAgent.id;
    const r = await t.gql(OPS.startTask, { agentId: id, text: 'approve' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toBe(`the agent did not accept the message: SendMessage to agent.test:${proxy.port} failed: could not connect`);
    expect(JSON.stringify(r)).not.toContain(SECRET);
    const lastError = ok(await t.gql(AGENT, { id })).agent.lastError;
    expect(lastError.detail).toContain(`http://agent.test:${proxy.port}/a2a`);
    expect(lastError.detail).not.toContain(SECRET);
  });
});
