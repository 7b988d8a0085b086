import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { canonicalSha256 } from '../lib/hashing.js';
import { sql } from '../db/sql.js';
import type { ActorType } from './entities.js';
import { runAppendedEventsHook } from './appended.js';
import { auditEventProblem, type AuditEventType, type AuditPayload } from './catalogue.js';
import { onCommit } from './committed.js';
import { auditSignerOf } from './signing.js';

// The one writer of the audit log. Every state change appends its events in its own
// transaction; each event links to the previous event of its stream, so writers of different
// streams never wait on one global head. The NOTIFY carrying the new seqs is delivered only if
// the transaction commits, which is what feeds subscriptions on every instance. Each event is
// also signed (Ed25519, key outside the database: audit/signing.ts), so whoever can rewrite rows
// and recompute hashes still cannot make a changed event verify.

export const EVENTS_CHANNEL = 'taskbay_events';

export interface Actor {
  type: ActorType;
  id: string | null;
}

export const SYSTEM: Actor = { type: 'system', id: null };

interface AuditEventFields<T extends AuditEventType> {
  tenantId: string;
  stream: string;
  type: T;
  actor: Actor;
  data: AuditPayload<T>;
  /**
   * Not stored: when the wait this event ends began (the request, for its decision; the decision,
   * for its delivery). Metrics measure the latency from it once the event has committed.
   */
  latencyFrom?: Date;
}

/**
 * An event to append: one of the types audit/catalogue.ts declares, with that type's payload
 * (a union over the types, so an object literal is checked against its own type's payload).
 */
export type AuditEventInput<T extends AuditEventType = AuditEventType> = { [K in T]: AuditEventFields<K> }[T];

/** An event appendEvents refuses: undeclared, on a stream of another kind, or with a payload its declaration does not admit. */
export class AuditEventRefused extends Error {}

import type { AuditEventRow } from './entities.js';
export type { AuditEventRow };

export const stream = {
  approval: (id: string) => `approval:${id}`,
  task: (id: string) => `task:${id}`,
  tenant: (id: string) => `tenant:${id}`,
};

/** The hash of one event: everything that describes it, and the hash of its predecessor. */
export function eventHash(e: Omit<AuditEventRow, 'seq' | 'hash' | 'sig' | 'keyId'>): string {
  return canonicalSha256({
    id: e.id,
    tenantId: e.tenantId,
    stream: e.stream,
    type: e.type,
    actorType: e.actorType,
    actorId: e.actorId,
    at: e.at.toISOString(),
    data: e.data,
    prevHash: e.prevHash,
  });
}

/** Events per INSERT (and per NOTIFY: its payload limit is 8000 bytes). */
const CHUNK = 200;

/**
 * Streams whose subject the transaction created under a new random id (a new request): nobody
 * else can name them before it commits. Keyed by the transaction context of the entity manager
 * that opened them; an entry is dropped at its first event, so only that event skips the lock.
 */
const openedStreams = new WeakMap<object, Set<string>>();

/**
 * Declares that this transaction created the subject of `stream` under an id nobody else knows
 * yet (approvals/service.ts, a new request). Its first event then needs neither the stream lock
 * nor a read of the head (there is none). Were that ever wrong, audit_event_chain (one first
 * event per stream) refuses the event and the transaction.
 */
export function streamOpenedHere(em: EntityManager, stream: string): void {
  const trx = em.getTransactionContext<object>();
  if (!trx) throw new Error('streamOpenedHere needs a transaction');
  const set = openedStreams.get(trx);
  if (set) set.add(stream);
  else openedStreams.set(trx, new Set([stream]));
}

/**
 * Appends events (in order) inside the caller's transaction. Must be called with a
 * transactional entity manager: the stream locks and the NOTIFY both end with that transaction.
 * Three statements whatever the number of events (up to 200): the locks of the streams, their
 * heads, and one INSERT that also sends the NOTIFY; one statement for a stream opened here.
 * Throws AuditEventRefused, having written nothing, when an event is not one the catalogue
 * declares (audit/catalogue.ts).
 */
