import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { AuditEventRow } from '../audit/module.js';

// Wakes a call waiting on this instance for a person's decision (wait.ts) as soon as the
// transaction that appended an event of its request commits here, instead of after the LISTEN
// loop's NOTIFY, event load and pub/sub (docs/PERFORMANCE.md "MCP gateway": the largest share of
// approve -> upstream). A decision made on another instance still arrives through LISTEN, which
// stays the waiters' other source and the fallback: a wake only makes the waiter read the row again.

type Transaction = { parentTransaction?: Transaction };

export class LocalWakes {
  private readonly waiting = new Map<string, Set<() => void>>();
  /** Requests whose events a transaction appended, by its top-level transaction, until it commits. */
  private readonly pending = new WeakMap<object, Set<string>>();

  /** Calls `wake` after each commit here that appended an event of this request; returns the unsubscribe. */
  watch(approvalId: string, wake: () => void): () => void {
    const set = this.waiting.get(approvalId) ?? new Set<() => void>();
    this.waiting.set(approvalId, set);
    set.add(wake);
    return () => {
      set.delete(wake);
      if (!set.size && this.waiting.get(approvalId) === set) this.waiting.delete(approvalId);
    };
  }

  /** In the appending transaction (the module's appendedEvents): notes the requests someone here waits on. */
  appended(tem: EntityManager, rows: readonly AuditEventRow[]): void {
    if (!this.waiting.size) return;
    let trx = tem.getTransactionContext<Transaction>();
    while (trx?.parentTransaction) trx = trx.parentTransaction;
    if (!trx) return;
    for (const row of rows) {
      const id = (row.data as { approvalId?: unknown }).approvalId;
      if (typeof id !== 'string' || !this.waiting.has(id) || row.stream !== `approval:${id}`) continue;
      const ids = this.pending.get(trx) ?? new Set<string>();
      this.pending.set(trx, ids);
      ids.add(id);
    }
  }

  /** After a top-level transaction committed (never for one that rolled back). */
  committed(trx: object | undefined): void {
    const ids = trx ? this.pending.get(trx) : undefined;
    if (!ids) return;
    this.pending.delete(trx!);
    for (const id of ids) for (const wake of this.waiting.get(id) ?? []) wake();
  }
}

const registries = new WeakMap<MikroORM, LocalWakes>();

/** Made when the module starts on this ORM (module.ts): hears every commit of its entity managers. */
export function startLocalWakes(orm: MikroORM): LocalWakes {
  const wakes = new LocalWakes();
  registries.set(orm, wakes);
  orm.em.getEventManager().registerSubscriber({
    afterTransactionCommit: ({ transaction }) => wakes.committed(transaction as object | undefined),
  });
  return wakes;
}

/** This instance's wakes; null where the module was not started (the waiter then hears LISTEN only). */
export function localWakesOf(orm: MikroORM): LocalWakes | null {
  return registries.get(orm) ?? null;
}
