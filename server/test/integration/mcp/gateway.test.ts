import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalSha256 } from '../../../src/lib/hashing.js';
import { localWakesOf } from '../../../src/mcp/local-wake.js';
import { MCP_LIMITS } from '../../../src/limits.js';
import { fetchJwks, jwksUrl, verifyToolCallApproval } from '../../../../packages/taskbay-verify/src/index.js';
import { createMember, OPS, rawId, startTestInstance, type TestInstance } from '../../support/harness.js';
import { callAndDecide, REQUEST_ID } from '../../support/mcp.js';
import { createPolicy, Q } from '../../support/policies.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type RunningUpstream, startServerEverything } from '../../support/mcp-upstream.js';

// The MCP gateway in front of a real MCP server from the registry
// (@modelcontextprotocol/server-everything over Streamable HTTP), with the official SDK client:
// what the rules pass goes through unchanged, what they hold waits for a person and is
// forwarded once as approved, what they refuse (or a person rejects) never reaches the server.

let t: TestInstance;
let upstream: RunningUpstream;
let member: { id: string; email: string; token: string };

const RULES = [
  { condition: 'mcp.tool == "echo"', outcome: 'PASS', reason: null },
  { condition: 'mcp.tool == "get-env"', outcome: 'REFUSE', reason: 'the environment holds secrets' },
];
const REGISTER = `mutation($name: String!, $url: String!, $rules: [McpCallRuleInput!], $hold: Int) {
  registerMcpServer(name: $name, url: $url, rules: $rules, holdSeconds: $hold) { id name gatewayPath } }`;

async function connect(url: string, token = member.token): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}
const gateway = (name = 'everything') => connect(`${t.instance.url}/mcp/servers/${name}`);
const direct = async () => {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
  return client;
};

const callHeld = async (client: Client, name: string, args: Record<string, unknown>, reviewerActs: (id: string) => Promise<unknown>) =>
  (await callAndDecide(client, name, args, reviewerActs)).result;

async function decide(op: string, id: string, vars: Record<string, unknown> = {}) {
  const a = await t.gql(`{ node(id: "${id}") { ... on Approval { revision digest } } }`);
  const r = await t.gql(op, { id, revision: a.data.node.revision, digest: a.data.node.digest, ...vars });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
}

const eventsOf = (id: string) =>
  t.sql<{ type: string; data: any }>(`select type, data from audit_event where stream = $1 order by seq`, [`approval:${rawId(id)}`]);

beforeAll(async () => {
  upstream = await startServerEverything();
  t = await startTestInstance();
  member = await createMember(t);
  for (const [name, hold] of [
    ['everything', null],
    ['everything-short', 2],
  ] as const) {
    const r = await t.gql(REGISTER, { name, url: upstream.url, rules: RULES, hold });
    expect(r.errors).toBeUndefined();
  }
});
afterAll(async () => {
  await t?.stop();
  await upstream?.stop();
});

