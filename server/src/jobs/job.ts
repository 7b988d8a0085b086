import type { MikroORM } from '@mikro-orm/postgresql';
import type { JobHelpers, Runner, TaskList } from 'graphile-worker';
import type { Deps } from '../deps.js';

// A background job of one domain, defined next to the code it runs (approvals: expiry, delivery:
// deliver, audit: checkpoints, commands: outcome reconciliation). app.ts lists them (JOBS) and
// jobs/worker.ts runs that list, so this module imports no domain.

export interface JobEnv {
  orm: MikroORM;
  deps: Deps;
}

export interface JobDefinition {
  /** graphile-worker's task identifier, which producers queue under; stored with queued jobs, so never renamed. */
  name: string;
  /** One attempt; a throw lets the queue retry it with backoff (up to the job's max attempts). */
  run(payload: unknown, helpers: JobHelpers, env: JobEnv): Promise<void>;
  /** Once, after the worker started (a schedule that keeps itself going queues its first job here). */
  start?(runner: Runner, env: JobEnv): Promise<void>;
}

export function taskListOf(jobs: readonly JobDefinition[], env: JobEnv): TaskList {
  const list: TaskList = {};
  for (const job of jobs) {
    if (list[job.name]) throw new Error(`two jobs are named ${job.name}`);
    list[job.name] = (payload, helpers) => job.run(payload, helpers, env);
  }
  return list;
}
