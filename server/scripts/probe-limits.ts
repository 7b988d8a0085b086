// Sends the requests that used to stall or exhaust Taskbay (see the security review) to a
// fresh instance on an embedded Postgres in a temporary directory, loopback only, each while
// /healthz is polled, and prints how fast each was refused and the worst /healthz latency
// meanwhile. Exits non-zero when any of them is not refused, or takes 100 ms or more.
//
//   npx tsx server/scripts/probe-limits.ts
//
// The server runs in a child process (this file with --serve), so a blocked event loop shows
// up as /healthz latency instead of stalling the measurements. TASKBAY_GRAPHQL_* and
// TASKBAY_WS_* from the environment apply, so other limits can be probed the same way.

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
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', TASKBAY_ADMIN_TOKEN: adminToken, TASKBAY_DATA_DIR: dir });
  // The job worker plays no part in these requests.
  const instance = await startInstance(config, db.appUrl, { worker: false, migrationDatabaseUrl: db.ownerUrl });
  process.stdout.write(`${JSON.stringify({ url: instance.url, adminToken })}\n`);
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
];

interface Outcome {
  probe: string;
  bytes: number;
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

async function run(url: string, token: string, probe: Probe): Promise<Outcome> {
  const body = probe.body();
  const poller = startPoller(url);
  await new Promise((r) => setTimeout(r, 50));
  const { status, atMs, json } = await post(url, token, body);
  await new Promise((r) => setTimeout(r, 50));
  const worst = await poller.stop();
  const error = json?.errors?.[0];
  const code = error?.extensions?.code ?? '-';
  const refused = typeof status === 'number' && code === 'BAD_USER_INPUT' && json?.data == null;
  return {
    probe: probe.name,
    bytes: Buffer.byteLength(body),
    status,
    code,
    reason: error?.extensions?.reason ?? (error ? String(error.message).slice(0, 60) : '-'),
    refusedMs: Math.round(atMs),
    worstHealthzMs: Math.round(worst),
    ok: refused && atMs < REFUSAL_BUDGET_MS,
  };
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
        if (l.startsWith('{')) resolve(l);
        else console.log(l);
      });
      child.once('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready`)));
    });
    const { url, adminToken } = JSON.parse(line) as { url: string; adminToken: string };
    console.log(`Taskbay at ${url} (embedded Postgres in ${dir})\n`);
    // A server that has answered before (the first request compiles the schema's validation).
    const warm = await post(url, adminToken, JSON.stringify({ query: '{ viewer { email } }' }));
    if (warm.status !== 200 || warm.json?.errors) throw new Error(`warm-up query failed: ${warm.status} ${JSON.stringify(warm.json)}`);
    const outcomes: Outcome[] = [];
    for (const probe of PROBES) outcomes.push(await run(url, adminToken, probe));
    console.table(outcomes);
    const failed = outcomes.filter((o) => !o.ok);
    if (failed.length) {
      console.log(`\nFAIL: not refused within ${REFUSAL_BUDGET_MS} ms: ${failed.map((o) => o.probe).join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log(`\nOK: every probe refused with BAD_USER_INPUT in under ${REFUSAL_BUDGET_MS} ms`);
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
