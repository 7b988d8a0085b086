import pg from 'pg';
import { log as logger } from '../log.js';

// Crash safety for graphile-worker jobs. A worker marks the job it runs with its worker id
// (locked_by); graphile-worker itself frees a lock only after four hours, so a job held by a
// process that was killed would wait that long. Instead every worker proves it is alive with a
// session-level advisory lock named after its worker id, held on one dedicated connection of its
// process (it ends with the process), taken in the startWorker hook, before the worker asks for
// its first job. Every instance sweeps: a job whose worker's lock is free was left by a dead
// worker, and is released (graphile_worker.force_unlock_workers) to run again on any instance.
//
// The lock is seen free on two sweeps at least `graceMs` apart before anything is released: if
// a live instance's lock connection drops (a Postgres restart, a network cut) it reconnects and
// takes its locks again well within that time. A worker id is random per process start and is
// never reused, so one seen dead stays dead. The app role needs no superuser powers: advisory
// locks, the graphile_worker.jobs view and its functions are enough.
//
// Delivery is idempotent for a cooperating agent (same messageId), so running a dead worker's
// job again is safe; running a job twice while both holders are alive is what the lock rules out.

export const JOB_RECOVERY = {
  /** How often every instance looks for jobs held by workers whose process is gone. */
  sweepIntervalMs: 1000,
  /** How long a worker's lock must stay free (seen on two sweeps) before its jobs are released. */
  graceMs: 5000,
};

export const WORKER_LOCKS_APPLICATION_NAME = 'taskbay-worker-locks';

/** The advisory lock key of a worker id (64-bit; its own prefix keeps it apart from other locks). */
const KEY = `hashtextextended('taskbay-worker:' || id, 0)`;

declare global {
  namespace GraphileConfig {
    interface Plugins {
      TaskbayWorkerLiveness: true;
    }
  }
}

export interface JobRecovery {
  /** graphile-worker plugin: each worker holds its lock before it takes a job. */
  plugin: GraphileConfig.Plugin;
  /** Sweeps now (it also runs every sweepIntervalMs); the worker ids whose jobs it released. */
  sweep(): Promise<string[]>;
  /** Sweeps completed so far. */
  readonly sweeps: number;
  close(): Promise<void>;
}

