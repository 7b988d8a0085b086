import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stream } from '../../../src/audit/log.js';
import { AUDIT_FULL_VERIFY_SCHEDULE_JOB } from '../../../src/audit/full-verification-schedule.js';
import { auditAttacker, dropAuditSnapshot } from '../../support/audit-tamper.js';
import { acknowledgeAuditFailure, eventually, startTestInstance, type TestInstance, rawId } from '../../support/harness.js';

// Issue 11 (audit): the incremental verification after each checkpoint reads only events it has
// not verified, so an event rewritten after it was verified was found only when an admin asked
// for a full verification. The worker now runs one for every tenant every
// TASKBAY_AUDIT_FULL_VERIFY_INTERVAL seconds (audit/full-verification-schedule.ts); its result is
// stored, shown by auditChain, and on /metrics. The schedule's job is brought forward here (as
// the database would run it when due) instead of waiting an interval.

const INTERVAL = 3600;
let t: TestInstance;
let attacker: ReturnType<typeof auditAttacker>;
let tenantId: string;

const CHAIN = `{ auditChain { ok firstBrokenSeq firstBrokenStream reason fullVerification { state finishedAt } } }`;
const CREATE = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "x" } }) { id } }`;

async function chain() {
  const r = await t.gql(CHAIN);
  expect(r.errors).toBeUndefined();
  return r.data.auditChain;
}

const scheduled = async () =>
  (await t.sql<{ run_at: Date }>(`select run_at from graphile_worker.jobs where key = $1`, [AUDIT_FULL_VERIFY_SCHEDULE_JOB])).map((r) => new Date(r.run_at));

/** Runs the schedule now (its queued job made due) and waits for the full verification it asks for. */
async function scheduledRun(after: Date | null) {
  await t.sql(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [AUDIT_FULL_VERIFY_SCHEDULE_JOB]);
  return eventually(async () => {
    const c = await chain();
    return c.fullVerification?.state === 'DONE' && (!after || new Date(c.fullVerification.finishedAt) > after) && c;
  }, 25_000);
}

async function metric(name: string): Promise<number | null> {
  const text = await (await fetch(`${t.instance.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : null;
}

beforeAll(async () => {
  t = await startTestInstance({ env: { TASKBAY_CHECKPOINT_INTERVAL: '86400', TASKBAY_AUDIT_FULL_VERIFY_INTERVAL: String(INTERVAL) } });
  const [admin] = await t.sql(`select tenant_id from app_user where email = 'admin@localhost'`);
  tenantId = admin.tenant_id;
  attacker = auditAttacker(t.databaseUrl, admin.tenant_id);
});

afterAll(async () => {
  await dropAuditSnapshot(t);
  await t?.stop();
});

describe('the scheduled full verification of the audit log', () => {
  it('is queued once, an interval ahead; each run queues the next and verifies every tenant', async () => {
    const [first, ...more] = await scheduled();
    expect(more).toEqual([]);
    // An interval ahead: a minute either way tells that from "now" or another interval (a schedule, not a speed).
    expect(Math.abs(first!.getTime() - (Date.now() + INTERVAL * 1000))).toBeLessThan(60_000);
    expect(await metric('taskbay_audit_full_verification_last_timestamp_seconds')).toBe(0);
    expect(await metric('taskbay_audit_full_verification_failed_tenants')).toBe(0);

    expect((await t.gql(CREATE, { title: 'before the scheduled run' })).errors).toBeUndefined();
    const before = new Date();
    const done = await scheduledRun(null);
    expect(done.ok).toBe(true);
    // The next run, an interval after this one's (brought forward) time.
    const [next] = await eventually(async () => {
      const s = await scheduled();
      return s.length === 1 && s[0]!.getTime() > Date.now() + (INTERVAL - 60) * 1000 && s;
    });
    expect(next!.getTime()).toBeLessThan(Date.now() + (INTERVAL + 60) * 1000);
    expect(await metric('taskbay_audit_full_verification_failed_tenants')).toBe(0);
    // A scrape whose summary read takes over 1 s leaves the gauges as they were (observability/
    // metrics.ts), as under a loaded test run: the next scrapes show the finished run.
    await eventually(
      async () => ((await metric('taskbay_audit_full_verification_last_timestamp_seconds')) ?? 0) * 1000 >= Math.floor(before.getTime() / 1000) * 1000,
      15_000,
    );
  });

  it('finds an event rewritten after it was verified: auditChain names it and /metrics says not ok', async () => {
    const created = await t.gql(CREATE, { title: 'to be rewritten' });
    const name = stream.approval(rawId(created.data.createApproval.id));
    const [event] = await t.sql(`select seq::int from audit_event where stream = $1`, [name]);
    const prior = (await chain()).fullVerification?.finishedAt;
    const verified = await scheduledRun(prior ? new Date(prior) : null);
    expect(verified.ok).toBe(true);

    await attacker.snapshot();
    try {
      await attacker.asSuperuser(async (c) => {
        await c.query(`update audit_event set data = data || '{"title":"forged"}' where seq = $1`, [event.seq]);
        await attacker.rehashStream(c, name);
      });
      // The stored verification covers the event: only a full run reads it again.
      expect((await chain()).ok).toBe(true);
      const found = await scheduledRun(new Date(verified.fullVerification.finishedAt));
      expect(found).toMatchObject({ ok: false, firstBrokenSeq: event.seq, firstBrokenStream: name });
      expect(found.reason).toMatch(/signature that does not verify/);
      expect(await metric('taskbay_audit_full_verification_failed_tenants')).toBe(1);
      // The failure stands (audit/failures.ts) and is counted until an admin acknowledges it.
      expect(await metric('taskbay_audit_failed_tenants')).toBe(1);
      const [row] = await t.sql(`select last_full_ok, last_full_problem from audit_verification`);
      expect(row).toMatchObject({ last_full_ok: false });
      expect(row.last_full_problem).toMatch(/signature that does not verify/);
    } finally {
      await attacker.restore();
    }
    expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });
    // A scrape's figures are shared for up to a second (observability/metrics.ts): the next ones say 0.
    await eventually(async () => (await metric('taskbay_audit_failed_tenants')) === 0);
  });
});
