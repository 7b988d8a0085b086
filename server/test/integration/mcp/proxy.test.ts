import { createServer } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJwks, jwksUrl, verifySignedApproval } from '../../../../packages/taskbay-verify/src/index.js';
import { MCP_PROXY_EXIT } from '../../../src/mcp/cli.js';
import { sessionsOf } from '../../../src/mcp/sessions.js';
import { loopbackRelay, type Relay } from '../../support/bearer-proxy.js';
import { createMember, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { askAndDecide, connectWith, decide, REQUEST_ID, repositoryCli, stdioServer, type StdioHost } from '../../support/mcp.js';

// `taskbay mcp-proxy URL` (server/src/mcp/cli.ts) as a stdio MCP host starts it: the SDK's
// StdioClientTransport runs the repository's CLI with TASKBAY_TOKEN, and the SDK client talks to
// Taskbay's /mcp through it. Every message passes unchanged (tools, progress, the answer); what
// the endpoint refuses or cannot answer reaches the client as an error, never as silence.

let t: TestInstance;
let member: { id: string; email: string; token: string };

/** The proxy to `url` with `token`, connected as an SDK client; nothing but JSON-RPC may reach the client from its stdout. */
async function viaProxy(url: string, token: string, name = 'stdio-host'): Promise<{ client: Client; proxy: StdioHost; errors: Error[] }> {
  const proxy = stdioServer({ ...repositoryCli(['mcp-proxy', url]), env: { TASKBAY_TOKEN: token } });
  const errors: Error[] = [];
  const client = await connectWith(proxy.transport, name);
  client.onerror = (e) => errors.push(e);
  return { client, proxy, errors };
}

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A loopback relay to `target` that closes the first GET stream right after its headers; `reopened` resolves on the next GET. */
async function cuttingFirstGet(target: string): Promise<Relay & { reopened: Promise<void> }> {
  let gets = 0;
  let onReopen!: () => void;
  const reopened = new Promise<void>((resolve) => (onReopen = resolve));
  const relay = await loopbackRelay(target, {
    endAfterHeaders: (req) => {
      if (req.method !== 'GET') return false;
      gets += 1;
      if (gets === 2) onReopen();
      return gets === 1;
    },
  });
  return { ...relay, reopened };
}

beforeAll(async () => {
  t = await startTestInstance();
  member = await createMember(t);
});
afterAll(async () => {
  await t?.stop();
});

describe('taskbay mcp-proxy', () => {
  it('relays initialize and tools/list unchanged; when the host closes stdin it ends the session (DELETE) and exits 0', async () => {
    const before = sessionsOf(t.instance.orm).size;
    const { client, proxy, errors } = await viaProxy(`${t.instance.url}/mcp`, member.token);
    expect(client.getServerVersion()).toEqual({ name: 'taskbay', title: 'Taskbay', version: '0.1.0' });
    expect(client.getInstructions()).toMatch(/^Taskbay asks a person before you act/);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(['request_approval', 'get_approval']);
    expect(sessionsOf(t.instance.orm).size).toBe(before + 1);
    await client.close();
    expect(await proxy.exited).toBe(MCP_PROXY_EXIT.OK);
    expect(sessionsOf(t.instance.orm).size).toBe(before);
    expect(errors).toEqual([]);
    expect(proxy.stderr()).toBe('');
  });

  it('request_approval through the proxy: the progress names the request, an admin approves it, the client gets approved: true', async () => {
    const { client, proxy, errors } = await viaProxy(`${t.instance.url}/mcp`, member.token, 'claude-desktop');
    const { result, messages } = await askAndDecide(
      client,
      { title: 'Send the release notes', risk: 'medium', action: { kind: 'send_message', text: 'Release 2.4.1 is out' } },
      (id) => decide(t, OPS.approve, id, { comment: 'ok' }, t.adminToken),
    );
    const s = result.structuredContent as any;
    expect(messages[0]!.match(REQUEST_ID)?.[1]).toBe(s.request_id);
    expect(s.status).toBe('APPROVED');
    expect(s.approved).toBe(true);
    expect(s.action).toEqual({ kind: 'send_message', text: 'Release 2.4.1 is out', data: null });
    const verdict = verifySignedApproval(s.signed_approval, { jwks: await fetchJwks(jwksUrl(t.instance.url)), issuer: t.config.publicUrl });
    expect(verdict.ok && verdict.action).toEqual(s.action);
    // The client name the host gave in initialize reached Taskbay unchanged.
    const a = await t.gql(`{ node(id: "${s.request_id}") { ... on Approval { agent { kind name } } } }`);
    expect(a.data.node.agent).toEqual({ kind: 'MCP_CLIENT', name: `claude-desktop (MCP) of ${member.email}` });
    await client.close();
    expect(await proxy.exited).toBe(MCP_PROXY_EXIT.OK);
    expect(errors).toEqual([]);
  });

  it('a refused token: initialize gets an error that says so (no hang), stderr says it too, and the proxy exits 77', async () => {
    const proxy = stdioServer({ ...repositoryCli(['mcp-proxy', `${t.instance.url}/mcp`]), env: { TASKBAY_TOKEN: 'tb_not_a_token' } });
    const refused = await connectWith(proxy.transport).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/refused the request \(HTTP 401\): Taskbay refused the API token/);
    expect((refused as Error).message).toContain('Check TASKBAY_TOKEN');
    expect(await proxy.exited).toBe(MCP_PROXY_EXIT.REFUSED);
    expect(proxy.stderr()).toMatch(/^taskbay mcp-proxy: .*HTTP 401.*Taskbay refused the API token/m);
    await proxy.transport.close();
  });

  it('an unreachable URL: initialize gets "could not reach", and the proxy exits 69', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const proxy = stdioServer({ ...repositoryCli(['mcp-proxy', url]), env: { TASKBAY_TOKEN: member.token } });
    const failed = await connectWith(proxy.transport).catch((e: Error) => e);
    expect((failed as Error).message).toContain(`could not reach ${url}: connect ECONNREFUSED`);
    expect(await proxy.exited).toBe(MCP_PROXY_EXIT.UNAVAILABLE);
    expect(proxy.stderr()).toContain(`could not reach ${url}`);
    await proxy.transport.close();
  });

  it('a GET stream closed by a proxy in between is reopened, and the session goes on', async () => {
    const relay = await cuttingFirstGet(t.instance.url);
    try {
      const { client, proxy } = await viaProxy(`${relay.url}/mcp`, member.token);
      await relay.reopened;
      expect((await client.listTools()).tools.map((x) => x.name)).toEqual(['request_approval', 'get_approval']);
      await client.close();
      expect(await proxy.exited, proxy.stderr()).toBe(MCP_PROXY_EXIT.OK);
    } finally {
      await relay.close();
    }
  });

  it('Taskbay stops while request_approval waits: the call fails with an error and the proxy exits 69', async () => {
    const other = await startTestInstance();
    const someone = await createMember(other);
    const { client, proxy } = await viaProxy(`${other.instance.url}/mcp`, someone.token);
    let stopped: Promise<void> | null = null;
    const waiting = client
      .callTool({ name: 'request_approval', arguments: { title: 'Wait for me', action: { kind: 'send_message', text: 'x' }, wait_seconds: 600 } }, undefined, {
        timeout: 120_000,
        onprogress: () => {
          stopped ??= other.stop();
        },
      })
      .then(
        () => null,
        (e: Error) => e,
      );
    const error = await waiting;
    await stopped;
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/ended its answer stream without answering|broke before it answered|could not reach|refused the request \(HTTP 404\)/);
    expect(await proxy.exited).toBe(MCP_PROXY_EXIT.UNAVAILABLE);
    await proxy.transport.close();
  });
});
