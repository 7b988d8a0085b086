import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DELIVER_JOB } from '../../../src/delivery/queue.js';
import { DELIVERY_CLAIM } from '../../../src/delivery/worker.js';
import { JOB_RECOVERY, startJobRecovery, type JobRecovery } from '../../../src/jobs/recovery.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import type { ReceivedMessage } from '../../../src/fixture-agent/tasks.js';
import { createTestDatabase, eventually, OPS, roleUrls, startTestInstance, type TestInstance, rawId } from '../../support/harness.js';
import { gqlAt, startServerProcess, type ServerProcess } from '../../support/server-process.js';

// Issue 14, "Crash safety": a delivery job held by a worker whose process was killed runs again
// within seconds of a restart (graphile-worker alone frees it after four hours), and a job held
// by a live instance is never taken from it. The deciding instance sends a delivery itself right
// after the decision (delivery/direct.ts), so these make that first send fail and hold the job's;
// the last test kills the deciding instance in its own send: the job delivers once the claim lapses.

const APPROVALS_OF_TASK = `query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`;

/** An agent that can hold its answer to approved messages (the "killed mid-delivery" window). */
function holdingAgent() {
  let holding = false;
  let release: () => void = () => {};
  let onHeld: (m: ReceivedMessage) => void = () => {};
  const held = new Promise<ReceivedMessage>((r) => (onHeld = r));
  const gate = new Promise<void>((r) => (release = r));
  return {
    hold() {
      holding = true;
    },
    /** Resolves with the first approved message the agent holds. */
    held,
    release() {
      holding = false;
      release();
    },
    async beforeReply(m: ReceivedMessage) {
      if (!holding || !m.message.metadata?.approval) return;
      onHeld(m);
      await gate;
    },
  };
}

const approvedMessagesFor = (agent: FixtureAgent, approvalId: string) =>
  agent.received.filter((r) => (r.message.metadata?.approval as { requestId?: string } | undefined)?.requestId === approvalId);

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A `taskbay serve` child on a new database (app role, migrating as the owner, as deployed), an
 * agent that can hold its answers, a superuser client for the test's own SQL, and one request
 * opened on a task, not yet decided. `server` is replaced by a restart; gql always asks the current one.
 */
async function crashScenario(extraEnv: Record<string, string> = {}) {
  const databaseUrl = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'taskbay-crash-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const adminToken = `tb_admin_${randomUUID()}`;
  const { appUrl, ownerUrl } = roleUrls(databaseUrl);
  const env = { DATABASE_URL: appUrl, TASKBAY_MIGRATION_DATABASE_URL: ownerUrl, TASKBAY_ADMIN_TOKEN: adminToken, TASKBAY_DATA_DIR: dataDir, ...extraEnv };
  const gate = holdingAgent();
  const agent = await startFixtureAgent({ beforeReply: (m) => gate.beforeReply(m) });
  cleanups.push(() => agent.close());
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  cleanups.push(() => db.end());
  const s = { env, gate, agent, db, server: (await startServerProcess(env)) as ServerProcess };
  cleanups.push(() => s.server.stop());
  const gql = (query: string, variables?: Record<string, unknown>) => gqlAt(s.server.url, adminToken, query, variables);
  const ok = async (p: ReturnType<typeof gql>) => {
    const r = await p;
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data as any;
  };
  const agentId = (await ok(gql(OPS.register, { url: agent.cardUrl('showcase') }))).registerAgent.id;
  const task = (await ok(gql(OPS.startTask, { agentId, text: 'approve' }))).startTask;
  const [{ node: approval }] = (await ok(gql(APPROVALS_OF_TASK, { t: task.id }))).approvals.edges;
  return Object.assign(s, { gql, ok, approval, approvalId: rawId(approval.id) });
}

