import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJwks, jwksUrl, verifySignedApproval } from '../../../../packages/taskbay-verify/src/index.js';
import { MCP_LIMITS } from '../../../src/limits.js';
import { createMember, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { askAndDecide, connect as connectTo, DEEP_JSON, decide as decideAs, rawInSession } from '../../support/mcp.js';

// Taskbay's MCP server at /mcp with the official SDK client (@modelcontextprotocol/sdk), as an
// MCP host uses it: request_approval waits for a person, get_approval reads the state; the
// answer carries the approved (possibly edited) action and a signed approval that
// @taskbay/verify accepts; the request is an ordinary one of the client's own agent.

let t: TestInstance;
let member: { id: string; email: string; token: string };
let reviewer: { id: string; email: string; token: string };

const connect = (token: string, name?: string) => connectTo(t, token, name);
const decide = (op: string, id: string, vars: Record<string, unknown> = {}, token = reviewer.token) => decideAs(t, op, id, vars, token);

const toolCall = { server: 'github', tool: 'delete_repository', arguments: { owner: 'acme', repo: 'legacy' } };

beforeAll(async () => {
  t = await startTestInstance();
  member = await createMember(t);
  reviewer = await createMember(t);
});
afterAll(async () => {
  await t?.stop();
});

describe('MCP server /mcp', () => {
  it('lists request_approval and get_approval only; refuses a missing token, a foreign Host and a foreign Origin', async () => {
    const client = await connect(member.token);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(['request_approval', 'get_approval']);
    expect(client.getServerVersion()?.name).toBe('taskbay');
    await client.close();

    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${t.instance.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: init,
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer tb_nope' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${member.token}`, origin: 'http://evil.example.com' })).status).toBe(403);
    // A DNS-rebinding page's request names its own host.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${t.instance.url}/mcp`);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: 'evil.example.com',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${member.token}`,
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(init);
    });
    expect(status).toBe(403);
    const ok = await post({ authorization: `Bearer ${member.token}`, origin: t.instance.url });
    expect(ok.status).toBe(200);
  });

  it('a tool call approved by a reviewer: the answer is approved, signed, verifiable; the agent is the client, once', async () => {
    const client = await connect(member.token, 'claude-code');
    const { result, messages } = await askAndDecide(
      client,
      { title: 'Delete the legacy repository', risk: 'high', action: toolCall, external_id: 'call-1' },
      (id) => decide(OPS.approve, id, { comment: 'ok' }, t.adminToken),
    );
    expect(result.isError).toBeFalsy();
    const s = result.structuredContent as any;
    expect(s.status).toBe('APPROVED');
    expect(s.approved).toBe(true);
    expect(s.tool_call).toEqual(toolCall);
    expect(s.action.data).toEqual(toolCall);
    expect(messages[0]).toContain(s.request_id);
    expect(messages[0]).toContain(s.approval_url);
    const jwks = await fetchJwks(jwksUrl(t.instance.url));
    const verdict = verifySignedApproval(s.signed_approval, { jwks, issuer: t.config.publicUrl, externalId: 'call-1' });
    expect(verdict.ok).toBe(true);
    expect(verdict.ok && verdict.action).toEqual(s.action);

    // The request is an ordinary one of the client's own agent (kind MCP_CLIENT), requested by the token's person.
    const a = await t.gql(`{ node(id: "${s.request_id}") { ... on Approval { source requester { id } agent { id kind name } } } }`);
    expect(a.data.node.source).toBe('USER');
    expect(a.data.node.requester.id).toBe(member.id);
    expect(a.data.node.agent.kind).toBe('MCP_CLIENT');
    expect(a.data.node.agent.name).toBe(`claude-code (MCP) of ${member.email}`);

    // A second request of the same token and client name: the same agent, made once.
    const again = await client.callTool({
      name: 'request_approval',
      arguments: { title: 'Another', action: { kind: 'send_message', text: 'hi' }, wait_seconds: 0 },
    });
    const b = await t.gql(`{ node(id: "${(again.structuredContent as any).request_id}") { ... on Approval { agent { id } } } }`);
    expect(b.data.node.agent.id).toBe(a.data.node.agent.id);
    const created = await t.sql(`select count(*)::int as n from audit_event where type = 'agent.mcp_client_created' and data->>'clientName' = 'claude-code'`);
    expect(created[0].n).toBe(1);
    await client.close();
  });

  it('edited then approved: the answer is the edited call, and the signed approval covers the edit', async () => {
    const client = await connect(member.token);
    const edited = { ...toolCall, arguments: { owner: 'acme', repo: 'legacy-archive' } };
    const { result } = await askAndDecide(client, { title: 'Delete it', action: toolCall }, (id) =>
      decide(
        OPS.editAndApprove,
        id,
        { action: { kind: 'send_message', text: `Call the tool "delete_repository" of the MCP server "github"`, data: edited } },
        t.adminToken,
      ),
    );
    const s = result.structuredContent as any;
    expect(s.approved).toBe(true);
    expect(s.revision).toBe(2);
    expect(s.tool_call).toEqual(edited);
    const verdict = verifySignedApproval(s.signed_approval, { jwks: await fetchJwks(jwksUrl(t.instance.url)), issuer: t.config.publicUrl });
    expect(verdict.ok && (verdict.action as any).data).toEqual(edited);
    await client.close();
  });

  it('rejected with a comment: not approved, the comment and the reviewer are said, no signed approval', async () => {
    const client = await connect(member.token);
    const { result } = await askAndDecide(client, { title: 'Delete it', action: toolCall }, (id) =>
      decide(OPS.reject, id, { comment: 'not this one' }, t.adminToken),
    );
    const s = result.structuredContent as any;
    expect(s.status).toBe('REJECTED');
    expect(s.approved).toBe(false);
    expect(s.signed_approval).toBeNull();
    expect(s.decision.comment).toBe('not this one');
    const text = (result.content as any[])[0].text as string;
    expect(text).toMatch(/^Rejected by .*: "not this one"\. Do not do it\./);
    await client.close();
  });

  it("wait_seconds 0 answers at once; get_approval waits for the decision; another token's client cannot read it", async () => {
    const client = await connect(member.token);
    const first = await client.callTool({
      name: 'request_approval',
      arguments: { title: 'Send it', action: { kind: 'send_message', text: 'Deploy v2' }, wait_seconds: 0 },
    });
    const s = first.structuredContent as any;
    expect(s.status).toBe('PENDING');
    expect(s.approved).toBe(false);

    const other = await connect(reviewer.token);
    const foreign = await other.callTool({ name: 'get_approval', arguments: { request_id: s.request_id } });
    expect(foreign.isError).toBe(true);
    expect((foreign.content as any[])[0].text).toContain('this client opened no request');
    await other.close();

    const waiting = client.callTool({ name: 'get_approval', arguments: { request_id: s.request_id, wait_seconds: 60 } }, undefined, { timeout: 90_000 });
    await decide(OPS.approve, s.request_id, {}, t.adminToken);
    const got = (await waiting).structuredContent as any;
    expect(got.status).toBe('APPROVED');
    expect(got.approved).toBe(true);
    expect(got.action).toEqual({ kind: 'send_message', text: 'Deploy v2', data: null });
    await client.close();
  });

  it("the requester cannot decide their own request; a reviewer needs OPERATE on the client's agent", async () => {
    const client = await connect(member.token, 'cursor');
    const first = await client.callTool({
      name: 'request_approval',
      arguments: { title: 'Send it', action: { kind: 'send_message', text: 'x' }, wait_seconds: 0 },
    });
    const id = (first.structuredContent as any).request_id;
    const a = await t.gql(`{ node(id: "${id}") { ... on Approval { revision digest agent { id } } } }`);
    const self = await t.gql(OPS.approve, { id, revision: 1, digest: a.data.node.digest }, member.token);
    expect(self.errors?.[0]?.extensions?.code).toBeDefined();
    const before = await t.gql(OPS.approve, { id, revision: 1, digest: a.data.node.digest }, reviewer.token);
    expect(before.errors?.[0]?.extensions?.code).toBeDefined();
    const g = await t.gql(OPS.grant, { userId: reviewer.id, agentId: a.data.node.agent.id, permission: 'OPERATE' });
    expect(g.errors).toBeUndefined();
    const after = await t.gql(OPS.approve, { id, revision: 1, digest: a.data.node.digest }, reviewer.token);
    expect(after.errors).toBeUndefined();
    await client.close();
  });

  it('hostile arguments get a tool error and write nothing', async () => {
    const client = await connect(member.token);
    const count = async () => (await t.sql(`select count(*)::int as n from approval`))[0].n as number;
    const before = await count();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ title: 'x', action: { kind: 'send_message', text: 'y'.repeat(30_000) } }, /text/],
      [{ title: '', action: { kind: 'send_message', text: 'y' } }, /title/],
      [{ title: 'x', action: { server: 'a', tool: 'b', arguments: [1] } }, /arguments must be an object/],
      [{ title: 'x', action: { kind: 'send_message', text: 'y' }, wait_seconds: MCP_LIMITS.waitMaxSeconds + 1 }, /wait_seconds/],
      [{ title: 'x', action: { kind: 'send_message', text: '\ud800' } }, /stored|surrogate/i],
    ];
    for (const [args, why] of cases) {
      const r = await client
        .callTool({ name: 'request_approval', arguments: args })
        .catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
      expect(r.isError, `case ${cases.findIndex((c) => c[0] === args)}`).toBe(true);
      expect((r.content as any[])[0].text).toMatch(why);
    }
    // Arguments nested 10,000 deep: more than the SDK client itself can send, so as raw JSON-RPC.
    const text = await rawInSession(
      t,
      client,
      '/mcp',
      member.token,
      `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"request_approval","arguments":{"title":"x","action":{"server":"a","tool":"b","arguments":${DEEP_JSON}}}}}`,
    );
    expect(text).toMatch(/"isError":true/);
    expect(text).toMatch(/nest|deep/i);
    expect(await count()).toBe(before);
    await expect(client.callTool({ name: 'approve', arguments: {} })).rejects.toThrow(/no tool "approve"/);
    await client.close();
  });

  it('a session belongs to its token: another token naming its id is told it does not exist', async () => {
    const client = await connect(member.token);
    const transport = (client as any)._transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId!;
    const r = await fetch(`${t.instance.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${reviewer.token}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }),
    });
    expect(r.status).toBe(404);
    await client.close();
  });
});
