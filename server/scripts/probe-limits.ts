// Sends the requests that used to stall or exhaust Taskbay (see the security review) to a
// fresh instance on an embedded Postgres in a temporary directory, loopback only, each while
// /healthz is polled, and prints how fast each was refused and the worst /healthz latency
// meanwhile. Exits non-zero when any of them is not refused, or takes 100 ms or more. A probe
// that is answered by design (a request opening under a hostile stored policy condition) must
// show in its answer that the attack was bounded, and /healthz must answer within 100 ms
// throughout.
//
//   npx tsx server/scripts/probe-limits.ts
//
// The server runs in a child process (this file with --serve), so a blocked event loop shows
// up as /healthz latency instead of stalling the measurements. TASKBAY_GRAPHQL_* and
// TASKBAY_WS_* from the environment apply, so other limits can be probed the same way.
//
// Besides single requests, floods of what one client may hold open (graphql/connection-caps.ts):
// the room one address or token has for sockets and streams is filled and held, then more are
// sent past it, one after another, and the slowest refusal is what counts.

import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { REVIEWER_CONDITION } from '../test/support/hostile-conditions.js';
import WebSocket from 'ws';

const REFUSAL_BUDGET_MS = 100;
const PROBE_TIMEOUT_MS = 30_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function serve(dir: string): Promise<void> {
  const [{ startEmbeddedPostgres }, { startInstance }, { loadConfig }] = await Promise.all([
    import('../src/db/embedded.js'),
    import('../src/app.js'),
    import('../src/config.js'),
  ]);
  const db = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false });
  const adminToken = `tb_admin_${randomUUID()}`;
  const config = loadConfig({
    // The anonymous-socket flood holds its room of sockets that never authenticate for the whole
    // flood: the server's grace (3 s) would free it midway on a slow machine. The grace itself
    // is shown by server/test/integration/graphql/ws-limits.test.ts.
    TASKBAY_WS_AUTH_GRACE_MS: '60000',
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    TASKBAY_ADMIN_TOKEN: adminToken,
    TASKBAY_DATA_DIR: dir,
  });
  // The job worker plays no part in these requests.
  const instance = await startInstance(config, db.appUrl, { worker: false, migrationDatabaseUrl: db.ownerUrl });
  process.stdout.write(`${JSON.stringify({ url: instance.url, adminToken, appUrl: db.appUrl })}\n`);
  const stop = async () => {
    await instance.stop();
    await db.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

interface Probe {
  name: string;
  body: () => string;
  /** Run before the probe (and before /healthz is polled). */
  setup?: (server: Server) => Promise<void>;
  /**
   * For a request that is answered rather than refused: why its answer shows the attack bounded,
   * or null when it does not.
   */
  bounded?: (json: any) => string | null;
}

interface Server {
  url: string;
  adminToken: string;
  /** The database as Taskbay's own (app role) login: what a tamperer with DATABASE_URL has. */
  appUrl: string;
}

const AGENT_ID = Buffer.from('Agent:00000000-0000-4000-8000-000000000000').toString('base64');

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

const PROBES: Probe[] = [
  {
    name: '60 KB: viewer { email } x10,000',
    body: () => JSON.stringify({ query: `{ viewer { ${'email '.repeat(10_000)}} }` }),
  },
  {
    name: '2.2 MB query (one long selection)',
    body: () => JSON.stringify({ query: `{ viewer { ${'email '.repeat(370_000)}} }` }),
  },
  {
    name: '5,000 aliased approvals(first: i)',
    body: () =>
      JSON.stringify({
        query: `{ ${Array.from({ length: 5000 }, (_, i) => `a${i}:approvals(first:${(i % 100) + 1}){edges{cursor}}`).join(' ')} }`,
      }),
  },
  {
    name: '2,000-deep variables object',
    body: () =>
      JSON.stringify({
        query: `mutation($data: JSON) { startTask(input: { agentId: "${AGENT_ID}", data: $data }) { id } }`,
        variables: { data: nested(2000) },
      }),
  },
  {
    name: '2,000-deep JSON literal',
    body: () =>
      JSON.stringify({
        query: `mutation { startTask(input: { agentId: "${AGENT_ID}", data: ${'{a:'.repeat(2000)}1${'}'.repeat(2000)} }) { id } }`,
      }),
  },
  {
    name: '10 MiB pagination cursor',
    body: () => JSON.stringify({ query: `{ approvals(first: 1, after: "${'A'.repeat(10 * 1024 * 1024)}") { edges { cursor } } }` }),
  },
  {
    name: '158-char CEL condition (split/map/join, cel.bind doubling) saved',
    body: () =>
      JSON.stringify({
        query: 'mutation($c: String!) { createPolicy(input: { name: "fast lane", condition: $c }) { id } }',
        variables: { c: REVIEWER_CONDITION },
      }),
  },
  {
    name: 'the same condition stored by SQL; 20,000-char request',
    setup: storeReviewerCondition,
    body: () =>
      JSON.stringify({
        query: `mutation($action: JSON!) { createApproval(input: { title: "Import", risk: LOW, action: $action }) { policy { name conditionError } } }`,
        variables: { action: { kind: 'send_message', text: 'x'.repeat(20_000) } },
      }),
    bounded: (json) => {
      const policy = json?.data?.createApproval?.policy;
      return policy?.name === 'production' && /fast lane.*does not compile/.test(policy.conditionError ?? '') ? 'not evaluated: strictest policy' : null;
    },
  },
];

/** A strict catch-all through the API, then the reviewer's condition first in the order, written with the app role's login. */
async function storeReviewerCondition(server: Server): Promise<void> {
  const created = await post(
    server.url,
    server.adminToken,
    JSON.stringify({
      query: 'mutation { createPolicy(input: { name: "production", condition: "", allowedOutcomes: [APPROVE, REJECT], quorum: { approvals: 2 } }) { id } }',
    }),
  );
  if (created.json?.errors) throw new Error(`creating the strict policy failed: ${JSON.stringify(created.json.errors)}`);
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: server.appUrl });
  await db.connect();
  try {
    const rules = {
      allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'],
      excludeTaskStarter: false,
      quorum: { approvals: 1, fromGroupIds: [], rejectionRejects: true },
      escalation: null,
    };
    const id = randomUUID();
    await db.query('begin');
    await db.query(
      `insert into policy (id, tenant_id, name, position, enabled, current_version) select $1, tenant_id, 'fast lane', -1, true, 1 from app_user where email = 'admin@localhost'`,
      [id],
    );
    await db.query(`insert into policy_version (id, policy_id, version, condition, rules) values ($1, $2, 1, $3, $4)`, [
      randomUUID(),
      id,
      REVIEWER_CONDITION,
      JSON.stringify(rules),
    ]);
    await db.query('commit');
  } finally {
    await db.end();
  }
}