export function startJobRecovery(databaseUrl: string, log: (line: string) => void = (line) => logger.warn(line)): JobRecovery {
  /** Worker ids running in this process: never swept here, and locked again after a reconnect. */
  const live = new Set<string>();
  /** When a worker's lock was first seen free (reset whenever it is seen held). */
  const freeSince = new Map<string, number>();
  let client: pg.Client | null = null;
  let lockedOnClient = new Set<string>();
  let closed = false;
  let sweeps = 0;
  let lastError: string | null = null;

  const connect = async (): Promise<pg.Client> => {
    for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
      if (closed) throw new Error('job recovery is closed');
      const c = new pg.Client({ connectionString: databaseUrl, application_name: WORKER_LOCKS_APPLICATION_NAME });
      c.on('error', (e) => log(`[worker] lock connection: ${e.message}`));
      try {
        await c.connect();
        // If this host vanishes without closing the socket, Postgres ends the session (and frees
        // the locks) after about 25 s instead of the system's TCP default of hours.
        await c.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3');
        const locked = new Set<string>();
        for (const id of live) {
          await c.query(`select pg_advisory_lock(${KEY}) from (select $1::text as id) w`, [id]);
          locked.add(id);
        }
        c.on('end', () => {
          if (client !== c) return;
          client = null;
          // Take the locks again at once: other instances wait graceMs before they act.
          if (!closed) void onConnection(async () => {}).catch(() => {});
        });
        client = c;
        lockedOnClient = locked;
        return c;
      } catch (e) {
        log(`[worker] lock connection: ${(e as Error).message}; retrying`);
        c.end().catch(() => {});
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };

  // One statement at a time on the lock connection (a sweep's transaction is never interleaved).
  let chain: Promise<unknown> = Promise.resolve();
  const onConnection = <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const run = chain.then(async () => fn(client ?? (await connect())));
    chain = run.catch(() => {});
    return run;
  };

  const hold = async (workerId: string) => {
    live.add(workerId);
    for (;;) {
      try {
        await onConnection(async (c) => {
          if (lockedOnClient.has(workerId)) return;
          await c.query(`select pg_advisory_lock(${KEY}) from (select $1::text as id) w`, [workerId]);
          lockedOnClient.add(workerId);
        });
        return;
      } catch (e) {
        // The connection dropped meanwhile: the reconnect takes every live worker's lock.
        if (closed) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const letGo = (workerId: string) => {
    live.delete(workerId);
    return onConnection(async (c) => {
      if (!lockedOnClient.delete(workerId)) return;
      await c.query(`select pg_advisory_unlock(${KEY}) from (select $1::text as id) w`, [workerId]);
    }).catch(() => {});
  };

  /** Frees the jobs of dead workers; the attempt their death cut short is not counted. */
  const release = async (c: pg.Client, workerIds: string[]) => {
    await c.query('begin');
    try {
      // Sweepers of several instances take turns, so each job is released (and given back its
      // attempt) once.
      await c.query(`select pg_advisory_xact_lock(hashtextextended('taskbay:job-recovery', 0))`);
      const { rows } = await c.query<{ id: string; attempts: number; task: string }>(
        `select id, attempts, task_identifier as task from graphile_worker.jobs where locked_by = any($1::text[])`,
        [workerIds],
      );
      await c.query('select graphile_worker.force_unlock_workers($1::text[])', [workerIds]);
      await c.query(
        `select graphile_worker.reschedule_jobs(array[j.id], attempts => greatest(j.attempts - 1, 0))
           from unnest($1::bigint[], $2::int[]) as j(id, attempts)`,
        [rows.map((r) => r.id), rows.map((r) => r.attempts)],
      );
      await c.query('commit');
      if (rows.length) {
        log(`[worker] released ${rows.length} job(s) left by stopped worker(s) ${workerIds.join(', ')}: ${rows.map((r) => `${r.task} #${r.id}`).join(', ')}`);
      }
    } catch (e) {
      await c.query('rollback').catch(() => {});
      throw e;
    }
  };

  const sweep = () =>
    onConnection(async (c) => {
      const { rows } = await c.query<{ id: string }>('select distinct locked_by as id from graphile_worker.jobs where locked_by is not null');
      const others = rows.map((r) => r.id).filter((id) => !live.has(id));
      for (const id of freeSince.keys()) if (!others.includes(id)) freeSince.delete(id);
      if (!others.length) {
        sweeps += 1;
        return [];
      }
      // Free means no live session holds it: take it and give it back at once.
      const { rows: probed } = await c.query<{ id: string; free: boolean }>(`select id, pg_try_advisory_lock(${KEY}) as free from unnest($1::text[]) as id`, [
        others,
      ]);
      const free = probed.filter((r) => r.free).map((r) => r.id);
      if (free.length) await c.query(`select pg_advisory_unlock(${KEY}) from unnest($1::text[]) as id`, [free]);
      const now = Date.now();
      const dead: string[] = [];
      for (const { id, free } of probed) {
        const since = freeSince.get(id);
        if (!free) freeSince.delete(id);
        else if (since === undefined) freeSince.set(id, now);
        else if (now - since >= JOB_RECOVERY.graceMs) dead.push(id);
      }
      if (dead.length) {
        await release(c, dead);
        for (const id of dead) freeSince.delete(id);
      }
      sweeps += 1;
      return dead;
    });

  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return; // still waiting for the database
    sweeping = true;
    sweep()
      .then(
        () => {
          lastError = null;
        },
        (e: Error) => {
          // Once per outage, not every second of it.
          if (!closed && e.message !== lastError) log(`[worker] job recovery: ${e.message}`);
          lastError = e.message;
        },
      )
      .finally(() => (sweeping = false));
  }, JOB_RECOVERY.sweepIntervalMs);
  timer.unref();

  return {
    plugin: {
      name: 'TaskbayWorkerLiveness',
      version: '1.0.0',
      worker: {
        hooks: {
          startWorker: (_ctx, { worker }) => hold(worker.workerId),
          stopWorker: (_ctx, { worker }) => letGo(worker.workerId),
        },
      },
    },
    sweep,
    get sweeps() {
      return sweeps;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await chain;
      await client?.end().catch(() => {});
    },
  };
}
