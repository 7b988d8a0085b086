import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryMessageId } from '../../../src/delivery/queue.js';
import { DELIVERY_CLAIM } from '../../../src/delivery/worker.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import type { ReceivedMessage } from '../../../src/fixture-agent/tasks.js';
import { createTestDatabase, eventually, OPS, startTestInstance, type TestInstance, ok, rawId, startReplicaOf } from '../../support/harness.js';

// The deciding instance sends an approved delivery itself right after the decision's commit; the
// delivery's job is the fallback (delivery/direct.ts, docs/RELIABILITY.md "Delivery: sent by the
// deciding instance, the job as fallback"). The decisions are made on `decider`, an instance
// without a job worker whose fallback delay is an hour: whatever reaches the agent before the job
// is made due (by the test, or by a failed attempt's backoff) was sent by the deciding instance.
// `worker` runs the jobs on the same database; it starts in the claim test, after that test has
// planted a claim (until then no job can run at all).

const MAX_ATTEMPTS = 2;
const ENV = { TASKBAY_DELIVERY_MAX_ATTEMPTS: String(MAX_ATTEMPTS), TASKBAY_DELIVERY_FALLBACK_DELAY: '3600' };

let agent: FixtureAgent;
let decider: TestInstance;
let worker: TestInstance | undefined;
let agentId: string;
/** While set, the agent holds its answer to approved messages (the sender's attempt stays open). */
let hold: { gate: Promise<void>; release: () => void; once?: boolean } | null = null;

