import type { MikroORM } from '@mikro-orm/postgresql';
import { run, type Runner, type RunnerOptions, type TaskList } from 'graphile-worker';
import { quietLogger } from '../db/orm.js';
import type { Deps } from '../deps.js';
import { log } from '../log.js';
import { taskListOf, type JobDefinition, type JobEnv } from './job.js';
import { startJobRecovery } from './recovery.js';

// The job worker of one instance: graphile-worker running the jobs app.ts lists, with crash
// recovery (recovery.ts) and a replacement for a runner whose worker died.

/** The job runner, and whether one is running now (readiness): not while one is being replaced. */
export type Worker = Runner & { readonly running: boolean };

export async function startWorker(
  orm: MikroORM,
  deps: Deps,
  databaseUrl: string,
  jobs: readonly JobDefinition[],
  wrapTasks: (tasks: TaskList) => TaskList = (tasks) => tasks,
): Promise<Worker> {
  const env: JobEnv = { orm, deps };
  const recovery = startJobRecovery(databaseUrl);
  // A fresh options object per runner: graphile-worker caches what it compiles from one.
  const options = (): RunnerOptions => ({
    connectionString: databaseUrl,
    concurrency: 4,
    pollInterval: 1000,
    noHandleSignals: true,
    logger: quietLogger(),
    taskList: wrapTasks(taskListOf(jobs, env)),
    // Each worker holds its liveness lock before it takes a job (see recovery.ts).
    preset: { plugins: [recovery.plugin] },
  });
  let runner: Runner | null = null;
  try {
    runner = await run(options());
    for (const job of jobs) await job.start?.(runner, env);
  } catch (e) {
    await runner?.stop();
    await recovery.close();
    throw e;
  }
  let current: Runner = runner;
  let running = true;
  // A runner whose promise settled has stopped (or crashed) and takes no more jobs.
  const watchRunner = (r: Runner) =>
    r.promise.then(
      () => {
        if (current === r) running = false;
      },
      () => {
        if (current === r) running = false;
      },
    );
  watchRunner(current);

  // graphile-worker 0.16 does not replace a worker that could not record its job's outcome (the
  // database was unreachable; it "commits seppuku"), so every outage would shrink the pool for
  // good. Such an error replaces the runner; the dead worker's job is released by the sweeper
  // once that worker's lock is gone (recovery.ts).
  let stopping = false;
  let replacing: Promise<void> | null = null;
  const replace = async (old: Runner) => {
    await old.stop().catch(() => {});
    for (let delay = 500; !stopping; delay = Math.min(delay * 2, 10_000)) {
      try {
        current = await run(options());
        supervise(current);
        watchRunner(current);
        running = true;
        log.warn('[worker] replaced the job runner after a worker error');
        return;
      } catch (e) {
        log.error(`[worker] could not start a new job runner: ${(e as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  const supervise = (r: Runner) =>
    r.events.on('worker:fatalError', () => {
      if (stopping || replacing) return;
      running = false;
      replacing = replace(r).finally(() => (replacing = null));
    });
  supervise(current);

  return {
    addJob: (...args) => current.addJob(...args),
    get promise() {
      return current.promise;
    },
    get events() {
      return current.events;
    },
    get running() {
      return running && !stopping;
    },
    async stop() {
      stopping = true;
      await replacing;
      // A runner whose pool failed stops itself; that is not an error here.
      await current.stop().catch((e: Error) => {
        if (!/already stopped/.test(e.message)) throw e;
      });
      await recovery.close();
    },
  };
}
