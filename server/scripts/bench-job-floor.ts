import pg from 'pg';
import { run } from 'graphile-worker';
import { quietLogger } from '../src/db/orm.js';

// The floor under "decision -> agent receipt" (issue 11): how long graphile-worker takes from a
// job's commit to its handler starting, on the same database in the same run, with nothing else
// to do (a worker of the bench process, one no-op task the server's worker does not know, so
// only this one takes it). Taskbay's receipt adds to it the decision's own commit and after-
// commit work, the delivery's one statement, the signature and the A2A request.

const TASK = 'bench_job_floor';

export async function jobPickupFloor(ownerUrl: string, jobs: number, pct: (xs: number[], p: number) => number) {
  const waiting = new Map<string, (at: number) => void>();
  const runner = await run({
    connectionString: ownerUrl,
    concurrency: 1,
    pollInterval: 1000,
    noHandleSignals: true,
    logger: quietLogger(),
    taskList: {
      [TASK]: async (payload) => {
        const at = performance.now();
        waiting.get((payload as { i: string }).i)?.(at);
      },
    },
  });
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  const latencies: number[] = [];
  try {
    for (let i = 0; i < jobs + 2; i++) {
      const id = String(i);
      const started = new Promise<number>((res) => waiting.set(id, res));
      await client.query(`select graphile_worker.add_job($1::text, json_build_object('i', $2::text))`, [TASK, id]);
      const committed = performance.now();
      const at = await Promise.race([started, new Promise<number>((_, rej) => setTimeout(() => rej(new Error(`job ${id} not taken in 10 s`)), 10_000))]);
      if (i >= 2) latencies.push(at - committed); // the first two warm the runner
    }
  } finally {
    await client.end();
    await runner.stop();
  }
  return latencySummary(latencies, pct);
}

/** n, p50, p90, p99 and the slowest of a list of latencies (ms, one decimal): the receipt rows. */
export function latencySummary(latencies: number[], pct: (xs: number[], p: number) => number) {
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    n: latencies.length,
    p50Ms: r1(pct(latencies, 50)),
    p90Ms: r1(pct(latencies, 90)),
    p99Ms: r1(pct(latencies, 99)),
    maxMs: r1(Math.max(...latencies)),
  };
}
