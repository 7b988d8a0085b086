import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.js';
import { codeOf, eventually, OPS, startTestInstance, type TestInstance, ok } from '../../support/harness.js';
import { closeAll, connectionTrap, listenLocal, passA2a, readAll, sendJson } from '../../support/local-servers.js';

// Issue 22, finding 6: under the documented allow-list `allow *.agents.example.com, deny *`, a
// name of that domain resolving to 169.254.169.254 connected (its host rule allowed it before the
// metadata refusal was reached). Metadata and link-local are now refused whatever the rules say.
//
// The names get real DNS answers: Taskbay resolves them itself through TASKBAY_AGENT_DNS_SERVERS,
// pointed at a DNS server on loopback (support/dns-server.ts) whose records the test changes.
// The instance dials 127.0.0.1 whatever address it judged, so a policy that let the metadata
// address through shows up as a connection to a local trap, never as traffic to 169.254.169.254.

const META = '169.254.169.254';
const RULES = 'allow *.agents.example.com, deny *';

let t: TestInstance;
let dns: TestDnsServer;
let fixture: FixtureAgent;
const servers: Server[] = [];
/** Counts connections: one means the policy let the metadata address through. */
let trap: { port: number; connections: number };
/** Serves a card naming itself (or, at /meta-card.json, the metadata name) and passes A2A to the fixture. */
let agent: { port: number; a2aRequests: number };
/** A webhook receiver. */
let receiver: { port: number; requests: number };

const listen = (server: Server) => listenLocal(servers, server);

async function agentHandler(req: IncomingMessage, res: ServerResponse) {
  const body = await readAll(req);
  if (req.method === 'GET') {
    const card = (await (await fetch(fixture.cardUrl('showcase'))).json()) as { supportedInterfaces: unknown[] };
    const iface = req.url === '/meta-card.json' ? `http://meta.agents.example.com:${trap.port}/a2a` : `http://${req.headers.host}/a2a`;
    card.supportedInterfaces = [{ url: iface, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }];
    return sendJson(res, 200, JSON.stringify(card));
  }
  agent.a2aRequests += 1;
  const upstream = await passA2a(req, body, fixture.a2aUrl('showcase'));
  return sendJson(res, upstream.status, upstream.text);
}

beforeAll(async () => {
  fixture = await startFixtureAgent();
  dns = await startDnsServer({
    'card.agents.example.com': ['127.0.0.1'],
    'meta.agents.example.com': [META],
    'flip.agents.example.com': ['127.0.0.1'],
    'hook.agents.example.com': ['127.0.0.1'],
  });
  trap = await connectionTrap(servers);
  agent = { port: 0, a2aRequests: 0 };
  agent.port = await listen(createHttpServer((req, res) => void agentHandler(req, res)));
  receiver = { port: 0, requests: 0 };
  receiver.port = await listen(
    createHttpServer((req, res) => {
      receiver.requests += 1;
      req.resume();
      res.writeHead(204, { connection: 'close' }).end();
    }),
  );
  t = await startTestInstance({
    env: {
      TASKBAY_AGENT_NETWORKS: RULES,
      TASKBAY_AGENT_DNS_SERVERS: dns.address,
      TASKBAY_DELIVERY_MAX_ATTEMPTS: '1',
      TASKBAY_WEBHOOK_MAX_ATTEMPTS: '1',
    },
    // No resolver of the test's own: only where a judged address is dialled.
    network: { dial: () => '127.0.0.1' },
  });
});

afterAll(async () => {
  await t?.stop();
  await fixture?.close();
  await dns?.close();
  await closeAll(servers);
});

const REFUSED = `is refused by the agent network policy (protected: cloud metadata)`;
const agentCount = async () => Number((await t.sql(`select count(*)::int as n from agent`))[0].n);
const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { ${OPS.approvalFields} } } } }`;
const APPROVAL = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} } }`;

