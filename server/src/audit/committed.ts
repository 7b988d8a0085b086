import type { MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@mikro-orm/postgresql';
import { errorForLog, log } from '../log.js';
import type { AuditEventRow } from './entities.js';

// Events this instance appended, handed to an observer once their transaction has committed
// (never for one that rolled back). The one place that counts what happened here (metrics):
// each event is seen by the instance that wrote it, so the counts of several instances add up.
// (The LISTEN loop sees every instance's events, and would count each of them on every instance.)

export interface CommittedEvent {
  row: AuditEventRow;
  /** AuditEventInput.latencyFrom: when the wait this event ends began. */
  latencyFrom?: Date;
}

export type CommittedEventsObserver = (events: CommittedEvent[]) => void;

const EXTENSION = 'taskbay.committedEvents';
/** Keyed by the top-level transaction (a savepoint's events wait for the outermost commit). */
const pending = new WeakMap<object, CommittedEvent[]>();

type Transaction = { parentTransaction?: Transaction };

export function observeCommittedEvents(orm: MikroORM, observer: CommittedEventsObserver) {
  orm.config.registerExtension(EXTENSION, () => true);
  orm.em.getEventManager().registerSubscriber({
    afterTransactionCommit({ transaction }) {
      const events = transaction ? pending.get(transaction) : undefined;
      if (!events) return;
      pending.delete(transaction);
      // An observer's failure must not fail a transaction that has already committed.
      try {
        observer(events);
      } catch (e) {
        log.error({ err: errorForLog(e) }, 'committed-events observer failed');
      }
    },
  });
}

/** Called by appendEvents inside the transaction; nothing is kept unless an observer is registered. */
export function onCommit(em: EntityManager, events: CommittedEvent[]) {
  if (!em.config.getExtension(EXTENSION)) return;
  let trx = em.getTransactionContext<Transaction>();
  while (trx?.parentTransaction) trx = trx.parentTransaction;
  if (!trx) return;
  const list = pending.get(trx);
  if (list) list.push(...events);
  else pending.set(trx, [...events]);
}