beforeAll(async () => {
  agent = await startFixtureAgent({
    beforeReply: async (m: ReceivedMessage) => {
      const held = hold;
      if (!held || !m.message.metadata?.approval) return;
      if (held.once) hold = null;
      await held.gate;
    },
  });
  decider = await startTestInstance({ databaseUrl: await createTestDatabase(), worker: false, env: ENV });
  agentId = ok(await decider.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
});

afterAll(async () => {
  hold?.release();
  await worker?.stop();
  await decider?.stop();
  await agent?.close();
});

/** Opens a request and approves it on the decider; the delivery's id. */
async function approveOne(beforeApproving = () => {}) {
  const task = ok(await decider.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
  const approval = ok(await decider.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals
    .edges[0].node;
  beforeApproving();
  const decision = ok(await decider.gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest })).approve;
  const approvalId = rawId(approval.id);
  const [d] = await decider.sql(`select id from delivery where approval_id = $1`, [approvalId]);
  return { approvalId, deliveryId: d.id as string, messageId: deliveryMessageId(decision.id) };
}

const received = (approvalId: string) =>
  agent.received.filter((r) => (r.message.metadata?.approval as { requestId?: string } | undefined)?.requestId === approvalId);
const deliveryRow = async (deliveryId: string) =>
  (await decider.sql(`select status, attempts, claimed_until, claim_id, last_error from delivery where id = $1`, [deliveryId]))[0];
const jobsOf = (deliveryId: string) => decider.sql(`select run_at, attempts, locked_at from graphile_worker.jobs where key = $1`, [`deliver:${deliveryId}`]);
/** The job's run_at is the claim's end, rounded up to the millisecond (pg gives both here in whole milliseconds). */
const backAtClaimEnd = (runAt: Date, claimedUntil: Date) => runAt.getTime() - claimedUntil.getTime() === 1;
const deliveryEvents = async (approvalId: string) =>
  (await decider.sql(`select type, data from audit_event where stream = $1 and type like 'delivery.%' order by seq`, [`approval:${approvalId}`])).map(
    (e: { type: string; data: { attempts?: number } }) => [e.type, e.data.attempts ?? null],
  );

describe('the deciding instance sends the delivery', () => {
  it('right after the commit, with no job worker anywhere: the agent receives it once, DELIVERED at the first attempt, and the fallback job is removed', async () => {
    const { approvalId, deliveryId, messageId } = await approveOne();
    // The fallback job was added in the decision's transaction, an hour later.
    const d = await eventually(async () => {
      const row = await deliveryRow(deliveryId);
      return row.status === 'DELIVERED' && row;
    });
    expect(d).toMatchObject({ attempts: 1, claimed_until: null, claim_id: null, last_error: null });
    expect(received(approvalId).map((r) => [r.message.messageId, r.duplicate])).toEqual([[messageId, false]]);
    expect(await jobsOf(deliveryId)).toEqual([]);
    expect(await deliveryEvents(approvalId)).toEqual([
      ['delivery.queued', null],
      ['delivery.delivered', 1],
    ]);
  });
});

describe('the claim: the job and another sender never both send', () => {
  it('a job finding the claim held sends nothing and comes back when it ends; then it sends once', async () => {
    // A QUEUED delivery no attempt holds: its direct send failed (the job would retry it in e^1 s).
    const { approvalId, deliveryId, messageId } = await approveOne(() => agent.failNext('showcase', 1));
    await eventually(async () => (await deliveryRow(deliveryId)).last_error);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'QUEUED', attempts: 1, claimed_until: null });
    // Another sender holds the claim for an hour; the job is due now. No worker runs yet.
    await decider.sql(`update delivery set claim_id = $2, claimed_until = now() + interval '1 hour' where id = $1`, [deliveryId, randomUUID()]);
    await decider.sql(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`deliver:${deliveryId}`]);
    worker = await startReplicaOf(decider, { env: ENV });

    // The job ran and put itself back to the claim's end: nothing sent, no attempt counted.
    const claimedUntil = (await deliveryRow(deliveryId)).claimed_until as Date;
    await eventually(async () => {
      const [job] = await jobsOf(deliveryId);
      return job && job.locked_at === null && backAtClaimEnd(job.run_at, claimedUntil);
    });
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'QUEUED', attempts: 1 });
    expect(received(approvalId)).toEqual([]);

    // The hour passes (claim and job both): the job takes the claim and sends, once.
    await decider.sql(`update delivery set claimed_until = claimed_until - interval '1 hour' where id = $1`, [deliveryId]);
    await decider.sql(`update graphile_worker._private_jobs set run_at = run_at - interval '1 hour' where key = $1`, [`deliver:${deliveryId}`]);
    await eventually(async () => (await deliveryRow(deliveryId)).status === 'DELIVERED');
    expect(await deliveryRow(deliveryId)).toMatchObject({ attempts: 2, claimed_until: null, claim_id: null });
    expect(received(approvalId).map((r) => [r.message.messageId, r.duplicate])).toEqual([[messageId, false]]);
    expect(await jobsOf(deliveryId)).toEqual([]);
  });

  it("while the deciding instance's send is open, its job (made due) sends nothing and comes back at the claim's end; the send ends it: delivered once", async () => {
    let release!: () => void;
    hold = { gate: new Promise<void>((r) => (release = r)), release: () => release() };
    const before = Date.now();
    const { approvalId, deliveryId, messageId } = await approveOne();
    await eventually(async () => received(approvalId).length === 1);
    const open = await deliveryRow(deliveryId);
    const after = Date.now();
    expect(open).toMatchObject({ status: 'QUEUED', attempts: 1 });
    // The claim is a lease of leaseMs from a moment between approving and reading it (renewed
    // while the send is open: the next test). Postgres and this process read the same clock.
    const claimedUntil = (open.claimed_until as Date).getTime();
    expect(claimedUntil).toBeGreaterThanOrEqual(before + DELIVERY_CLAIM.leaseMs);
    expect(claimedUntil).toBeLessThanOrEqual(after + DELIVERY_CLAIM.leaseMs);

    await decider.sql(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`deliver:${deliveryId}`]);
    // Back at the claim's end (at least the end read above: a renewal may have moved it since).
    await eventually(async () => {
      const [job] = await jobsOf(deliveryId);
      return job && job.locked_at === null && job.run_at.getTime() >= open.claimed_until.getTime() + 1;
    });
    expect(received(approvalId)).toHaveLength(1);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'QUEUED', attempts: 1 });

    hold.release();
    hold = null;
    await eventually(async () => (await deliveryRow(deliveryId)).status === 'DELIVERED');
    expect(await deliveryRow(deliveryId)).toMatchObject({ attempts: 1, claimed_until: null });
    expect(received(approvalId).map((r) => [r.message.messageId, r.duplicate])).toEqual([[messageId, false]]);
    expect(await jobsOf(deliveryId)).toEqual([]);
    expect(await deliveryEvents(approvalId)).toEqual([
      ['delivery.queued', null],
      ['delivery.delivered', 1],
    ]);
  });

  it('a send open longer than the lease keeps its claim (renewed while it runs): the job, made due after the first lease ended, sends nothing; delivered once', async () => {
    const saved = { ...DELIVERY_CLAIM };
    Object.assign(DELIVERY_CLAIM, { leaseMs: 1500, renewMs: 300 });
    try {
      let release!: () => void;
      hold = { gate: new Promise<void>((r) => (release = r)), release: () => release() };
      const { approvalId, deliveryId, messageId } = await approveOne();
      await eventually(async () => received(approvalId).length === 1);
      const first = (await deliveryRow(deliveryId)).claimed_until as Date;
      // The first lease has ended and the claim still holds: it was renewed.
      await eventually(async () => {
        const d = await deliveryRow(deliveryId);
        return Date.now() > first.getTime() + 500 && d.claimed_until !== null && d.claimed_until.getTime() > Date.now();
      });
      await decider.sql(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`deliver:${deliveryId}`]);
      await eventually(async () => {
        const [job] = await jobsOf(deliveryId);
        return job && job.locked_at === null && job.run_at.getTime() > first.getTime() + 1;
      });
      expect(received(approvalId)).toHaveLength(1);
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'QUEUED', attempts: 1 });

      hold.release();
      hold = null;
      await eventually(async () => (await deliveryRow(deliveryId)).status === 'DELIVERED');
      expect(await deliveryRow(deliveryId)).toMatchObject({ attempts: 1, claimed_until: null, claim_id: null });
      expect(received(approvalId).map((r) => [r.message.messageId, r.duplicate])).toEqual([[messageId, false]]);
      expect(await deliveryEvents(approvalId)).toEqual([
        ['delivery.queued', null],
        ['delivery.delivered', 1],
      ]);
    } finally {
      Object.assign(DELIVERY_CLAIM, saved);
    }
  });
});

