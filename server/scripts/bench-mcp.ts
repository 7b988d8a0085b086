// `npm run bench`, the MCP gateway (issue 25, "What must be shown"; docs/MCP.md "The gateway"),
// with the official SDK client (Client + StreamableHTTPClientTransport), loopback only:
//
// 1. Pass-through overhead: a tools/call no rule holds (server-everything's `echo`, one rule
//    `{ condition: "", outcome: PASS }`) through the gateway, against the same call sent directly
//    to the same upstream, in the same run. One connected client each; the calls take turns one
//    by one (in an order that turns every round) after a warm-up, so drift of the shared machine
//    falls on all alike. Targets: added p50 <= 2 ms, added p99 <= 5 ms (gateway minus direct,
//    each percentile of its own distribution). Beside them, the same call through a plain HTTP
//    relay in the server process (bench.ts /relay/: node:http piping the request and its answer,
//    no MCP): what any extra hop in that process adds on this machine, the floor under the
//    gateway's figure. The server's CPU per call is measured in blocks of one way each.
// 2. Approve -> the upstream receives the approved call: an MCP server built on the SDK (Server +
//    StreamableHTTPServerTransport) runs in this process and notes performance.now() when its
//    tool is called; the gateway holds every call to it (no rules: HOLD). Measured as the bench
//    measures approve -> agent receipt (bench.ts decisionReceipt): from the approve mutation's
//    HTTP answer; the time from just before sending it is reported beside it. Target: p99 <= 10 ms.
//
// server-everything runs in a process of its own (server/test/support/mcp-upstream.ts); the
// server under test is the bench's server child; the clients and the recording upstream run here.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startServerEverything } from '../test/support/mcp-upstream.js';

export interface McpBench {
  /** Taskbay's URL (the bench's server child). */
  url: string;
  /** The same upstream through a plain HTTP relay in the server process (bench.ts /relay/). */
  relayUrl(upstreamUrl: string): string;
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string): Promise<T>;
  /** The server process's CPU time so far (user + system), ms. */
  serverCpuMs(): Promise<number>;
  /** SQL statements per request of `op` (bench.ts statementsPerRequest). */
  statementsPerRequest(op: () => Promise<unknown>): Promise<unknown>;
  /** The statements sent while `op` runs, by request id (bench.ts statementsByRequest). */
  statementsByRequest(op: () => Promise<unknown>): Promise<Record<string, { pool: number; listener: number }>>;
  pct(xs: number[], p: number): number;
  waitMs: number;
}

export interface McpBenchSizes {
  /** Pass-through calls measured, each way (after `warmup` each way). */
  calls: number;
  warmup: number;
  /** Held calls approved (after 2 to warm up). */
  held: number;
}

/** The bounds, checked against figures of the same run. */
export const MCP_TARGETS = { addedP50Ms: 2, addedP99Ms: 5, approveToUpstreamP99Ms: 10 };

const REQUEST_ID = /(QXBwcm92YWw6[A-Za-z0-9+/=]+)/;
const REGISTER = `mutation($name: String!, $url: String!, $rules: [McpCallRuleInput!]) {
  registerMcpServer(name: $name, url: $url, rules: $rules) { id gatewayPath } }`;
const APPROVE = `mutation($id: ID!, $revision: Int!, $digest: String!) {
  approve(input: { approvalId: $id, revision: $revision, digest: $digest }) { id } }`;
const r1 = (x: number) => Math.round(x * 10) / 10;

function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

async function connect(url: string, token?: string, more: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'taskbay-bench', version: '1.0.0' });
  const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...more };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

function summary(xs: number[], pct: McpBench['pct']) {
  return { n: xs.length, p50Ms: r1(pct(xs, 50)), p90Ms: r1(pct(xs, 90)), p99Ms: r1(pct(xs, 99)), maxMs: r1(Math.max(...xs)), minMs: r1(Math.min(...xs)) };
}

/** A member of the admin's tenant with an API token: the MCP client (the admin approves its held calls). */
async function benchMember(b: McpBench): Promise<string> {
  const email = `bench-mcp-${randomUUID().slice(0, 8)}@example.test`;
  const { createUser } = await b.gql('mutation($e: String!) { createUser(input: { email: $e, name: $e, role: MEMBER }) { id } }', { e: email });
  const { createApiToken } = await b.gql('mutation($u: ID) { createApiToken(input: { userId: $u, label: "bench mcp" }) { token } }', { u: createUser.id });
  return createApiToken.token as string;
}

export async function mcpGateway(b: McpBench, sizes: McpBenchSizes) {
  const token = await benchMember(b);
  return { passThrough: await passThrough(b, token, sizes), approveToUpstream: await approveToUpstream(b, token, sizes) };
}

