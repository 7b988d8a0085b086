import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, eventually, OPS, rawId, startTestInstance, type TestInstance } from '../../support/harness.js';
import { callAndDecide, REQUEST_ID } from '../../support/mcp.js';
import { type RunningUpstream, startServerEverything } from '../../support/mcp-upstream.js';

// What an admin reads and does of one MCP server behind approval (the console's MCP servers page):
// the tools it lists now, each with the call rule that decides a call of it; the calls its rules
// held; and removing it, which stops every open session's next call while its held requests stay
// readable. Against @modelcontextprotocol/server-everything, with the official SDK client.

let t: TestInstance;
let upstream: RunningUpstream;
let member: { id: string; email: string; token: string };
let serverId: string;

const RULES = [
  { condition: 'mcp.tool == "echo"', outcome: 'PASS', reason: null },
  { condition: 'mcp.tool == "get-env"', outcome: 'REFUSE', reason: 'the environment holds secrets' },
  { condition: 'mcp.tool == "get-sum" && mcp.arguments.contains("999")', outcome: 'REFUSE', reason: 'too much' },
];
const REGISTER = `mutation($name: String!, $url: String!, $rules: [McpCallRuleInput!]) {
  registerMcpServer(name: $name, url: $url, rules: $rules) { id name } }`;
const SERVER = `query($id: ID!) { mcpServer(id: $id) {
  name removedAt
  tools { error tools { name description destructiveHint outcome rule argumentsMatter } }
  recentCalls { tool forwardedAt resultIsError approval { id status } } } }`;
const REMOVE = `mutation($id: ID!) { removeMcpServer(id: $id) { id name removedAt } }`;

async function gateway(name: string): Promise<Client> {
  const client = new Client({ name: 'servers-admin-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.instance.url}/mcp/servers/${name}`), {
      requestInit: { headers: { authorization: `Bearer ${member.token}` } },
    }),
  );
  return client;
}

async function approve(id: string) {
  const a = await t.gql(`{ node(id: "${id}") { ... on Approval { revision digest } } }`);
  const r = await t.gql(OPS.approve, { id, revision: a.data.node.revision, digest: a.data.node.digest });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
}

beforeAll(async () => {
  upstream = await startServerEverything();
  t = await startTestInstance();
  member = await createMember(t);
  const r = await t.gql(REGISTER, { name: 'everything', url: upstream.url, rules: RULES });
  expect(r.errors).toBeUndefined();
  serverId = r.data.registerMcpServer.id;
});
afterAll(async () => {
  await t?.stop();
  await upstream?.stop();
});