describe('a send that outlived its claim', () => {
  it('the job took the lapsed claim and recorded the delivery; the late send, answered after, records nothing more (one delivery.delivered)', async () => {
    let release!: () => void;
    // Only the deciding instance's send is held; the job's goes through.
    hold = { gate: new Promise<void>((r) => (release = r)), release: () => release(), once: true };
    const { approvalId, deliveryId, messageId } = await approveOne();
    await eventually(async () => received(approvalId).length === 1);
    // The claim lapses while the send is still open (what renewing it rules out unless the database is away), and the job is due.
    await decider.sql(`update delivery set claimed_until = now() - interval '1 second' where id = $1`, [deliveryId]);
    await decider.sql(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`deliver:${deliveryId}`]);
    await eventually(async () => (await deliveryRow(deliveryId)).status === 'DELIVERED');
    expect(await deliveryRow(deliveryId)).toMatchObject({ attempts: 2, claimed_until: null, claim_id: null });

    release();
    await eventually(async () => decider.instance.deps.inFlight.size === 0);
    expect(received(approvalId).map((r) => [r.message.messageId, r.duplicate])).toEqual([
      [messageId, false],
      [messageId, true],
    ]);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'DELIVERED', attempts: 2, last_error: null });
    expect(await deliveryEvents(approvalId)).toEqual([
      ['delivery.queued', null],
      ['delivery.delivered', 2],
    ]);
  });
});

describe("a failed direct send: the job retries at the backoff, not after the fallback's hour", () => {
  it('one failure: the job delivers it, once, at the second attempt (counted on the row across both senders)', async () => {
    expect(worker).toBeDefined();
    const { approvalId, deliveryId, messageId } = await approveOne(() => agent.failNext('showcase', 1));
    await eventually(async () => (await deliveryRow(deliveryId)).status === 'DELIVERED', 20_000);
    expect(await deliveryRow(deliveryId)).toMatchObject({ attempts: 2, last_error: null, claimed_until: null });
    expect(received(approvalId).map((r) => [r.message.messageId, r.duplicate])).toEqual([[messageId, false]]);
    expect(await deliveryEvents(approvalId)).toEqual([
      ['delivery.queued', null],
      ['delivery.delivered', 2],
    ]);
    expect(await jobsOf(deliveryId)).toEqual([]);
  });

  it('failures up to the limit: the last attempt, sent by the job, makes it FAILED and leaves no job', async () => {
    const { approvalId, deliveryId } = await approveOne(() => agent.failNext('showcase', MAX_ATTEMPTS));
    await eventually(async () => (await deliveryRow(deliveryId)).status === 'FAILED', 20_000);
    const d = await deliveryRow(deliveryId);
    expect(d).toMatchObject({ attempts: MAX_ATTEMPTS, claimed_until: null });
    expect(d.last_error).toMatch(/503/);
    expect(received(approvalId)).toEqual([]);
    expect(await deliveryEvents(approvalId)).toEqual([
      ['delivery.queued', null],
      ['delivery.failed', MAX_ATTEMPTS],
    ]);
    expect(await jobsOf(deliveryId)).toEqual([]);
  });
});

describe('a graceful stop', () => {
  it("waits for the deciding instance's send in flight: it ends DELIVERED, recorded before the database connections close", async () => {
    const stopping = await startReplicaOf(decider, { worker: false, env: ENV });
    const task = ok(await stopping.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    const approval = ok(await stopping.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals
      .edges[0].node;
    let release!: () => void;
    hold = { gate: new Promise<void>((r) => (release = r)), release: () => release() };
    ok(await stopping.gql(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest }));
    const approvalId = rawId(approval.id);
    await eventually(async () => received(approvalId).length === 1);

    const { inFlight } = stopping.instance.deps;
    expect(inFlight.size).toBe(1);
    const stopped = stopping.stop();
    // The stop has reached the sends in flight (HTTP is closed by then) with the database still open.
    await eventually(async () => inFlight.stopping, 15_000, 10);
    expect(await stopping.instance.orm.isConnected()).toBe(true);
    hold.release();
    hold = null;
    await stopped;
    expect(inFlight.size).toBe(0);
    const [d] = await decider.sql(`select status, attempts, claimed_until from delivery where approval_id = $1`, [approvalId]);
    expect(d).toEqual({ status: 'DELIVERED', attempts: 1, claimed_until: null });
  });
});