describe('a job held by a killed server', () => {
  it('is delivered within seconds of the restart: the agent saw the same messageId twice (the second a retry), one delivery.delivered, the chain verifies', async () => {
    // The server runs as the app role and migrates as the owner, as deployed; the test's own SQL is the superuser's.
    const c = await crashScenario();
    const { gate, agent, db, gql, ok, approval, approvalId } = c;

    gate.hold();
    // The deciding instance's own send is refused; the job's (e^1 s later) is held.
    agent.failNext('showcase', 1);
    const decision = (await ok(gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }))).approve;
    const first = await gate.held;
    // The agent has acted on the message; the server has not seen its answer. Kill it now.
    await c.server.kill();
    gate.release();
    const [job] = (await db.query(`select locked_by from graphile_worker.jobs where task_identifier = $1`, [DELIVER_JOB])).rows;
    expect(job.locked_by).toMatch(/^worker-/); // held by a worker that no longer exists
    const [before] = (await db.query('select status from delivery where approval_id = $1', [approvalId])).rows;
    expect(before.status).toBe('QUEUED');

    c.server = await startServerProcess(c.env);
    const restarted = Date.now();
    await eventually(
      async () => {
        const [d] = (await db.query('select status from delivery where approval_id = $1', [approvalId])).rows;
        return d.status === 'DELIVERED';
      },
      60_000,
      100,
    );
    const recoveredMs = Date.now() - restarted;
    console.log(`crash recovery: DELIVERED ${recoveredMs} ms after the restarted server was ready`);
    // The dead worker's lock is seen free on two sweeps graceMs apart, then the job runs. The bound
    // tells which mechanism released it, not how fast the machine is: jobs/recovery.ts (graceMs and
    // a few sweeps; 5 s for the send) rather than graphile-worker's own release of a lock held 4 hours.
    expect(recoveredMs).toBeLessThan(JOB_RECOVERY.graceMs + 3 * JOB_RECOVERY.sweepIntervalMs + 5000);

    const [d] = (await db.query('select status, message_id, decision_id from delivery where approval_id = $1', [approvalId])).rows;
    expect(d.decision_id).toBe(decision.id);
    const seen = approvedMessagesFor(agent, approvalId);
    expect(seen.map((r) => ({ messageId: r.message.messageId, duplicate: r.duplicate }))).toEqual([
      { messageId: d.message_id, duplicate: false },
      { messageId: d.message_id, duplicate: true },
    ]);
    expect(first.message.messageId).toBe(d.message_id);
    const events = (await db.query(`select type from audit_event where stream = $1 and type like 'delivery.%' order by seq`, [`approval:${approvalId}`])).rows;
    expect(events.map((e) => e.type)).toEqual(['delivery.queued', 'delivery.delivered']);
    expect((await ok(gql(OPS.auditChain))).auditChain).toMatchObject({ ok: true, firstBrokenSeq: null });
    expect((await db.query(`select count(*)::int as n from graphile_worker.jobs where task_identifier = $1`, [DELIVER_JOB])).rows).toEqual([{ n: 0 }]);
  }, 180_000);
});

