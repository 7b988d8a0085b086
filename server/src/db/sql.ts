import type { EntityManager } from '@mikro-orm/postgresql';
import type { Knex } from 'knex';

// Raw SQL goes to the pooled pg connection directly (docs/PERFORMANCE.md). The text is formatted exactly as
// MikroORM's `Connection#execute` formats it (values inlined by the platform, the simple query
// protocol) and runs on the same pool or the same transaction's connection; what is skipped is
// knex's runner around it (query builder object, events, several awaits per statement), which
// profiled at about half a millisecond of the server's thread per statement, more than pg itself.
// Errors are pg's own: knex would prefix the statement, values included, to the message.

type PgConnection = { query(text: string, values?: unknown[]): Promise<unknown> };
type PoolClient = { acquireConnection(): Promise<PgConnection>; releaseConnection(c: PgConnection): Promise<void> | void };
type ResultShaper = { transformRawResult<T>(res: unknown, method: 'all'): T };

/** Runs fn on the entity manager's transaction connection, or on a pooled one released after. */
async function onConnection<R>(em: EntityManager, fn: (c: PgConnection) => Promise<R>): Promise<R> {
  const trx = em.getTransactionContext<Knex.Transaction>();
  if (trx?.isCompleted()) throw new Error('the transaction has already ended');
  // A transaction's client hands out that transaction's one connection (and releases nothing).
  const client = (trx ? trx.client : em.getConnection().getKnex().client) as unknown as PoolClient;
  const pgConnection = await client.acquireConnection();
  try {
    return await fn(pgConnection);
  } finally {
    if (!trx) await client.releaseConnection(pgConnection);
  }
}

/** Runs raw SQL inside the entity manager's current transaction (if any). */
export async function sql<T = Record<string, unknown>>(em: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  const formatted = params.length ? em.getPlatform().formatQuery(text, params) : text;
  const res = await onConnection(em, (c) => c.query(formatted));
  return (em.getConnection() as unknown as ResultShaper).transformRawResult<T[]>(res, 'all');
}

/**
 * Like sql(), with the values sent apart as bind parameters ($1, $2, ...) instead of written into
 * the text: for a large value (an audit checkpoint's heads, a megabyte of JSON at 10,000 streams),
 * quoting it into the statement cost the event loop over 100 ms at once.
 */
export async function sqlWithParams<T = Record<string, unknown>>(em: EntityManager, text: string, params: unknown[]): Promise<T[]> {
  return onConnection(em, async (c) => ((await c.query(text, params)) as { rows: T[] }).rows);
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