interface Outcome {
  probe: string;
  bytes: number | string;
  status: number | string;
  code: string;
  reason: string;
  refusedMs: number;
  worstHealthzMs: number;
  ok: boolean;
}

// /healthz is polled from a worker thread: its own event loop, so the time this thread spends
// building and writing a 10 MiB body is not counted as the server's.
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let worst = 0, polling = true;
parentPort.on('message', () => { polling = false; });
(async () => {
  while (polling) {
    const t0 = performance.now();
    await new Promise((resolve) => {
      const req = http.get(workerData.url + '/healthz', { agent }, (res) => { res.resume(); res.on('end', resolve); });
      req.on('error', resolve);
    });
    worst = Math.max(worst, performance.now() - t0);
    await new Promise((r) => setTimeout(r, 2));
  }
  agent.destroy();
  parentPort.postMessage(worst);
})();
`;

function startPoller(url: string): { stop(): Promise<number> } {
  const worker = new Worker(POLLER, { eval: true, workerData: { url } });
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (worst: number) => {
          void worker.terminate();
          resolve(worst);
        });
        worker.postMessage('stop');
      }),
  };
}

/** POSTs a body; resolves at the response's headers (the refusal), then reads its JSON. */
function post(url: string, token: string, text: string): Promise<{ status: number | string; atMs: number; json: any }> {
  const body = Buffer.from(text);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: `Bearer ${token}` },
      timeout: PROBE_TIMEOUT_MS,
    });
    req.once('response', (res) => {
      const atMs = performance.now() - t0;
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (answer += c));
      res.on('end', () => {
        let json: unknown = null;
        try {
          json = JSON.parse(answer);
        } catch {
          // not JSON: reported as such
        }
        resolve({ status: res.statusCode ?? 0, atMs, json });
      });
    });
    req.once('timeout', () => req.destroy(new Error(`no answer in ${PROBE_TIMEOUT_MS} ms`)));
    // The server may answer and close before the whole body is written: that is the point.
    req.once('error', (e) => resolve({ status: e.message, atMs: performance.now() - t0, json: null }));
    req.end(body);
  });
}

async function run(server: Server, probe: Probe): Promise<Outcome> {
  const { url, adminToken: token } = server;
  await probe.setup?.(server);
  const body = probe.body();
  const poller = startPoller(url);
  await new Promise((r) => setTimeout(r, 50));
  const { status, atMs, json } = await post(url, token, body);
  await new Promise((r) => setTimeout(r, 50));
  const worst = await poller.stop();
  const error = json?.errors?.[0];
  const code = error?.extensions?.code ?? '-';
  const bounded = probe.bounded && typeof status === 'number' && !error ? probe.bounded(json) : null;
  const refused = probe.bounded ? bounded !== null : typeof status === 'number' && code === 'BAD_USER_INPUT' && json?.data == null;
  return {
    probe: probe.name,
    bytes: Buffer.byteLength(body),
    status,
    code: bounded ? 'bounded' : code,
    reason: bounded ?? error?.extensions?.reason ?? (error ? String(error.message).slice(0, 60) : '-'),
    refusedMs: Math.round(atMs),
    worstHealthzMs: Math.round(worst),
    // An answered request's own time is that of opening a request (a transaction, audit events);
    // what the attack could cost is the event loop, which /healthz shows.
    ok: refused && (probe.bounded ? worst < REFUSAL_BUDGET_MS : atMs < REFUSAL_BUDGET_MS),
  };
}

// ---------------------------------------------------------------------------------------------
// Floods of connections (issue 22): anonymous WebSockets and SSE subscriptions from one address.

/** How many connections each flood sends past the room the server gives (one after another). */
const FLOOD_BURST = 200;

/** Runs `attempt` FLOOD_BURST times in a row; the results. */
async function inARow<T>(attempt: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < FLOOD_BURST; i++) out.push(await attempt());
  return out;
}

interface Flood {
  name: string;
  /** Fills the room, sends the burst; the slowest refusal and what it was. */
  run(url: string, token: string, caps: FloodCaps): Promise<{ status: number | string; code: string; reason: string; refusedMs: number; refused: boolean }>;
}

interface FloodCaps {
  maxUnauthenticatedPerAddress: number;
  maxSubscriptions: number;
}

const held: { close(): void }[] = [];

/** A raw graphql-transport-ws upgrade: resolves when it opens (the socket) or is refused (the status and body), with the time it took. */
function upgrade(url: string): Promise<{ ws?: WebSocket; status?: number; body?: string; ms: number }> {
  const t0 = performance.now();
  const ws = new WebSocket(`${url.replace('http:', 'ws:')}/graphql`, 'graphql-transport-ws');
  return new Promise((resolve) => {
    ws.once('open', () => {
      held.push({ close: () => ws.terminate() });
      resolve({ ws, ms: performance.now() - t0 });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t0 }));
    });
    ws.once('error', (e) => resolve({ status: e.message, ms: performance.now() - t0 } as never));
  });
}

/** An SSE subscription: resolves at its first event (a refusal, or an event) or after `waitMs` when none comes (it was let in). */
function sseSubscription(url: string, token: string, waitMs: number): Promise<{ status: number | string; first: any; ms: number }> {
  const t0 = performance.now();
  const controller = new AbortController();
  held.push({ close: () => controller.abort() });
  return (async () => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'subscription { approvalRequested { id } }' }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), waitMs).unref());
    for (;;) {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (chunk === null || chunk.done) return { status: res.status, first: null, ms: performance.now() - t0 };
      buffer += decoder.decode(chunk.value, { stream: true });
      const data = /^data: ?(.*)$/m.exec(buffer)?.[1];
      if (data) return { status: res.status, first: JSON.parse(data), ms: performance.now() - t0 };
    }
  })().catch((e: Error) => ({ status: e.message, first: null, ms: performance.now() - t0 }));
}

const FLOODS: Flood[] = [
  {
    name: `anonymous WebSockets: the address's room held, ${FLOOD_BURST} more upgrades`,
    async run(url, _token, caps) {
      // The room: sockets that never authenticate (the server closes them after its grace).
      for (let i = 0; i < caps.maxUnauthenticatedPerAddress; i++) {
        const r = await upgrade(url);
        if (!r.ws) throw new Error(`socket ${i + 1} of the room was refused: ${r.status} ${r.body}`);
      }
      const burst = await inARow(() => upgrade(url));
      const slowest = burst.reduce((a, b) => (b.ms > a.ms ? b : a));
      const allRefused = burst.every((r) => r.status === 429);
      return { status: slowest.status ?? 'opened', code: '-', reason: (slowest.body ?? '').slice(0, 60), refusedMs: slowest.ms, refused: allRefused };
    },
  },
  {
    name: 'an anonymous connection_init (closed, never acknowledged)',
    async run(url) {
      // The previous flood's sockets are counted out as the server sees them close.
      let ws: WebSocket | undefined;
      for (let i = 0; i < 100 && !ws; i++) {
        ws = (await upgrade(url)).ws;
        if (!ws) await new Promise((r) => setTimeout(r, 50));
      }
      if (!ws) throw new Error('the socket was refused before its connection_init');
      const t0 = performance.now();
      const outcome = await new Promise<{ code: number | string; reason: string }>((resolve) => {
        ws.once('message', (m) => resolve({ code: `acknowledged: ${String(m).slice(0, 40)}`, reason: '' }));
        ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }));
        ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
      });
      return { status: outcome.code, code: '-', reason: outcome.reason.slice(0, 60), refusedMs: performance.now() - t0, refused: outcome.code === 4403 };
    },
  },
  {
    name: `SSE subscriptions of one token: its room held, ${FLOOD_BURST} more`,
    async run(url, token, caps) {
      // The room: let in at the rate the server allows, each one second after the previous allowance.
      let letIn = 0;
      while (letIn < caps.maxSubscriptions) {
        const r = await sseSubscription(url, token, 300);
        if (r.first === null) letIn += 1;
        else if (r.first?.errors?.[0]?.extensions?.reason === 'RATE_LIMITED') await new Promise((res) => setTimeout(res, 1000));
        else throw new Error(`SSE subscription ${letIn + 1} of the room: ${JSON.stringify(r.first)}`);
      }
      // Past the room: each refused with its first event.
      await new Promise((res) => setTimeout(res, 1000));
      const burst = await inARow(() => sseSubscription(url, token, 5000));
      const slowest = burst.reduce((a, b) => (b.ms > a.ms ? b : a));
      const error = slowest.first?.errors?.[0];
      const allRefused = burst.every((r) => r.first?.errors?.[0]?.extensions?.code === 'BAD_USER_INPUT');
      return {
        status: slowest.status,
        code: error?.extensions?.code ?? '-',
        reason: error?.extensions?.reason ?? (slowest.first === null ? 'let in' : '-'),
        refusedMs: slowest.ms,
        refused: allRefused,
      };
    },
  },
];