describe('a job held by a live instance', () => {
  let a: TestInstance | undefined;
  let other: JobRecovery | undefined;
  afterAll(async () => {
    await other?.close();
    await a?.stop();
  });

  it("is never released by another instance's sweeper, while a dead worker's job is", async () => {
    const gate = holdingAgent();
    const agent = await startFixtureAgent({ beforeReply: (m) => gate.beforeReply(m) });
    cleanups.push(() => agent.close());
    a = await startTestInstance();
    const t = a;
    const ok = async (p: ReturnType<TestInstance['gql']>) => {
      const r = await p;
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r.data as any;
    };
    const agentId = (await ok(t.gql(OPS.register, { url: agent.cardUrl('showcase') }))).registerAgent.id;
    const task = (await ok(t.gql(OPS.startTask, { agentId, text: 'approve' }))).startTask;
    const [{ node: approval }] = (await ok(t.gql(APPROVALS_OF_TASK, { t: task.id }))).approvals.edges;
    const approvalId = rawId(approval.id);

    gate.hold();
    agent.failNext('showcase', 1); // the deciding instance's send: the job's is held
    await ok(t.gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }));
    await gate.held;
    const [held] = await t.sql(`select id, locked_by from graphile_worker.jobs where task_identifier = $1`, [DELIVER_JOB]);
    expect(held.locked_by).toMatch(/^worker-/);

    // A job left by a worker that is gone (as after a SIGKILL), as the control: it must be released.
    const [orphan] = await t.sql(`select id from graphile_worker.add_job('reliability_probe', '{}', run_at => now() + interval '1 hour')`);
    await t.sql(`update graphile_worker._private_jobs set locked_by = 'worker-gone', locked_at = now(), attempts = 1 where id = $1`, [orphan.id]);

    // Another instance's sweeper, the same code every instance runs.
    other = startJobRecovery(t.databaseUrl, () => {});
    const sweepsNeeded = Math.ceil(JOB_RECOVERY.graceMs / JOB_RECOVERY.sweepIntervalMs) + 2;
    await eventually(
      async () => {
        const [o] = await t.sql(`select locked_by from graphile_worker.jobs where id = $1`, [orphan.id]);
        return o.locked_by === null && other!.sweeps >= sweepsNeeded;
      },
      30_000,
      100,
    );
    const [o] = await t.sql(`select locked_by, attempts from graphile_worker.jobs where id = $1`, [orphan.id]);
    expect(o).toEqual({ locked_by: null, attempts: 0 }); // released, its cut-short attempt given back

    // The live worker still holds its job, across more sweeps than the grace period.
    const [still] = await t.sql(`select id, locked_by from graphile_worker.jobs where task_identifier = $1`, [DELIVER_JOB]);
    expect(still).toEqual(held);

    gate.release();
    await eventually(async () => {
      const [d] = await t.sql('select status, attempts from delivery where approval_id = $1', [approvalId]);
      return d.status === 'DELIVERED';
    }, 20_000);
    const [d] = await t.sql('select attempts from delivery where approval_id = $1', [approvalId]);
    expect(d.attempts).toBe(2); // the refused direct send, and the job's
    expect(approvedMessagesFor(agent, approvalId).map((r) => r.duplicate)).toEqual([false]);
  }, 90_000);
});

describe('a deciding instance killed in its own send of the delivery', () => {
  it("leaves the claim: the job (after the restart) sends nothing until the claim's lease ends, then delivers it once", async () => {
    // The fallback job is due a second after the decision (it finds the claim held).
    const c = await crashScenario({ TASKBAY_DELIVERY_FALLBACK_DELAY: '1' });
    const { gate, agent, db, gql, ok, approval, approvalId } = c;
    const row = async () =>
      (await db.query('select id, status, attempts, claimed_until, message_id, observed_at from delivery where approval_id = $1', [approvalId])).rows[0];

    gate.hold();
    await ok(gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }));
    await gate.held;
    // The agent has the message from the deciding instance's own send; kill it before it hears the answer.
    await c.server.kill();
    gate.release();
    const left = await row();
    expect(left).toMatchObject({ status: 'QUEUED', attempts: 1 });
    const claimedUntil = left.claimed_until as Date;
    // Still held: a dead sender's claim lapses only at its lease's end (leaseMs after its last renewal).
    expect(claimedUntil.getTime()).toBeGreaterThan(Date.now());

    c.server = await startServerProcess(c.env);
    await eventually(async () => (await row()).status === 'DELIVERED', DELIVERY_CLAIM.leaseMs + 30_000, 200);
    const d = await row();
    expect(d.attempts).toBe(2);
    // Not before the lease ended.
    expect((d.observed_at as Date).getTime()).toBeGreaterThanOrEqual(claimedUntil.getTime());
    expect(approvedMessagesFor(agent, approvalId).map((r) => ({ messageId: r.message.messageId, duplicate: r.duplicate }))).toEqual([
      { messageId: d.message_id, duplicate: false },
      { messageId: d.message_id, duplicate: true },
    ]);
    const events = (await db.query(`select type from audit_event where stream = $1 and type like 'delivery.%' order by seq`, [`approval:${approvalId}`])).rows;
    expect(events.map((e) => e.type)).toEqual(['delivery.queued', 'delivery.delivered']);
    expect((await ok(gql(OPS.auditChain))).auditChain).toMatchObject({ ok: true, firstBrokenSeq: null });
    expect((await db.query(`select count(*)::int as n from graphile_worker.jobs where task_identifier = $1`, [DELIVER_JOB])).rows).toEqual([{ n: 0 }]);
  }, 180_000);
});
