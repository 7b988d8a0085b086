import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { DELIVER_JOB } from '../src/delivery/queue.js';
import { startFixtureAgent } from '../src/fixture-agent/server.js';
import type { ReceivedMessage } from '../src/fixture-agent/tasks.js';
import { gqlAt, startServerProcess, type ServerProcess } from '../test/support/server-process.js';

// `npm run soak` (issue 14, "Crash safety", the long run). Taskbay runs as a child process on an
// embedded Postgres this script owns; a fixture agent counts every messageId it receives. It
// drives approve -> deliver cycles and SIGKILLs the server at random moments: while a decision
// is in flight, while the delivery is being sent, and between the agent's receipt and the server's
// observation (the agent holds its answer). Once it SIGKILLs Postgres itself mid-delivery and
// starts it again under the running server. At the end it checks: every approved decision
// reached the agent, no messageId arrived twice as a new message, no request is in an
// impossible state, the audit chain verifies; and prints the figures. Loopback only; bounded in
// cycles and time (SOAK_DEADLINE_MINUTES); it stops by itself. Linux (reads /proc).
//
//   npm run soak -- [--cycles 200] [--kills 12] [--seed N]

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const CYCLES = Number(arg('--cycles') ?? 200);
const SERVER_KILLS = Number(arg('--kills') ?? 12);
const SEED = Number(arg('--seed') ?? Date.now() % 2 ** 31);
const DEADLINE = Date.now() + 30 * 60_000;
// A send cut off mid-way (a receipt kill, the Postgres kill) is taken over once its claim lapses
// (delivery/worker.ts DELIVERY_CLAIM, 10 s after its last renewal), after the restart.
const DELIVERY_WAIT_MS = 90_000;

type Phase = 'decision' | 'delivery' | 'receipt' | 'postgres';

// A seeded PRNG (mulberry32), so a run can be repeated with --seed.
let state = SEED >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const between = (min: number, max: number) => Math.floor(min + random() * (max - min + 1));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