export async function appendEvents<T extends AuditEventType>(em: EntityManager, inputs: readonly AuditEventInput<T>[]): Promise<AuditEventRow[]> {
  if (!em.isInTransaction()) throw new Error('appendEvents needs a transaction');
  if (!inputs.length) return [];
  // Checked before anything is locked or written. What is checked is what is stored and hashed:
  // the JSON round trip (no undefined, no Dates).
  const payloads = inputs.map((input) => {
    const data = JSON.parse(JSON.stringify(input.data)) as Record<string, unknown>;
    const problem = auditEventProblem(input.type, input.stream, data);
    if (problem) throw new AuditEventRefused(problem);
    return data;
  });
  const signer = auditSignerOf(em);
  const heads = new Map<string, string | null>();
  const opened = openedStreams.get(em.getTransactionContext<object>()!);
  const existing: string[] = [];
  for (const input of inputs) {
    if (heads.has(input.stream)) continue;
    heads.set(input.stream, null);
    if (opened?.delete(input.stream)) continue;
    existing.push(input.stream);
  }
  if (existing.length) {
    // Serialises writers of these streams only, until commit, in the order the events name
    // them. The heads are read by the next statement, whose snapshot is taken after the locks.
    await sql(em, 'select pg_advisory_xact_lock(hashtextextended(s, 7)) from jsonb_array_elements_text(?::jsonb) as s', [JSON.stringify(existing)]);
    const rows = await sql<{ stream: string; hash: string | null }>(
      em,
      `select s as stream, (select hash from audit_event where stream = s order by seq desc limit 1) as hash
         from jsonb_array_elements_text(?::jsonb) as s`,
      [JSON.stringify(existing)],
    );
    for (const r of rows) heads.set(r.stream, r.hash);
  }
  const rows: AuditEventRow[] = [];
  for (let i = 0; i < inputs.length; i += CHUNK) {
    const chunk = inputs.slice(i, i + CHUNK).map((input, j) => {
      // What is hashed is exactly what jsonb gives back (the round trip above).
      const data = payloads[i + j]!;
      const base = {
        id: randomUUID(),
        tenantId: input.tenantId,
        stream: input.stream,
        type: input.type,
        actorType: input.actor.type,
        actorId: input.actor.id,
        at: new Date(),
        data,
        prevHash: heads.get(input.stream) ?? null,
      };
      const hash = eventHash(base);
      heads.set(input.stream, hash);
      return { ...base, hash, sig: signer.sign('event', hash), keyId: signer.keyId };
    });
    const seqs = await insertEvents(em, chunk);
    for (const [j, row] of chunk.entries()) rows.push({ ...row, seq: seqs[j]! });
  }
  // What must happen with these events, in their transaction (webhook deliveries: appended.ts).
  await runAppendedEventsHook(em, rows);
  onCommit(
    em,
    rows.map((row, i) => ({ row, latencyFrom: inputs[i]!.latencyFrom })),
  );
  return rows;
}

/**
 * One INSERT of up to CHUNK events that also sends their seqs on EVENTS_CHANNEL (delivered only
 * if the transaction commits). The transaction's id is taken before any seq
 * (pg_current_xact_id() in the first CTE, which the insert reads before its rows take their
 * seqs), so the verifier's wait for the transactions in progress covers every seq handed out
 * (audit/verification.ts, settledHorizon). Rows take their seqs in the order given.
 */
async function insertEvents(em: EntityManager, events: Omit<AuditEventRow, 'seq'>[]): Promise<number[]> {
  const values: string[] = [];
  const params: unknown[] = [];
  for (const e of events) {
    values.push('(?::uuid, ?::uuid, ?::text, ?::text, ?::text, ?::text, ?::timestamptz, ?::jsonb, ?::text, ?::text, ?::text, ?::text)');
    params.push(e.id, e.tenantId, e.stream, e.type, e.actorType, e.actorId, e.at, JSON.stringify(e.data), e.prevHash, e.hash, e.sig, e.keyId);
  }
  const [result] = await sql<{ inserted: { id: string; seq: string | number }[] }>(
    em,
    `with tx as materialized (select pg_current_xact_id() as xid),
     ins as (
       insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash, sig, key_id, xid)
       select v.id, v.tenant_id, v.stream, v.type, v.actor_type, v.actor_id, v.at, v.data, v.prev_hash, v.hash, v.sig, v.key_id, tx.xid
         from tx cross join (values ${values.join(', ')}) as v(id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash, sig, key_id)
       returning id, seq)
     select json_agg(json_build_object('id', id, 'seq', seq)) as inserted,
            pg_notify(?, string_agg(seq::text, ',' order by seq)) as notified
       from ins`,
    [...params, EVENTS_CHANNEL],
  );
  const seqOf = new Map(result!.inserted.map((r) => [r.id, Number(r.seq)]));
  const seqs = events.map((e) => seqOf.get(e.id)!);
  // The order given must be the order of the seqs (a stream's chain follows seq order).
  if (seqs.some((s, j) => s === undefined || (j > 0 && s <= seqs[j - 1]!))) {
    throw new Error(`audit events took seqs out of order: ${seqs.join(',')}`);
  }
  return seqs;
}

export function rowToEvent(r: Record<string, any>): AuditEventRow {
  return {
    seq: Number(r.seq),
    id: r.id,
    tenantId: r.tenant_id,
    stream: r.stream,
    type: r.type,
    actorType: r.actor_type,
    actorId: r.actor_id,
    at: new Date(r.at),
    data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data,
    prevHash: r.prev_hash,
    hash: r.hash,
    sig: r.sig ?? null,
    keyId: r.key_id ?? null,
  };
}
