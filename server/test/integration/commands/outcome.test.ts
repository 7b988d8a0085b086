import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUARD_EXIT } from '../../../src/commands/cli/client.js';
import { Access } from '../../../src/access.js';
import { viewerForToken } from '../../../src/auth/service.js';
import { OUTCOME_NEVER_REPORTED, reconcileOutcome } from '../../../src/commands/reconcile.js';
import { reportOutcome } from '../../../src/commands/grant-use.js';
import { createMember, eventually, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { runCli, type GuardRun } from '../../support/guard-process.js';
import { rest } from '../../support/command-approvals.js';

// Item 9 / seed 002's reconciliation: no command outcome is lost. The guard keeps a report it
// could not send (0600, under TASKBAY_STATE_DIR) and sends it on its next run or with
// `taskbay approvals sweep`; a grant consumed without an outcome becomes FAILED "outcome never
// reported" after TASKBAY_COMMAND_OUTCOME_TIMEOUT, once; a late report is refused clearly; and
// `taskbay approvals replay` prints the commands the EXECUTED event recorded.

/** Long timeout: the guard/sweep tests must not meet the reconciler. */
let slow: TestInstance;
/** TASKBAY_COMMAND_OUTCOME_TIMEOUT=2. */
let fast: TestInstance;
let dir: string;

/** A TCP proxy to an instance, closed (connections refused) and reopened on the same port. */
class TcpProxy {
  private server: Server | null = null;
  private sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: number) {}
  get url() {
    return `http://127.0.0.1:${this.port}`;
  }
  async open(): Promise<void> {
    const server = createServer((c) => {
      const u = connect(this.target, '127.0.0.1');
      for (const s of [c, u]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          c.destroy();
          u.destroy();
        });
      }
      c.pipe(u);
      u.pipe(c);
    });
    await new Promise<void>((ok) => server.listen(this.port, '127.0.0.1', ok));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }
  async close(): Promise<void> {
    const server = this.server!;
    this.server = null;
    const closed = new Promise((ok) => server.close(ok));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

type Run = GuardRun;

/** The guard's own entry (server/src/commands/cli.ts) as a child process; see support/guard-process.ts. */
function cli(args: string[], env: Record<string, string>): Run {
  return runCli(args, env, true);
}

const terminal = async (t: TestInstance, pid: string) =>
  await t.sql(`select type, actor_type, data from audit_event where data->>'approval_id' = $1 and type in ('EXECUTED', 'FAILED') order by seq`, [pid]);

async function approve(t: TestInstance, pid: string) {
  const a = (await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { approval { id revision digest } } }`, { p: pid })).data!.commandApproval
    .approval;
  const r = await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest });
  expect(r.errors).toBeUndefined();
}

/** A consumed grant, through the hook's REST surface: asked, approved, consumed; no outcome yet. */
async function consumed(t: TestInstance, token: string, command: string): Promise<{ pid: string; uuid: string }> {
  const asked = await rest(t, token, 'POST', '/api/command-approvals', {
    agent_id: 'a0c0ffee00',
    payload: {
      operation: 'test',
      exact_content: command,
      scope: command.split(' ')[0],
      risk_level: 'medium',
      rollback: null,
      rationale: 'test',
      verification: 'exit 0',
    },
  });
  expect(asked.status).toBe(201);
  await approve(t, asked.json.approval_id);
  const c = await rest(t, token, 'POST', `/api/command-approvals/${asked.json.approval_id}/consume`);
  expect(c.status).toBe(200);
  return { pid: asked.json.approval_id, uuid: asked.json.approval_uuid };
}

beforeAll(async () => {
  [slow, fast] = await Promise.all([startTestInstance(), startTestInstance({ env: { TASKBAY_COMMAND_OUTCOME_TIMEOUT: '2' } })]);
  dir = mkdtempSync(join(tmpdir(), 'taskbay-outcome-'));
}, 120_000);

afterAll(async () => {
  await Promise.all([slow?.stop(), fast?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * `taskbay guard` against the proxy; the command waits for a gate, the proxy is closed while it
 * runs (after the consume), so the outcome report meets a refused connection.
 */
async function guardLosingServer(t: TestInstance, proxy: TcpProxy, token: string, state: string, name: string) {
  const started = join(dir, `${name}.started`);
  const gate = join(dir, `${name}.gate`);
  const run = cli(['guard', '--timeout', '60', '--', 'sh', '-c', `echo ran > ${started}; while [ ! -e ${gate} ]; do sleep 0.05; done`], {
    TASKBAY_URL: proxy.url,
    TASKBAY_TOKEN: token,
    TASKBAY_STATE_DIR: state,
  });
  const pid = await run.waiting;
  await approve(t, pid);
  await eventually(async () => existsSync(started), 30_000);
  await proxy.close();
  writeFileSync(gate, '');
  expect(await run.code).toBe(0);
  return { pid, run, command: `sh -c 'echo ran > ${started}; while [ ! -e ${gate} ]; do sleep 0.05; done'` };
}

describe('the guard keeps an outcome it could not report', () => {
  it('server gone after consume: the report is kept 0600 on disk, `approvals sweep` sends it (EXECUTED, file removed), and `replay` prints the commands that ran', async () => {
    const hook = await createMember(slow);
    const proxy = new TcpProxy(Number(new URL(slow.instance.url).port));
    await proxy.open();
    const state = join(dir, 'state-sweep');
    const { pid, run, command } = await guardLosingServer(slow, proxy, hook.token, state, 'sweep');
    const file = join(state, 'outcomes', `${pid}.json`);
    expect(run.stderr).toContain(`could not record the outcome (cannot reach Taskbay at ${proxy.url}`);
    expect(run.stderr).toContain(`kept it in ${file}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(state, 'outcomes')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ url: proxy.url, approval_id: pid, exit_code: 0 });
    expect(await terminal(slow, pid)).toEqual([]);

    // Still unreachable: sweep keeps it and says so.
    const early = cli(['approvals', 'sweep'], { TASKBAY_URL: proxy.url, TASKBAY_TOKEN: hook.token, TASKBAY_STATE_DIR: state });
    expect(await early.code).toBe(GUARD_EXIT.UNREACHABLE);
    expect(early.stdout).toContain('sent 0, still kept 1');
    expect(existsSync(file)).toBe(true);

    await proxy.open(); // the server is back on the same address
    const sweep = cli(['approvals', 'sweep'], { TASKBAY_URL: proxy.url, TASKBAY_TOKEN: hook.token, TASKBAY_STATE_DIR: state });
    expect(await sweep.code).toBe(0);
    expect(sweep.stdout).toContain(`${pid}: recorded EXECUTED`);
    expect(existsSync(file)).toBe(false);
    const events = await terminal(slow, pid);
    expect(events.map((e: any) => e.type)).toEqual(['EXECUTED']);
    expect(events[0].data).toMatchObject({ exit_code: 0, commands: [command] });

    const replay = cli(['approvals', 'replay', pid], { TASKBAY_URL: proxy.url, TASKBAY_TOKEN: hook.token });
    expect(await replay.code).toBe(0);
    expect(replay.stdout).toMatch(new RegExp(`^${pid} EXECUTED \\S+ exit 0\\n  \\$ ${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`));
    await proxy.close();
  }, 90_000);

  it('the next guard run sends the kept report before it asks', async () => {
    const hook = await createMember(slow);
    const proxy = new TcpProxy(Number(new URL(slow.instance.url).port));
    await proxy.open();
    const state = join(dir, 'state-next');
    const { pid } = await guardLosingServer(slow, proxy, hook.token, state, 'next');
    expect(readdirSync(join(state, 'outcomes'))).toEqual([`${pid}.json`]);
    await proxy.open();
    // Deny mode answers at once (blocked), after sending what was kept.
    const next = cli(['guard', '--deny-mode', '--agent-id', 'a0badcafe0', '--', 'true'], {
      TASKBAY_URL: proxy.url,
      TASKBAY_TOKEN: hook.token,
      TASKBAY_STATE_DIR: state,
    });
    expect(await next.code).toBe(GUARD_EXIT.NOT_APPROVED);
    expect(next.stderr).toContain(`kept outcome ${pid}: recorded EXECUTED`);
    expect(readdirSync(join(state, 'outcomes'))).toEqual([]);
    expect((await terminal(slow, pid)).map((e: any) => e.type)).toEqual(['EXECUTED']);
    await proxy.close();
  }, 90_000);
});