function within<T>(what: string, p: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`soak: ${what} not within ${timeoutMs} ms`)), timeoutMs)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs: number, stepMs = 50): Promise<T> {
  const end = Math.min(Date.now() + timeoutMs, DEADLINE);
  let last: unknown = null;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(stepMs);
  }
  throw new Error(`soak: ${what} not within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
}

/** Kill moments: SERVER_KILLS cycles spread over the run, phases in turn, and one Postgres kill. */
function plan(): Map<number, Phase> {
  const phases: Phase[] = ['decision', 'delivery', 'receipt'];
  const slots = new Map<number, Phase>();
  const usable = CYCLES - 10;
  slots.set(Math.floor(CYCLES / 2), 'postgres');
  for (let k = 0; k < SERVER_KILLS; k++) {
    let cycle: number;
    do cycle = 5 + between(0, usable - 1);
    while (slots.has(cycle));
    slots.set(cycle, phases[k % phases.length]!);
  }
  return slots;
}

/** The postmaster of a data directory and its children (backends), from postmaster.pid and /proc. */
function postgresProcesses(pgDir: string): { postmaster: number; children: number[] } {
  const postmaster = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return { postmaster, children };
}

const alive = (pid: number) => existsSync(`/proc/${pid}`);

/** The Taskbay child process: started, SIGKILLed and restarted; an exit nobody asked for is counted. */
function serverControl(env: Record<string, string>, log: (line: string) => void) {
  let current: ServerProcess | null = null;
  const all: ServerProcess[] = [];
  let killing = false;
  let unexpectedExits = 0;
  const start = async () => {
    const s = await startServerProcess(env);
    current = s;
    all.push(s);
    void s.exited.then((code) => {
      if (killing || s !== current) return;
      unexpectedExits += 1;
      log(`soak: the server exited unexpectedly (${code}):\n${s.output().slice(-4000)}`);
    });
    return Date.now();
  };
  return {
    start,
    get url() {
      if (!current) throw new Error('soak: no server running');
      return current.url;
    },
    get unexpectedExits() {
      return unexpectedExits;
    },
    /** What every server process wrote, in order. */
    output: () => all.map((p) => p.output()).join('\n'),
    async kill() {
      killing = true;
      await current?.kill();
      killing = false;
    },
    async stop() {
      killing = true;
      await current?.stop();
    },
  };
}

async function main(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'taskbay-soak-'));
  chmodSync(dir, 0o755); // Postgres runs as the postgres user when we are root
  const pgRoot = join(dir, 'db');
  const pgPort = await freePort();
  const log = (line: string) => console.error(line);
  const db = { current: await startEmbeddedPostgres({ dir: pgRoot, port: pgPort, persistent: true, log }) };
  // The soak's own checks read as the superuser; the server runs as the app role, migrating as the owner.
  const databaseUrl = db.current.superuserUrl('taskbay');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => {}); // idle clients die with the Postgres kill
  // The agent records every message (agent.received; duplicate = "messageId already seen on that
  // task"); it answers approved messages after 0-150 ms, or holds the answer when asked to.
  let holdNext: { onHeld: (m: ReceivedMessage) => void; gate: Promise<void> } | null = null;
  const agent = await startFixtureAgent({
    async beforeReply(m) {
      if (!m.message.metadata?.approval) return;
      const h = holdNext;
      if (h) {
        holdNext = null;
        h.onHeld(m);
        await h.gate;
        return;
      }
      await sleep(between(0, 150));
    },
  });
  const holdAnswer = () => {
    let release!: () => void;
    let onHeld!: (m: ReceivedMessage) => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = new Promise<ReceivedMessage>((r) => (onHeld = r));
    holdNext = { onHeld, gate };
    return { held, release };
  };
  const adminToken = `tb_admin_${randomUUID()}`;
  const server = serverControl(
    {
      DATABASE_URL: db.current.appUrl,
      TASKBAY_MIGRATION_DATABASE_URL: db.current.ownerUrl,
      TASKBAY_ADMIN_TOKEN: adminToken,
      TASKBAY_DATA_DIR: join(dir, 'taskbay'),
    },
    log,
  );
  try {
    return await drive();
  } finally {
    await server.stop();
    await agent.close();
    await pool.end();
    await db.current.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  async function drive(): Promise<boolean> {
    const started = Date.now();
    const sql = async <T = any>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as T[];
    const gql = async (query: string, variables?: Record<string, unknown>) => {
      const r = await gqlAt(server.url, adminToken, query, variables);
      if (r.errors) throw new Error(`${query.slice(0, 40)}: ${JSON.stringify(r.errors)}`);
      return r.data as any;
    };
    const figures = {
      cycles: 0,
      approved: 0,
      serverKills: { decision: 0, delivery: 0, receipt: 0 } as Record<string, number>,
      postgresKills: 0,
      reApprovedAfterKill: 0,
      recoveries: {} as Record<string, number[]>,
    };

    await server.start();
    const agentId = (await gql(`mutation($url: String!) { registerAgent(input: { cardUrl: $url }) { id } }`, { url: agent.cardUrl('showcase') })).registerAgent
      .id as string;
    const open = async () => {
      const task = (await gql(`mutation($a: ID!) { startTask(input: { agentId: $a, text: "approve" }) { id } }`, { a: agentId })).startTask;
      const edges = (await gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges;
      const node = edges[0].node as { id: string; revision: number; digest: string };
      return { ...node, uuid: Buffer.from(node.id, 'base64').toString('utf8').split(':').slice(1).join(':') };
    };
    const approve = (a: { id: string; revision: number; digest: string }) =>
      gql(`mutation($id: ID!, $r: Int!, $d: String!) { approve(input: { approvalId: $id, revision: $r, digest: $d }) { id } }`, {
        id: a.id,
        r: a.revision,
        d: a.digest,
      });
    const deliveryStatus = async (uuid: string) => (await sql<{ status: string }>('select status from delivery where approval_id = $1', [uuid]))[0]?.status;

    const approvals: string[] = [];
    const slots = plan();
    console.log(`soak: ${CYCLES} cycles, ${SERVER_KILLS} server kills, 1 Postgres kill, seed ${SEED}`);

    for (let i = 0; i < CYCLES; i++) {
      if (Date.now() > DEADLINE) throw new Error('soak: deadline reached');
      const phase = slots.get(i);
      const a = await open();
      approvals.push(a.uuid);
      let restartedAt: number | null = null;

      if (!phase) {
        await approve(a);
      } else if (phase === 'decision') {
        // SIGKILL while the decision is in flight: it commits or it does not.
        const inFlight = approve(a).catch(() => null);
        await sleep(between(0, 40));
        await server.kill();
        await inFlight;
        restartedAt = await server.start();
      } else if (phase === 'delivery') {
        // SIGKILL right after the decision: its own send in flight or done, the fallback job queued.
        await approve(a);
        await sleep(between(0, 60));
        await server.kill();
        restartedAt = await server.start();
      } else if (phase === 'receipt') {
        // SIGKILL after the agent acted on the message, before the server saw its answer.
        const { held, release } = holdAnswer();
        await approve(a);
        await within('the agent to hold the approved message', held, 30_000);
        await server.kill();
        release();
        restartedAt = await server.start();
      } else {
        // SIGKILL Postgres while the agent holds the answer; the server keeps running.
        const { held, release } = holdAnswer();
        await approve(a);
        await within('the agent to hold the approved message', held, 30_000);
        const { postmaster, children } = postgresProcesses(join(pgRoot, 'pg'));
        process.kill(postmaster, 'SIGKILL');
        // Its backends notice the postmaster's death and exit; a new postmaster needs them gone.
        await until('the old Postgres backends to exit', async () => !alive(postmaster) && children.every((p) => !alive(p)), 30_000);
        figures.postgresKills += 1;
        release(); // the server cannot record the agent's answer now
        await sleep(between(200, 1500));
        db.current = await startEmbeddedPostgres({ dir: pgRoot, port: pgPort, persistent: true, log });
        restartedAt = Date.now();
      }
      if (phase && phase !== 'postgres') figures.serverKills[phase] = (figures.serverKills[phase] ?? 0) + 1;

      // A decision the kill cut off is made again, as a reviewer would (it never committed).
      const [row] = await until('the approval to be readable', () => sql<{ status: string }>('select status from approval where id = $1', [a.uuid]), 30_000);
      if (row!.status === 'PENDING') {
        figures.reApprovedAfterKill += 1;
        await approve(a);
      }
      figures.approved += 1;
      await until(
        `approval ${a.uuid} (cycle ${i}, ${phase ?? 'no kill'}) to be delivered`,
        async () => (await deliveryStatus(a.uuid)) === 'DELIVERED',
        DELIVERY_WAIT_MS,
      );
      if (restartedAt && phase) {
        figures.recoveries[phase] ??= [];
        figures.recoveries[phase].push(Date.now() - restartedAt);
      }
      figures.cycles += 1;
      if ((i + 1) % 25 === 0) console.log(`soak: ${i + 1}/${CYCLES} cycles, ${Math.round((Date.now() - started) / 1000)} s`);
    }

    // ---- The checks.
    const problems: string[] = [];
    const rows = await sql<{ id: string; status: string; delivery: string | null; message_id: string | null; decisions: number; delivered_events: number }>(
      `select a.id, a.status, d.status as delivery, d.message_id,
              (select count(*)::int from decision x where x.approval_id = a.id) as decisions,
              (select count(*)::int from audit_event e where e.stream = 'approval:' || a.id and e.type = 'delivery.delivered') as delivered_events
         from approval a left join delivery d on d.approval_id = a.id where a.id = any($1::uuid[])`,
      [approvals],
    );
    const receipts = agent.received.filter((r) => r.message.metadata?.approval);
    const newReceipts = new Map<string, number>();
    for (const r of receipts) if (!r.duplicate) newReceipts.set(r.message.messageId, (newReceipts.get(r.message.messageId) ?? 0) + 1);
    const deliveredMessageIds = new Set<string>();
    for (const r of rows) {
      if (r.status !== 'APPROVED') problems.push(`approval ${r.id} is ${r.status}, expected APPROVED`);
      if (r.status === 'APPROVED' && r.delivery !== 'DELIVERED') problems.push(`approval ${r.id} is APPROVED with delivery ${r.delivery ?? 'missing'}`);
      if (r.decisions !== 1) problems.push(`approval ${r.id} has ${r.decisions} decisions`);
      if (r.delivery === 'DELIVERED' && r.delivered_events !== 1) problems.push(`approval ${r.id} has ${r.delivered_events} delivery.delivered events`);
      if (r.message_id) {
        deliveredMessageIds.add(r.message_id);
        if (r.delivery === 'DELIVERED' && newReceipts.get(r.message_id) !== 1) {
          problems.push(`approval ${r.id}: DELIVERED, the agent received its message ${newReceipts.get(r.message_id) ?? 0} times as new`);
        }
      }
    }
    if (rows.length !== approvals.length) problems.push(`${approvals.length - rows.length} approvals missing`);
    for (const [messageId, n] of newReceipts) {
      if (n > 1) problems.push(`messageId ${messageId} arrived ${n} times as a new message`);
      if (!deliveredMessageIds.has(messageId)) problems.push(`the agent received ${messageId}, which no delivery sent`);
    }
    const leftJobs = await sql<{ n: number }>(`select count(*)::int as n from graphile_worker.jobs where task_identifier = $1`, [DELIVER_JOB]);
    if (leftJobs[0]!.n !== 0) problems.push(`${leftJobs[0]!.n} delivery jobs left in the queue`);
    const chain = (await gql(`{ auditChain { ok events firstBrokenSeq reason } }`)).auditChain as { ok: boolean; events: number; reason: string | null };
    if (!chain.ok) problems.push(`audit chain broken: ${chain.reason}`);
    if (server.unexpectedExits) problems.push(`the server exited ${server.unexpectedExits} time(s) without being killed`);

    const recovery = Object.entries(figures.recoveries)
      .map(([phase, ms]) => `${phase} max ${Math.max(...ms)} ms`)
      .join(', ');
    const output = server.output();
    const released = [...output.matchAll(/\[worker\] released (\d+) job/g)].reduce((n, m) => n + Number(m[1]), 0);
    const workerErrors = output.split('\n').filter((l) => /seppuku/.test(l));
    const runnerReplacements = output.split('\n').filter((l) => /replaced the job runner/.test(l)).length;
    const duplicates = receipts.filter((r) => r.duplicate).length;
    console.log(
      [
        `soak figures (seed ${SEED}):`,
        `  cycles completed            ${figures.cycles} of ${CYCLES}`,
        `  approved decisions          ${figures.approved} (re-approved after a kill cut the decision off: ${figures.reApprovedAfterKill})`,
        `  server SIGKILLs             ${Object.values(figures.serverKills).reduce((x, y) => x + y, 0)} (during decision ${figures.serverKills.decision}, during delivery ${figures.serverKills.delivery}, between receipt and observation ${figures.serverKills.receipt})`,
        `  Postgres SIGKILLs           ${figures.postgresKills} (server kept running, recovered)`,
        `  delivered                   ${rows.filter((r) => r.delivery === 'DELIVERED').length}`,
        `  agent receipts              ${receipts.length} (new ${receipts.length - duplicates}, retries seen as duplicates ${duplicates})`,
        `  messageIds new twice        ${[...newReceipts.values()].filter((n) => n > 1).length}`,
        `  lost (approved, undelivered) ${rows.filter((r) => r.status === 'APPROVED' && r.delivery !== 'DELIVERED').length}`,
        `  recovery after a kill       ${recovery} (restart ready -> DELIVERED)`,
        `  jobs released by sweepers   ${released} (their worker was gone)`,
        `  workers lost to the outage  ${workerErrors.length} (could not record a job's outcome), job runner replaced ${runnerReplacements} time(s)`,
        `  audit chain                 ${chain.ok ? 'verifies' : `BROKEN: ${chain.reason}`} (${chain.events} events)`,
        `  duration                    ${Math.round((Date.now() - started) / 1000)} s`,
        `  problems                    ${problems.length}`,
        ...problems.slice(0, 50).map((p) => `    - ${p}`),
      ].join('\n'),
    );
    return problems.length === 0;
  }
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (e) => {
    console.error(e instanceof Error ? e.stack : e);
    process.exit(1);
  },
);