describe('MCP gateway /mcp/servers/<name>', () => {
  it('passes through unchanged what the rules pass: server info, tools, prompts, resources, a call', async () => {
    const [g, d] = [await gateway(), await direct()];
    expect(g.getServerVersion()).toEqual(d.getServerVersion());
    expect(g.getServerCapabilities()).toEqual(d.getServerCapabilities());
    expect(await g.listTools()).toEqual(await d.listTools());
    expect(await g.listPrompts()).toEqual(await d.listPrompts());
    expect(await g.listResources()).toEqual(await d.listResources());
    const args = { message: 'hello through Taskbay' };
    expect(await g.callTool({ name: 'echo', arguments: args })).toEqual(await d.callTool({ name: 'echo', arguments: args }));
    // An upstream's tool error comes back as the upstream gave it.
    const bad = { message: 42 };
    expect(await g.callTool({ name: 'echo', arguments: bad })).toEqual(await d.callTool({ name: 'echo', arguments: bad }));
    // A tool the server does not list is not forwarded at all.
    const unknown = await g.callTool({ name: 'no-such-tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as any[])[0].text).toMatch(/^Unknown tool: no-such-tool .*did not forward/);
    await g.close();
    await d.close();
  });

  it("an admin's new rules apply to the next call of an open session", async () => {
    const g = await gateway();
    expect((await g.callTool({ name: 'echo', arguments: { message: 'a' } })).isError).toBeFalsy();
    const [{ id }] = await t.sql(`select id from mcp_upstream where name = 'everything'`);
    const SET = `mutation($id: ID!, $rules: [McpCallRuleInput!]!) { setMcpServerRules(id: $id, rules: $rules) { id } }`;
    expect((await t.gql(SET, { id, rules: [{ condition: 'mcp.tool == "echo"', outcome: 'REFUSE', reason: 'echo is off today' }] })).errors).toBeUndefined();
    const refused = await g.callTool({ name: 'echo', arguments: { message: 'b' } });
    expect(refused.isError).toBe(true);
    expect((refused.content as any[])[0].text).toContain('echo is off today');
    expect((await t.gql(SET, { id, rules: RULES })).errors).toBeUndefined();
    expect((await g.callTool({ name: 'echo', arguments: { message: 'c' } })).isError).toBeFalsy();
    await g.close();
  });

  it("an admin's new rules apply to the next call of a session on another instance", async () => {
    // The rules a session's instance remembers are dropped on every instance when a change commits.
    const other = await startTestInstance({ databaseUrl: t.databaseUrl, adminToken: t.adminToken });
    try {
      const g = await connect(`${other.instance.url}/mcp/servers/everything`);
      expect((await g.callTool({ name: 'echo', arguments: { message: 'a' } })).isError).toBeFalsy();
      const [{ id }] = await t.sql(`select id from mcp_upstream where name = 'everything'`);
      const SET = `mutation($id: ID!, $rules: [McpCallRuleInput!]!) { setMcpServerRules(id: $id, rules: $rules) { id } }`;
      expect(
        (await t.gql(SET, { id, rules: [{ condition: 'mcp.tool == "echo"', outcome: 'REFUSE', reason: 'echo is off here too' }] })).errors,
      ).toBeUndefined();
      const refused = await g.callTool({ name: 'echo', arguments: { message: 'b' } });
      expect(refused.isError).toBe(true);
      expect((refused.content as any[])[0].text).toContain('echo is off here too');
      expect((await t.gql(SET, { id, rules: RULES })).errors).toBeUndefined();
      expect((await g.callTool({ name: 'echo', arguments: { message: 'c' } })).isError).toBeFalsy();
      await g.close();
    } finally {
      await other.stop();
    }
  });

  it('refuses what a rule refuses, with its reason, and opens no request', async () => {
    const g = await gateway();
    const before = (await t.sql(`select count(*)::int as n from approval`))[0].n;
    const r = await g.callTool({ name: 'get-env', arguments: {} });
    expect(r.isError).toBe(true);
    expect((r.content as any[])[0].text).toContain('the environment holds secrets');
    expect((await t.sql(`select count(*)::int as n from approval`))[0].n).toBe(before);
    await g.close();
  });

  it('holds a call until approved, forwards it once, returns the result and records its digest; the forward carries the signed approval', async () => {
    const [g, d] = [await gateway(), await direct()];
    let id = '';
    const result = await callHeld(g, 'get-sum', { a: 2, b: 3 }, async (held) => {
      id = held;
      const a = await t.gql(`{ node(id: "${held}") { ... on Approval { title action risk agent { kind } } } }`);
      expect(a.data.node.action).toEqual({
        kind: 'send_message',
        text: 'Call the tool "get-sum" of the MCP server "everything"',
        data: { server: 'everything', tool: 'get-sum', arguments: { a: 2, b: 3 } },
      });
      expect(a.data.node.agent.kind).toBe('MCP_CLIENT');
      const waiting = await t.gql(`{ node(id: "${held}") { ... on Approval { mcpCall { server tool waiting forwardedAt } } } }`);
      expect(waiting.data.node.mcpCall).toEqual({ server: 'everything', tool: 'get-sum', waiting: true, forwardedAt: null });
      // The waiting call is woken by the decision's commit on this instance, before the mutation answers (local-wake.ts).
      let woken = 0;
      const unwatch = localWakesOf(t.instance.orm)!.watch(rawId(held), () => woken++);
      await decide(OPS.approve, held);
      expect(woken).toBeGreaterThan(0);
      unwatch();
    });
    expect(result).toEqual(await d.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }));
    const events = await eventsOf(id);
    expect(events.filter((e) => e.type === 'mcp.call_forwarded')).toHaveLength(1);
    const answered = events.filter((e) => e.type === 'mcp.call_answered');
    expect(answered).toHaveLength(1);
    expect(answered[0]!.data.resultDigest).toBe(canonicalSha256(result));
    const after = await t.gql(`{ node(id: "${id}") { ... on Approval { mcpCall { waiting forwardedAt resultDigest resultIsError } } } }`);
    expect(after.data.node.mcpCall).toMatchObject({ waiting: false, resultDigest: canonicalSha256(result), resultIsError: false });
    expect(after.data.node.mcpCall.forwardedAt).not.toBeNull();
    await g.close();
    await d.close();
  });

  it('approved on another instance: the call waiting here hears it (LISTEN) and is forwarded once', async () => {
    const other = await startTestInstance({ databaseUrl: t.databaseUrl, adminToken: t.adminToken });
    try {
      const g = await gateway();
      let id = '';
      let approvedAt = 0;
      const result = await callHeld(g, 'get-sum', { a: 30, b: 12 }, async (held) => {
        id = held;
        const a = await other.gql(`{ node(id: "${held}") { ... on Approval { revision digest } } }`);
        const r = await other.gql(OPS.approve, { id: held, revision: a.data.node.revision, digest: a.data.node.digest });
        expect(r.errors).toBeUndefined();
        approvedAt = Date.now();
      });
      // Sooner than the wait's periodic read: the decision's event woke it.
      expect(Date.now() - approvedAt).toBeLessThan(MCP_LIMITS.progressSeconds * 1000);
      expect(JSON.stringify(result.content)).toContain('42');
      expect((await eventsOf(id)).filter((e) => e.type === 'mcp.call_forwarded')).toHaveLength(1);
      await g.close();
    } finally {
      await other.stop();
    }
  });

  it('edited then approved: the edited arguments are what the server receives', async () => {
    const g = await gateway();
    const result = await callHeld(g, 'get-sum', { a: 2, b: 3 }, (id) =>
      decide(OPS.editAndApprove, id, {
        action: {
          kind: 'send_message',
          text: 'Call the tool "get-sum" of the MCP server "everything"',
          data: { server: 'everything', tool: 'get-sum', arguments: { a: 40, b: 2 } },
        },
      }),
    );
    expect(JSON.stringify(result.content)).toContain('42');
    await g.close();
  });

  it('rejected: a tool error naming the outcome and the comment; nothing forwarded', async () => {
    const g = await gateway();
    let id = '';
    const result = await callHeld(g, 'get-sum', { a: 1, b: 1 }, async (held) => {
      id = held;
      await decide(OPS.reject, held, { comment: 'not now' });
    });
    expect(result.isError).toBe(true);
    expect((result.content as any[])[0].text).toMatch(/Rejected by .*"not now".*not forwarded/s);
    expect((await eventsOf(id)).some((e) => e.type === 'mcp.call_forwarded')).toBe(false);
    await g.close();
  });

  it('expired before anyone decided: a tool error; nothing forwarded', async () => {
    const g = await gateway('everything-short');
    let id = '';
    const result = await callHeld(g, 'get-sum', { a: 5, b: 5 }, async (held) => {
      id = held;
    });
    expect(result.isError).toBe(true);
    expect((result.content as any[])[0].text).toMatch(/expired/);
    const [a] = await t.sql(`select status from approval where id = $1`, [rawId(id)]);
    expect(a.status).toBe('EXPIRED');
    expect((await eventsOf(id)).some((e) => e.type === 'mcp.call_forwarded')).toBe(false);
    await g.close();
  });

  it('the client gone while held: nothing is forwarded; the same call asked again gets the one decision, forwarded once', async () => {
    const g = await gateway();
    let id = '';
    const heard = new Promise<string>((resolve) => {
      g.callTool({ name: 'get-sum', arguments: { a: 7, b: 7 } }, undefined, {
        timeout: 90_000,
        onprogress: (p) => {
          const m = p.message?.match(REQUEST_ID)?.[1];
          if (m) resolve(m);
        },
      }).catch(() => {});
    });
    id = await heard;
    await g.close();
    await decide(OPS.approve, id);
    const again = await gateway();
    const result = await again.callTool({ name: 'get-sum', arguments: { a: 7, b: 7 } });
    expect(JSON.stringify(result.content)).toContain('14');
    const forwarded = (await eventsOf(id)).filter((e) => e.type === 'mcp.call_forwarded');
    expect(forwarded).toHaveLength(1);
    // Asked once more: the request was forwarded, so this is a new request, not a second forward.
    const third = again.callTool({ name: 'get-sum', arguments: { a: 7, b: 7 } }, undefined, {
      timeout: 90_000,
      onprogress: (p) => {
        const m = p.message?.match(REQUEST_ID)?.[1];
        if (m && m !== id) void decide(OPS.reject, m);
      },
    });
    expect((await third).isError).toBe(true);
    expect((await eventsOf(id)).filter((e) => e.type === 'mcp.call_forwarded')).toHaveLength(1);
    await again.close();
  });

  it("an unknown server, another token's session, a bad token: refused", async () => {
    const r = await fetch(`${t.instance.url}/mcp/servers/nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${member.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(r.status).toBe(404);
    await expect(connect(`${t.instance.url}/mcp/servers/everything`, 'tb_nope')).rejects.toThrow();
  });

  it('registering: a bad name, a bad URL, a rule that does not compile are refused and nothing is saved', async () => {
    const bad = [
      { name: 'Bad Name', url: upstream.url, rules: [] },
      { name: 'ok-name', url: 'ftp://example.com/mcp', rules: [] },
      { name: 'ok-name', url: upstream.url, rules: [{ condition: 'mcp.nope ==', outcome: 'PASS' }] },
      { name: 'everything', url: upstream.url, rules: [] },
    ];
    for (const v of bad) {
      const r = await t.gql(REGISTER, v);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(v)).toBe('BAD_USER_INPUT');
    }
    // A command (stdio) only where TASKBAY_MCP_STDIO allows it: not here.
    const stdio = await t.gql(`mutation { registerMcpServer(name: "cmd", command: "node", args: ["x.js"]) { id } }`);
    expect(stdio.errors?.[0]?.message).toMatch(/TASKBAY_MCP_STDIO=1/);
    const member2 = await t.gql(REGISTER, { name: 'mine', url: upstream.url }, member.token);
    expect(member2.errors?.[0]).toBeDefined();
    expect((await t.sql(`select count(*)::int as n from mcp_upstream where name in ('ok-name', 'mine', 'cmd')`))[0].n).toBe(0);
  });
});

describe('MCP gateway: an upstream that checks the approval, and a quorum', () => {
  let cooperating: { url: string; received: Record<string, unknown>[]; close(): Promise<void> };
  beforeAll(async () => {
    cooperating = await cooperatingUpstream();
    const r = await t.gql(REGISTER, { name: 'deployer', url: cooperating.url, rules: [] });
    expect(r.errors).toBeUndefined();
  });
  afterAll(async () => {
    await cooperating?.close();
  });

  it('the forwarded call carries the signed approval in _meta; verifyToolCallApproval accepts exactly that call and no other', async () => {
    const g = await gateway('deployer');
    const result = await callHeld(g, 'deploy', { service: 'api', version: '2.1.0' }, (id) => decide(OPS.approve, id));
    expect(result.isError).toBeFalsy();
    expect(cooperating.received).toHaveLength(1);
    const params = cooperating.received[0] as { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> };
    const opts = { jwks: await fetchJwks(jwksUrl(t.instance.url)), issuer: t.config.publicUrl, server: 'deployer' };
    const verdict = verifyToolCallApproval(params, opts);
    expect(verdict.ok).toBe(true);
    expect(verdict.ok && (verdict.action as any).data.arguments).toEqual({ service: 'api', version: '2.1.0' });
    expect(verifyToolCallApproval({ ...params, arguments: { service: 'api', version: '9.9.9' } }, opts)).toEqual({
      ok: false,
      reason: 'the arguments are not the approved ones',
    });
    expect(verifyToolCallApproval({ ...params, name: 'destroy' }, opts).ok).toBe(false);
    expect(verifyToolCallApproval({ ...params, _meta: {} }, opts).ok).toBe(false);
    expect(verifyToolCallApproval(params, { ...opts, server: 'other' }).ok).toBe(false);
    await g.close();
  });

  it('a quorum of two: forwarded once, after the second approval', async () => {
    const policy = await createPolicy(t, { name: 'two for deploys', condition: 'title.startsWith("Call deploy on deployer")', quorum: { approvals: 2 } });
    const [r1, r2] = [await createMember(t), await createMember(t)];
    const a = await t.gql(`{ agents { id kind name } }`);
    const mine = a.data.agents.filter((x: any) => x.kind === 'MCP_CLIENT');
    for (const agent of mine)
      for (const r of [r1, r2]) expect((await t.gql(OPS.grant, { userId: r.id, agentId: agent.id, permission: 'OPERATE' })).errors).toBeUndefined();
    const before = cooperating.received.length;
    const g = await gateway('deployer');
    const result = await callHeld(g, 'deploy', { service: 'web', version: '3.0.0' }, async (id) => {
      const first = await t.gql(`{ node(id: "${id}") { ... on Approval { revision digest } } }`);
      const v = { id, revision: first.data.node.revision, digest: first.data.node.digest };
      expect((await t.gql(OPS.approve, v, r1.token)).errors).toBeUndefined();
      const [held] = await t.sql(`select status from approval where id = $1`, [rawId(id)]);
      expect(held.status).toBe('PENDING');
      expect(cooperating.received.length).toBe(before);
      expect((await t.gql(OPS.approve, v, r2.token)).errors).toBeUndefined();
    });
    expect(result.isError).toBeFalsy();
    expect(cooperating.received.length).toBe(before + 1);
    await g.close();
    await t.gql(Q.delete, { id: policy.id });
  });
});

/** An MCP server built on the official SDK that records what it receives (arguments and _meta) of its one tool. */
async function cooperatingUpstream() {
  const received: Record<string, unknown>[] = [];
  const http = await import('node:http');
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      const mcp = new Server({ name: 'deployer', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: 'deploy',
            description: 'Deploys a service',
            inputSchema: { type: 'object', properties: { service: { type: 'string' }, version: { type: 'string' } } },
            annotations: { destructiveHint: true },
          },
        ],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
        received.push({ name: request.params.name, arguments: request.params.arguments, _meta: request.params._meta });
        return { content: [{ type: 'text', text: `deployed ${JSON.stringify(request.params.arguments)}` }] };
      });
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
