import type { Runner } from 'graphile-worker';
import type { JobDefinition } from '../jobs/job.js';
import { checkpointThenVerify } from './verification-job.js';

export const CHECKPOINT_JOB = 'audit_checkpoint';

// Audit checkpoints every TASKBAY_CHECKPOINT_INTERVAL seconds, exactly (a crontab has minute
// resolution): each checkpoint job queues the next one at its own scheduled time plus the
// interval. The job key keeps one queued across instances and restarts; one attempt each, the
// next one comes anyway.
const CHECKPOINT_JOB_KEY = CHECKPOINT_JOB;

const checkpointSpec = (runAt: Date, jobKeyMode: 'replace' | 'preserve_run_at') => ({
  runAt,
  jobKey: CHECKPOINT_JOB_KEY,
  jobKeyMode,
  maxAttempts: 1,
});

/** The scheduled time plus the interval (so the schedule does not drift), or from now when late. */
export function nextCheckpointAt(scheduledAt: Date, everySeconds: number, now = new Date()): Date {
  const next = new Date(scheduledAt.getTime() + everySeconds * 1000);
  return next > now ? next : new Date(now.getTime() + everySeconds * 1000);
}

/** At start: queue the first checkpoint unless one is queued; one due later than the (maybe
 *  shortened) interval allows is brought forward. A restart never postpones the next one. */
async function scheduleCheckpoints(runner: Runner, everySeconds: number) {
  const due = new Date(Date.now() + everySeconds * 1000);
  const queued = await runner.addJob(CHECKPOINT_JOB, {}, checkpointSpec(due, 'preserve_run_at'));
  if (new Date(queued.run_at) > due) await runner.addJob(CHECKPOINT_JOB, {}, checkpointSpec(due, 'replace'));
}

export const checkpointJob: JobDefinition = {
  name: CHECKPOINT_JOB,
  async run(_payload, helpers, { orm, deps }) {
    // The next one is queued first, so a failed checkpoint does not end the schedule.
    const every = deps.config.checkpointIntervalSeconds;
    await helpers.addJob(CHECKPOINT_JOB, {}, checkpointSpec(nextCheckpointAt(helpers.job.run_at, every), 'replace'));
    await checkpointThenVerify(orm.em.fork());
  },
  start: (runner, { deps }) => scheduleCheckpoints(runner, deps.config.checkpointIntervalSeconds),
};