async function passThrough(b: McpBench, token: string, sizes: McpBenchSizes) {
  const upstream = await startServerEverything();
  const clients: Client[] = [];
  try {
    await b.gql(REGISTER, { name: 'bench-everything', url: upstream.url, rules: [{ condition: '', outcome: 'PASS' }] });
    const gateway = await connect(`${b.url}/mcp/servers/bench-everything`, token);
    clients.push(gateway);
    const direct = await connect(upstream.url);
    clients.push(direct);
    const relay = await connect(b.relayUrl(upstream.url));
    clients.push(relay);
    const via = { gateway, direct, relay };
    type Way = keyof typeof via;
    const args = { message: 'bench: a call no rule holds' };
    const call = (c: Client) => bounded(c.callTool({ name: 'echo', arguments: args }), b.waitMs, 'echo');
    // The same answer every way, or the comparison means nothing.
    const d0 = JSON.stringify(await call(direct));
    for (const way of ['gateway', 'relay'] as const) {
      const r = JSON.stringify(await call(via[way]));
      if (r !== d0) throw new Error(`echo through the ${way} answered ${r.slice(0, 200)}, directly ${d0.slice(0, 200)}`);
    }
    for (let i = 0; i < sizes.warmup; i++) for (const c of [gateway, relay, direct]) await call(c);
    const times: Record<Way, number[]> = { gateway: [], direct: [], relay: [] };
    // Each round calls every way once, in an order that turns each round.
    const orders: Way[][] = [
      ['gateway', 'direct', 'relay'],
      ['direct', 'relay', 'gateway'],
      ['relay', 'gateway', 'direct'],
    ];
    const t0 = performance.now();
    for (let i = 0; i < sizes.calls; i++) {
      for (const way of orders[i % orders.length]!) {
        const s = performance.now();
        await call(via[way]);
        times[way].push(performance.now() - s);
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    // The server process's CPU time per call, each way in a block of its own (the direct calls cost it nothing).
    const cpuPerCall = async (c: Client, n = Math.min(300, sizes.calls)) => {
      const before = await b.serverCpuMs();
      for (let i = 0; i < n; i++) await call(c);
      return Math.round((((await b.serverCpuMs()) - before) / n) * 100) / 100;
    };
    const serverCpuMsPerCall = { gateway: await cpuPerCall(gateway), relay: await cpuPerCall(relay) };
    const added = (way: Way, p: number) => r1(b.pct(times[way], p) - b.pct(times.direct, p));
    const addedP50Ms = added('gateway', 50);
    const addedP99Ms = added('gateway', 99);
    return {
      calls: sizes.calls,
      warmup: sizes.warmup,
      seconds: r1(seconds),
      gateway: summary(times.gateway, b.pct),
      direct: summary(times.direct, b.pct),
      relay: summary(times.relay, b.pct),
      addedP50Ms,
      addedP99Ms,
      relayAddedP50Ms: added('relay', 50),
      relayAddedP99Ms: added('relay', 99),
      serverCpuMsPerCall,
      statements: await b.statementsPerRequest(() => call(gateway)),
      targets: {
        addedP50: { boundMs: MCP_TARGETS.addedP50Ms, met: addedP50Ms <= MCP_TARGETS.addedP50Ms },
        addedP99: { boundMs: MCP_TARGETS.addedP99Ms, met: addedP99Ms <= MCP_TARGETS.addedP99Ms },
      },
    };
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await upstream.stop();
  }
}

/** The held client's X-Request-Id: the statements its requests send are found by it. */
const HELD_REQUEST_ID = 'bench-mcp-held';
/** Held calls whose statements after the decision are counted (after the timed ones). */
const COUNTED_HELD = 5;

async function approveToUpstream(b: McpBench, token: string, sizes: McpBenchSizes) {
  const upstream = await recordingUpstream();
  let client: Client | null = null;
  try {
    // No rules: every call is held (HOLD is the default).
    await b.gql(REGISTER, { name: 'bench-held', url: upstream.url, rules: [] });
    client = await connect(`${b.url}/mcp/servers/bench-held`, token, { 'x-request-id': HELD_REQUEST_ID });
    const held = client;
    let waitPolls = 0;
    /** One held call, approved once it waits; `around` runs the approval (to count its statements). */
    const heldCall = async (n: number, around = (decide: () => Promise<void>) => decide()) => {
      let heard!: (id: string) => void;
      const heardId = new Promise<string>((r) => (heard = r));
      // Unique arguments: the same call asked again would resume the live request instead.
      const result = held.callTool({ name: 'record', arguments: { n } }, undefined, {
        timeout: b.waitMs,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          const m = p.message?.match(REQUEST_ID)?.[1];
          if (m) heard(m);
        },
      });
      result.catch(() => {});
      const id = await bounded(heardId, b.waitMs, `held call ${n}: its request`);
      // Approved once the call waits for it (mcpCall.waiting: the gateway noted the wait and
      // subscribes next), as a person's decision comes long after; the poll is bounded.
      let a: { revision: number; digest: string; mcpCall: { waiting: boolean } | null };
      for (let polls = 0; ; polls++) {
        ({ node: a } = await b.gql(`query($id: ID!) { node(id: $id) { ... on Approval { revision digest mcpCall { waiting } } } }`, { id }));
        if (a.mcpCall?.waiting) break;
        if (polls >= 500) throw new Error(`held call ${n}: never waiting`);
        waitPolls++;
        await new Promise((r) => setTimeout(r, 2));
      }
      const times = { sent: 0, answered: 0, at: 0 };
      await around(async () => {
        const arrived = upstream.arrival(n, b.waitMs);
        times.sent = performance.now();
        await b.gql(APPROVE, { id, revision: a.revision, digest: a.digest });
        times.answered = performance.now();
        times.at = await arrived;
        const r = await bounded(result, b.waitMs, `held call ${n}: its result`);
        if (r.isError) throw new Error(`held call ${n}: ${JSON.stringify(r.content).slice(0, 300)}`);
      });
      return { fromSent: times.at - times.sent, fromAnswer: times.at - times.answered };
    };
    const fromSent: number[] = [];
    const fromAnswer: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < sizes.held + 2; i++) {
      const t = await heldCall(i);
      if (i < 2) continue; // the first two warm the gateway's path and the upstream connection
      fromSent.push(t.fromSent);
      fromAnswer.push(t.fromAnswer);
    }
    // The statements from the decision to the forward and its answer: the held call's request
    // (after it waits) and the approve mutation's, each per held call.
    const counted = { heldCall: { pool: 0, listener: 0 }, approve: { pool: 0, listener: 0 } };
    for (let i = 0; i < COUNTED_HELD; i++) {
      await heldCall(sizes.held + 2 + i, async (decide) => {
        const byReqId = await b.statementsByRequest(decide);
        for (const [reqId, c] of Object.entries(byReqId)) {
          const into = reqId === HELD_REQUEST_ID ? counted.heldCall : counted.approve;
          into.pool += c.pool;
          into.listener += c.listener;
        }
      });
    }
    const per = (c: { pool: number; listener: number }) => ({ pool: r1(c.pool / COUNTED_HELD), listener: r1(c.listener / COUNTED_HELD) });
    const fromAnswerSummary = summary(fromAnswer, b.pct);
    return {
      seconds: r1((performance.now() - t0) / 1000),
      fromAnswer: fromAnswerSummary,
      fromSent: summary(fromSent, b.pct),
      /** Approvals the upstream received before the approve mutation's answer reached the bench. */
      beforeAnswer: fromAnswer.filter((x) => x < 0).length,
      waitPolls,
      statementsPerHeldCall: { calls: COUNTED_HELD, afterTheDecision: per(counted.heldCall), approveMutation: per(counted.approve) },
      target: {
        boundMs: MCP_TARGETS.approveToUpstreamP99Ms,
        measuredFrom: 'approve answered',
        met: fromAnswerSummary.p99Ms <= MCP_TARGETS.approveToUpstreamP99Ms,
      },
    };
  } finally {
    await client?.close().catch(() => {});
    await upstream.close();
  }
}

/**
 * An MCP server on the official SDK (as cooperatingUpstream() of gateway.test.ts) with one tool,
 * `record`, which notes performance.now() on arrival, by its argument `n`.
 */
async function recordingUpstream() {
  const arrivals = new Map<number, number>();
  const waiters = new Map<number, (at: number) => void>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      const mcp = new Server({ name: 'bench-recorder', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: 'record', description: 'Notes when it is called', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
        const at = performance.now();
        const n = Number((request.params.arguments as { n?: unknown } | undefined)?.n);
        arrivals.set(n, at);
        waiters.get(n)?.(at);
        return { content: [{ type: 'text', text: `recorded ${n}` }] };
      });
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  };
  const server = createServer((req, res) => void onRequest(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    /** When the call with argument n arrived (a promise made before the approve is sent). */
    arrival(n: number, ms: number): Promise<number> {
      const known = arrivals.get(n);
      if (known !== undefined) return Promise.resolve(known);
      return bounded(new Promise<number>((r) => waiters.set(n, r)), ms, `the approved call ${n} at the upstream`).finally(() => waiters.delete(n));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