describe('an MCP server as its admin sees it', () => {
  it('lists the tools the server lists now, each with the rule that decides a call of it', async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    const listed = (await direct.listTools()).tools.map((x) => x.name);
    await direct.close();

    const r = await t.gql(SERVER, { id: serverId });
    expect(r.errors).toBeUndefined();
    const { tools, error } = r.data.mcpServer.tools;
    expect(error).toBeNull();
    expect(tools.map((x: { name: string }) => x.name)).toEqual(listed);
    const byName = Object.fromEntries(tools.map((x: { name: string }) => [x.name, x]));
    expect(byName.echo).toMatchObject({ outcome: 'PASS', rule: 1, argumentsMatter: false });
    expect(byName['get-env']).toMatchObject({ outcome: 'REFUSE', rule: 2, argumentsMatter: false });
    // Rule 3 reads the arguments: without them it does not match, so the call is held, but it may match one.
    expect(byName['get-sum']).toMatchObject({ outcome: 'HOLD', rule: null, argumentsMatter: true });
    expect(byName['get-tiny-image']).toMatchObject({ outcome: 'HOLD', rule: null, argumentsMatter: true });
    expect(typeof byName.echo.description).toBe('string');
  });

  it('an unreachable server is said in the listing, not an error of the query', async () => {
    const { freePort } = await import('../../support/free-port.js');
    const r1 = await t.gql(REGISTER, { name: 'gone', url: `http://127.0.0.1:${await freePort()}/mcp`, rules: [] });
    expect(r1.errors).toBeUndefined();
    const r = await t.gql(SERVER, { id: r1.data.registerMcpServer.id });
    expect(r.errors).toBeUndefined();
    expect(r.data.mcpServer.tools.tools).toEqual([]);
    expect(r.data.mcpServer.tools.error).toMatch(/^Taskbay could not list the tools of gone: /);
  });

  it('a member cannot read a server or remove one', async () => {
    const read = await t.gql(SERVER, { id: serverId }, member.token);
    expect(read.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const removed = await t.gql(REMOVE, { id: serverId }, member.token);
    expect(removed.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const rows = await t.sql(`select removed_at from mcp_upstream where name = 'everything'`);
    expect(rows).toEqual([{ removed_at: null }]);
  });

  it('lists the calls its rules held, newest first; removing it stops the open session and keeps the requests', async () => {
    const client = await gateway('everything');
    const held: string[] = [];
    const approveHeld = (id: string) => {
      held.push(id);
      return approve(id);
    };
    expect((await callAndDecide(client, 'get-sum', { a: 1, b: 2 }, approveHeld)).result.isError).toBeFalsy();
    expect((await callAndDecide(client, 'get-sum', { a: 3, b: 4 }, approveHeld)).result.isError).toBeFalsy();
    const [first, second] = held.map((id) => ({ id }));

    const r = await t.gql(SERVER, { id: serverId });
    const calls = r.data.mcpServer.recentCalls;
    expect(calls.map((c: { approval: { id: string } }) => c.approval.id)).toEqual([second!.id, first!.id]);
    expect(calls[0]).toMatchObject({ tool: 'get-sum', resultIsError: false, approval: { status: 'APPROVED' } });
    expect(calls[0].forwardedAt).not.toBeNull();

    // A third call, held while the server is removed: approved after, it is never forwarded.
    let named!: (id: string) => void;
    const heard = new Promise<string>((resolve) => (named = resolve));
    const pending = client
      .callTool({ name: 'get-sum', arguments: { a: 5, b: 6 } }, undefined, {
        timeout: 60_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          const id = p.message?.match(REQUEST_ID)?.[1];
          if (id) named(id);
        },
      })
      .then(
        (r) => `answered: ${JSON.stringify(r)}`,
        (e: Error) => `refused: ${e.message}`,
      );
    const pendingId = await Promise.race([
      heard,
      pending.then((how) => {
        throw new Error(`the held call ended before its request was named (${how})`);
      }),
    ]);

    const removed = await t.gql(REMOVE, { id: serverId });
    expect(removed.errors).toBeUndefined();
    expect(removed.data.removeMcpServer.removedAt).not.toBeNull();
    const events = await t.sql(`select data->>'name' as name from audit_event where type = 'mcp.server_removed'`);
    expect(events).toEqual([{ name: 'everything' }]);

    // The session opened before the removal: a call is not forwarded, and once this instance heard
    // the removal (the event, through LISTEN) the session is over: its next request is refused.
    const after = await client.callTool({ name: 'echo', arguments: { message: 'after removal' } }).then(
      (r) => (r.content as { text: string }[])[0]!.text,
      (e: Error) => `refused: ${e.message}`,
    );
    expect(after).toMatch(/^(The MCP server everything is no longer registered; Taskbay did not forward the call\.|refused: .*)$/);
    await eventually(() =>
      client.listTools().then(
        () => false,
        () => true,
      ),
    );
    const list = await t.gql(`{ mcpServers { name } }`);
    expect(list.data.mcpServers.map((s: { name: string }) => s.name)).toEqual(['gone']);
    expect((await t.gql(SERVER, { id: serverId })).data.mcpServer).toBeNull();
    await approve(pendingId);
    const forwarded = await t.sql(`select forwarded_at from mcp_held_call where approval_id = $1`, [rawId(pendingId)]);
    expect(forwarded).toEqual([{ forwarded_at: null }]);
    void pending;
    // The held request still names its server.
    const heldRequest = await t.gql(`{ node(id: "${first!.id}") { ... on Approval { mcpCall { server tool forwardedAt } } } }`);
    expect(heldRequest.data.node.mcpCall).toMatchObject({ server: 'everything', tool: 'get-sum' });
    await client.close().catch(() => {});

    // The name is free again, for a new server.
    const again = await t.gql(REGISTER, { name: 'everything', url: upstream.url, rules: [] });
    expect(again.errors).toBeUndefined();
    expect(again.data.registerMcpServer.id).not.toBe(serverId);
  });
});
