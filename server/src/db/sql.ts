import type { EntityManager } from '@mikro-orm/postgresql';

/** Runs raw SQL inside the entity manager's current transaction (if any). */
export async function sql<T = Record<string, unknown>>(em: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  return em.getConnection().execute<T[]>(text, params, 'all', em.getTransactionContext());
}

/** Adds a graphile-worker job in the same transaction as the state change that causes it. */
export async function addJob(
  em: EntityManager,
  task: string,
  payload: Record<string, unknown>,
  opts: { runAt?: Date; maxAttempts?: number; jobKey?: string; queueName?: string } = {},
): Promise<void> {
  await sql(
    em,
    `select graphile_worker.add_job(?::text, ?::json, queue_name => ?::text, run_at => ?::timestamptz, max_attempts => ?::int, job_key => ?::text)`,
    [task, JSON.stringify(payload), opts.queueName ?? null, opts.runAt ?? null, opts.maxAttempts ?? null, opts.jobKey ?? null],
  );
}