describe(`under TASKBAY_AGENT_NETWORKS="${RULES}", a name the DNS answers with ${META} never connects`, () => {
  it('the allow rule itself works: a name of the domain answered with 127.0.0.1 registers (its card fetched through the DNS answer)', async () => {
    ok(await t.gql(OPS.register, { url: `http://card.agents.example.com:${agent.port}/card.json` }));
    expect(dns.queries).toContain('A card.agents.example.com');
  });

  it('card fetch: registerAgent is BAD_USER_INPUT (refused), nothing connects, nothing is stored', async () => {
    const before = await agentCount();
    const r = await t.gql(OPS.register, { url: `http://meta.agents.example.com:${trap.port}/card.json` });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain(`meta.agents.example.com ${REFUSED}`);
    expect(r.errors![0]!.extensions).toMatchObject({ failure: 'refused' });
    expect(dns.queries).toContain('A meta.agents.example.com');
    expect(trap.connections).toBe(0);
    expect(await agentCount()).toBe(before);
  });

  it('A2A call: a card whose interface is such a name: startTask fails (AGENT_ERROR, refused), nothing connects', async () => {
    const id = ok(await t.gql(OPS.register, { url: `http://card.agents.example.com:${agent.port}/meta-card.json` })).registerAgent.id;
    const r = await t.gql(OPS.startTask, { agentId: id, text: 'approve' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'AGENT_ERROR', failure: 'refused' });
    expect(r.errors![0]!.message).toBe(
      `the agent did not accept the message: SendMessage to meta.agents.example.com:${trap.port} failed: meta.agents.example.com ${REFUSED}`,
    );
    expect(trap.connections).toBe(0);
  });

  it("delivery: the agent's name answered with the metadata address after the request opened: refused, nothing connects", async () => {
    const agentId = ok(await t.gql(OPS.register, { url: `http://flip.agents.example.com:${agent.port}/card.json` })).registerAgent.id;
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    expect(task.state).toBe('INPUT_REQUIRED');
    const [edge] = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
    const approval = edge.node;
    const a2aRequests = agent.a2aRequests;
    dns.records.set('flip.agents.example.com', [META]);
    try {
      ok(await t.gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }));
      const failed = await eventually(async () => {
        const a = ok(await t.gql(APPROVAL, { id: approval.id })).approval;
        return a.execution?.status === 'FAILED' ? a : null;
      }, 20_000);
      expect(failed.execution.lastError).toBe(`SendMessage to flip.agents.example.com:${agent.port} failed: flip.agents.example.com ${REFUSED}`);
    } finally {
      dns.records.set('flip.agents.example.com', ['127.0.0.1']);
    }
    expect(agent.a2aRequests).toBe(a2aRequests);
    expect(trap.connections).toBe(0);
  });

  it('webhooks: an endpoint at such a name is refused; an endpoint whose name is answered with it later delivers nothing', async () => {
    const CREATE = `mutation($url: String!) { createWebhookEndpoint(input: { url: $url, eventTypes: [APPROVAL_REQUESTED] }) { endpoint { id } } }`;
    const refused = await t.gql(CREATE, { url: `http://meta.agents.example.com:${trap.port}/hook` });
    expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    expect(refused.errors![0]!.message).toBe(
      'meta.agents.example.com is refused by the network policy that agent and webhook URLs follow (protected: cloud metadata)',
    );

    const id = ok(await t.gql(CREATE, { url: `http://hook.agents.example.com:${receiver.port}/hook` })).createWebhookEndpoint.endpoint.id;
    dns.records.set('hook.agents.example.com', [META]);
    ok(await t.gql(`mutation($id: ID!) { sendWebhookTestEvent(id: $id) { id } }`, { id }));
    const LOG = `query($id: ID!) { node(id: $id) { ... on WebhookEndpoint { deliveries(first: 5) { edges { node { status attempts { error } } } } } } }`;
    const [delivery] = await eventually(async () => {
      const log = ok(await t.gql(LOG, { id })).node.deliveries.edges.map((e: any) => e.node);
      return log.length && log.every((d: any) => d.status === 'FAILED') ? log : null;
    }, 20_000);
    expect(delivery.attempts.map((a: any) => a.error)).toEqual([`hook.agents.example.com ${REFUSED}`]);
    expect(trap.connections).toBe(0);
    expect(receiver.requests).toBe(0);
  });
});