describe('the server reconciles a consumed grant with no outcome (TASKBAY_COMMAND_OUTCOME_TIMEOUT)', () => {
  it('FAILED "outcome never reported" after the timeout, exactly one terminal event; a late report gets 409 naming it; replay has nothing', async () => {
    const hook = await createMember(fast);
    const { pid } = await consumed(fast, hook.token, 'echo never-reported');
    const events = await eventually(async () => {
      const e = await terminal(fast, pid);
      return e.length ? e : null;
    }, 20_000);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'FAILED',
      actor_type: 'system',
      data: { detail: OUTCOME_NEVER_REPORTED, reconciled: true, exit_code: null, commands: ['echo never-reported'] },
    });

    const late = await rest(fast, hook.token, 'POST', `/api/command-approvals/${pid}/outcome`, { exit_code: 0 });
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ error: 'NOT_PENDING', reason: 'OUTCOME_RECORDED', outcome: 'FAILED', reconciled: true });
    expect(late.json.message).toContain(`already recorded: FAILED (${OUTCOME_NEVER_REPORTED})`);
    expect(await terminal(fast, pid)).toHaveLength(1);

    const replay = cli(['approvals', 'replay', pid], { TASKBAY_URL: fast.instance.url, TASKBAY_TOKEN: hook.token });
    expect(await replay.code).toBe(1);
    expect(replay.stderr).toMatch(/INVALID_ACTION: .*has no EXECUTED event/);
  }, 60_000);

  it('a kept report met by the reconciler: sweep learns the outcome is recorded and drops the file; still one terminal event', async () => {
    const hook = await createMember(fast);
    const proxy = new TcpProxy(Number(new URL(fast.instance.url).port));
    await proxy.open();
    const state = join(dir, 'state-late');
    const { pid } = await guardLosingServer(fast, proxy, hook.token, state, 'late');
    await eventually(async () => (await terminal(fast, pid)).length > 0, 20_000);
    await proxy.open();
    const sweep = cli(['approvals', 'sweep'], { TASKBAY_URL: proxy.url, TASKBAY_TOKEN: hook.token, TASKBAY_STATE_DIR: state });
    expect(await sweep.code).toBe(0);
    expect(sweep.stdout).toContain(`${pid}: the outcome of ${pid} is already recorded: FAILED (${OUTCOME_NEVER_REPORTED})`);
    expect(readdirSync(join(state, 'outcomes'))).toEqual([]);
    expect((await terminal(fast, pid)).map((e: any) => e.type)).toEqual(['FAILED']);
    await proxy.close();
  }, 90_000);

  it('an outcome reported in time: the reconciler writes nothing (its job runs and finds EXECUTED)', async () => {
    const hook = await createMember(fast);
    const { pid, uuid } = await consumed(fast, hook.token, 'echo reported');
    // Queued with the consume, due the timeout after it.
    const [job] = await fast.sql(
      `select j.run_at, g.consumed_at from graphile_worker.jobs j, approval_grant g where j.key = $1 and g.command_approval_id = $2`,
      [`reconcile-outcome:${uuid}`, uuid],
    );
    expect(new Date(job.run_at).getTime() - new Date(job.consumed_at).getTime()).toBe(2000);
    expect((await rest(fast, hook.token, 'POST', `/api/command-approvals/${pid}/outcome`, { exit_code: 0 })).status).toBe(200);
    // The queued job runs (and leaves the queue) after the 2 s timeout.
    await eventually(
      async () => (await fast.sql(`select count(*)::int as n from graphile_worker.jobs where key = $1`, [`reconcile-outcome:${uuid}`]))[0].n === 0,
      20_000,
    );
    expect((await terminal(fast, pid)).map((e: any) => e.type)).toEqual(['EXECUTED']);
  }, 60_000);

  it('report and reconciler at the same moment: exactly one terminal event, and the loser is told', async () => {
    // On the instance whose own reconciler is an hour away: both are called in-process, the
    // reconciler as if the grant were due. The test holds the approval's audit-stream lock (which
    // every append takes) until both writers wait on a lock, so both have started before either
    // can write: only the grant's row lock, taken before the double-record check, keeps it to one.
    const hook = await createMember(slow);
    const em = slow.instance.orm.em.fork() as unknown as EntityManager;
    const viewer = (await viewerForToken(em.fork(), hook.token))!;
    const later = new Date(Date.now() + 3_600_000);
    const db = new pg.Client({ connectionString: slow.databaseUrl });
    await db.connect();
    try {
      for (const reportFirst of [true, false]) {
        const { pid, uuid } = await consumed(slow, hook.token, `echo race-${reportFirst}`);
        await db.query('begin');
        await db.query(`select pg_advisory_xact_lock(hashtextextended($1, 7))`, [`approval:${uuid}`]);
        const reportEm = em.fork();
        const report = () =>
          reportOutcome(reportEm, new Access(reportEm, viewer), pid, { exit_code: 0 }).then(
            () => 'reported',
            (e) => e.extensions?.reason as string,
          );
        const reconcile = () => reconcileOutcome(em.fork(), uuid, 2, later).then((r) => r.result as string);
        const both = reportFirst ? Promise.all([report(), reconcile()]) : Promise.all([reconcile(), report()]).then(([a, b]) => [b, a]);
        await eventually(async () => {
          // Inside a transaction pg_stat_activity is a snapshot taken once; take a fresh one.
          await db.query('select pg_stat_clear_snapshot()');
          const [{ n }] = (await db.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`))
            .rows;
          return n >= 2;
        });
        await db.query('commit');
        const [reported, reconciled] = await both;
        const types = (await terminal(slow, pid)).map((e: any) => e.type);
        expect(types).toHaveLength(1);
        if (types[0] === 'EXECUTED') expect([reported, reconciled]).toEqual(['reported', 'OUTCOME_RECORDED']);
        else expect([reported, reconciled]).toEqual(['OUTCOME_RECORDED', 'FAILED']);
      }
    } finally {
      await db.end();
    }
  }, 60_000);
});
