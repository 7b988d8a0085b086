import type { Runner } from 'graphile-worker';
import { sql } from '../db/sql.js';
import type { JobDefinition } from '../jobs/job.js';
import { nextCheckpointAt } from './checkpoints.js';
import { requestFullVerification } from './verification-job.js';

// A full verification of every tenant's audit log every TASKBAY_AUDIT_FULL_VERIFY_INTERVAL
// seconds (default daily). The incremental verification after each checkpoint only reads events
// it has not verified; an event rewritten after it was verified is found by a full run (and on
// its approval's own page). As the checkpoints (checkpoints.ts): one schedule job, kept queued
// across instances and restarts by its job key, queues the next one at its own scheduled time
// plus the interval, then asks for a full verification of each tenant exactly as verifyAuditChain
// does (verification-job.ts: one per tenant queued or running at a time, across instances, in
// the tenant's own queue). The result is stored with the verification (last_full_*) and shown
// by auditChain and /metrics.

export const AUDIT_FULL_VERIFY_SCHEDULE_JOB = 'audit_full_verify_schedule';

const spec = (runAt: Date, jobKeyMode: 'replace' | 'preserve_run_at') => ({
  runAt,
  jobKey: AUDIT_FULL_VERIFY_SCHEDULE_JOB,
  jobKeyMode,
  maxAttempts: 1,
});

/** At start: queue the first run unless one is queued; one due later than the (maybe shortened) interval allows is brought forward. */
async function schedule(runner: Runner, everySeconds: number) {
  const due = new Date(Date.now() + everySeconds * 1000);
  const queued = await runner.addJob(AUDIT_FULL_VERIFY_SCHEDULE_JOB, {}, spec(due, 'preserve_run_at'));
  if (new Date(queued.run_at) > due) await runner.addJob(AUDIT_FULL_VERIFY_SCHEDULE_JOB, {}, spec(due, 'replace'));
}

export const auditFullVerifyScheduleJob: JobDefinition = {
  name: AUDIT_FULL_VERIFY_SCHEDULE_JOB,
  async run(_payload, helpers, { orm, deps }) {
    // The next one first, so a failed run does not end the schedule.
    const every = deps.config.auditFullVerifyIntervalSeconds;
    await helpers.addJob(AUDIT_FULL_VERIFY_SCHEDULE_JOB, {}, spec(nextCheckpointAt(helpers.job.run_at, every), 'replace'));
    const em = orm.em.fork();
    const tenants = await sql<{ id: string }>(em, 'select id from tenant order by id');
    for (const { id } of tenants) await requestFullVerification(em, id);
  },
  start: (runner, { deps }) => schedule(runner, deps.config.auditFullVerifyIntervalSeconds),
};
