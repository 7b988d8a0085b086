import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_GATEWAY_LIMITS } from '../../../src/limits.js';
import { createMember, startTestInstance, type TestInstance } from '../../support/harness.js';
import { rawInSession } from '../../support/mcp.js';

// The gateway's fast path for a tools/call the rules pass (server/src/mcp/pass-through.ts): the
// client's request relayed to the upstream's session and the answer streamed back. The upstream
// here (the SDK's Server) records the JSON-RPC id of every call it gets: a relayed call arrives
// with the gateway's string id, one the SDK path forwards with its client's number. What the
// pass-through promises (docs/MCP.md) is checked on the relayed call: the result and an error
// unchanged, progress under the client's token and a log message on the call's stream, a cancel
// and a timeout told to the upstream.

let t: TestInstance;
let member: { id: string; email: string; token: string };
let up: Awaited<ReturnType<typeof recordingUpstream>>;

beforeAll(async () => {
  up = await recordingUpstream();
  t = await startTestInstance();
  member = await createMember(t);
  const r = await t.gql(`mutation($url: String!) { registerMcpServer(name: "fast", url: $url, rules: [{ condition: "", outcome: PASS }]) { id } }`, {
    url: up.url,
  });
  expect(r.errors).toBeUndefined();
});
afterAll(async () => {
  await t?.stop();
  await up?.close();
});

async function gateway(capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: 'fast-path-test', version: '1.0.0' }, { capabilities });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.instance.url}/mcp/servers/fast`), { requestInit: { headers: { authorization: `Bearer ${member.token}` } } }),
  );
  // The tool list read once: a call of a listed tool the rules pass is relayed from then on.
  await client.listTools();
  return client;
}

describe('MCP gateway: the fast path of a passed call', () => {
  it('a listed tool the rules pass is relayed; its result comes back unchanged', async () => {
    const g = await gateway();
    const r = await g.callTool({ name: 'echo', arguments: { message: 'fast' } });
    expect(r).toEqual({ content: [{ type: 'text', text: 'echo: fast' }], structuredContent: { said: 'fast' } });
    expect(up.calls.at(-1)).toMatchObject({ tool: 'echo', id: expect.stringMatching(/^taskbay-relay-\d+$/) });
    await g.close();
  });

  it('calls in flight at once in one session: each answer goes to its own call', async () => {
    const g = await gateway();
    const messages = Array.from({ length: 8 }, (_, i) => `m${i}`);
    const results = await Promise.all(messages.map((message) => g.callTool({ name: 'echo', arguments: { message } })));
    expect(results.map((r) => (r.structuredContent as { said: string }).said)).toEqual(messages);
    const ids = up.calls.slice(-8).map((c) => String(c.id));
    expect(new Set(ids).size).toBe(8);
    expect(ids.every((id) => id.startsWith('taskbay-relay-'))).toBe(true);
    await g.close();
  });

  it('a client that may be asked something by the server (roots) goes the SDK way', async () => {
    const g = await gateway({ roots: {} });
    expect((await g.callTool({ name: 'echo', arguments: { message: 'slow way' } })).isError).toBeFalsy();
    expect(typeof up.calls.at(-1)!.id).toBe('number');
    await g.close();
  });

  it("progress under the client's own token, and a log message, on the call's stream before the result", async () => {
    const g = await gateway();
    const seen: string[] = [];
    g.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(`log ${n.params.data}`));
    const r = await g.callTool({ name: 'steps', arguments: {} }, undefined, {
      onprogress: (p) => void seen.push(`progress ${p.progress}/${p.total}`),
    });
    seen.push('result');
    expect(r.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(seen).toEqual(['progress 1/2', 'log halfway', 'progress 2/2', 'result']);
    expect(up.calls.at(-1)!.progressToken).toMatch(/^taskbay-relay-progress-\d+$/);
    await g.close();
  });

  it.each([
    ['relayed', {}, /^taskbay-relay-/],
    ['through the SDK', { roots: {} }, /^\d+$/],
  ])("the upstream's JSON-RPC error reaches the client as it was sent (code, message, data): %s", async (_way, capabilities, upstreamId) => {
    const g = await gateway(capabilities);
    const text = await rawInSession(
      t,
      g,
      '/mcp/servers/fast',
      member.token,
      JSON.stringify({ jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'fail', arguments: {} } }),
    );
    const answer = JSON.parse(
      text
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6),
    );
    expect(answer).toEqual({ jsonrpc: '2.0', id: 'c-1', error: { code: -32099, message: 'it broke', data: { why: 'on purpose' } } });
    expect(String(up.calls.at(-1)!.id)).toMatch(upstreamId);
    await g.close();
  });

  it('a call the client cancels: the upstream is told (notifications/cancelled) and stops', async () => {
    const g = await gateway();
    const stop = new AbortController();
    const call = g.callTool({ name: 'wait', arguments: {} }, undefined, { signal: stop.signal });
    await up.waiting();
    stop.abort('enough');
    await expect(call).rejects.toThrow();
    expect(await up.cancelled()).toBe(true);
    await g.close();
  });

  it('a call that outlasts upstreamTimeoutSeconds: a timeout error for the client; the upstream is told', async () => {
    const limits = MCP_GATEWAY_LIMITS as { upstreamTimeoutSeconds: number };
    const before = limits.upstreamTimeoutSeconds;
    limits.upstreamTimeoutSeconds = 1;
    try {
      const g = await gateway();
      await expect(g.callTool({ name: 'wait', arguments: {} }, undefined, { timeout: 30_000 })).rejects.toThrow(/Request timed out/);
      expect(await up.cancelled()).toBe(true);
      await g.close();
    } finally {
      limits.upstreamTimeoutSeconds = before;
    }
  });
});

/** An MCP server on the SDK that notes each call's JSON-RPC id and progress token. */
async function recordingUpstream() {
  const calls: { tool: string; id: string | number; progressToken: unknown }[] = [];
  let heardWait: () => void = () => {};
  let waitStarted = new Promise<void>((r) => (heardWait = r));
  let heardCancel: (aborted: boolean) => void = () => {};
  let cancel = new Promise<boolean>((r) => (heardCancel = r));
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer(async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      const mcp = new Server({ name: 'recorder', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
      const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: ['echo', 'steps', 'fail', 'wait'].map(tool) }));
      mcp.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        const progressToken = request.params._meta?.progressToken;
        calls.push({ tool: request.params.name, id: extra.requestId, progressToken });
        switch (request.params.name) {
          case 'echo': {
            const said = String(request.params.arguments?.message);
            return { content: [{ type: 'text', text: `echo: ${said}` }], structuredContent: { said } };
          }
          case 'steps':
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: progressToken!, progress: 1, total: 2 } });
            await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'halfway' } });
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: progressToken!, progress: 2, total: 2 } });
            return { content: [{ type: 'text', text: 'done' }] };
          case 'fail':
            // The SDK answers with the thrown error's code, message and data.
            throw Object.assign(new Error('it broke'), { code: -32099, data: { why: 'on purpose' } });
          default: {
            // `wait`: until the gateway cancels it.
            heardWait();
            await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
            heardCancel(extra.signal.aborted);
            return { content: [] };
          }
        }
      });
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    /** Resolves when a `wait` call has arrived (then expects the next). */
    async waiting() {
      await waitStarted;
      waitStarted = new Promise<void>((r) => (heardWait = r));
    },
    /** Resolves when a `wait` call was cancelled (then expects the next). */
    async cancelled() {
      const v = await cancel;
      cancel = new Promise<boolean>((r) => (heardCancel = r));
      return v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