async function runFlood(url: string, token: string, caps: FloodCaps, flood: Flood): Promise<Outcome> {
  const poller = startPoller(url);
  await new Promise((r) => setTimeout(r, 50));
  try {
    const r = await flood.run(url, token, caps);
    await new Promise((res) => setTimeout(res, 50));
    const worst = await poller.stop();
    return {
      probe: flood.name,
      bytes: '-',
      status: r.status,
      code: r.code,
      reason: r.reason,
      refusedMs: Math.round(r.refusedMs),
      worstHealthzMs: Math.round(worst),
      ok: r.refused && r.refusedMs < REFUSAL_BUDGET_MS,
    };
  } finally {
    for (const h of held.splice(0)) h.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'taskbay-probe-'));
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      // The server may print other lines first (e.g. creating its audit key): wait for the JSON one.
      const rl = createInterface({ input: child.stdout! });
      rl.on('line', (l) => {
        // Log lines are JSON too: the server's own line is the one naming its URL and token.
        if (l.startsWith('{') && l.includes('"adminToken"')) resolve(l);
        else console.log(l);
      });
      child.once('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready`)));
    });
    const server = JSON.parse(line) as Server;
    const { url, adminToken } = server;
    console.log(`Taskbay at ${url} (embedded Postgres in ${dir})\n`);
    // A server that has answered before (the first request compiles the schema's validation).
    const warm = await post(url, adminToken, JSON.stringify({ query: '{ viewer { email } }' }));
    if (warm.status !== 200 || warm.json?.errors) throw new Error(`warm-up query failed: ${warm.status} ${JSON.stringify(warm.json)}`);
    // And has opened a request as long as the probe's and refused a policy condition before
    // (the CEL parser's first run): what is measured is the attack, not a cold path.
    const opened = await post(
      url,
      adminToken,
      JSON.stringify({
        query: 'mutation($action: JSON!) { createApproval(input: { title: "Warm-up", risk: LOW, action: $action }) { id } }',
        variables: { action: { kind: 'send_message', text: 'w'.repeat(20_000) } },
      }),
    );
    if (opened.json?.errors) throw new Error(`warm-up request failed: ${JSON.stringify(opened.json.errors)}`);
    await post(url, adminToken, JSON.stringify({ query: 'mutation { createPolicy(input: { name: "warm-up", condition: "risk >" }) { id } }' }));
    const outcomes: Outcome[] = [];
    for (const probe of PROBES) outcomes.push(await run(server, probe));
    const { loadConfig } = await import('../src/config.js');
    const config = loadConfig({ ...process.env });
    const caps = { maxUnauthenticatedPerAddress: config.wsMaxUnauthenticatedPerAddress, maxSubscriptions: config.wsMaxSubscriptions };
    for (const flood of FLOODS) outcomes.push(await runFlood(url, adminToken, caps, flood));
    console.table(outcomes);
    const failed = outcomes.filter((o) => !o.ok);
    if (failed.length) {
      console.log(`\nFAIL: not refused (or bounded) within ${REFUSAL_BUDGET_MS} ms: ${failed.map((o) => o.probe).join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log(`\nOK: every probe refused (BAD_USER_INPUT, or the socket refused or closed) in under ${REFUSAL_BUDGET_MS} ms`);
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3]!);
else await main();
