import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { canonicalSha256 } from '../lib/hashing.js';
import { sql } from '../db/sql.js';
import type { ActorType } from './entities.js';
import { runAppendedEventsHook } from './appended.js';
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

export interface AuditEventInput {
  tenantId: string;
  stream: string;
  type: string;
  actor: Actor;
  data: Record<string, unknown>;
  /**
   * Not stored: when the wait this event ends began (the request, for its decision; the decision,
   * for its delivery). Metrics measure the latency from it once the event has committed.
   */
  latencyFrom?: Date;
}

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

/**
 * Appends events (in order) inside the caller's transaction. Must be called with a
 * transactional entity manager: the stream lock and the NOTIFY both end with that transaction.
 */
export async function appendEvents(em: EntityManager, inputs: AuditEventInput[]): Promise<AuditEventRow[]> {
  if (!em.isInTransaction()) throw new Error('appendEvents needs a transaction');
  const signer = auditSignerOf(em);
  const rows: AuditEventRow[] = [];
  const latencies: (Date | undefined)[] = [];
  const heads = new Map<string, string | null>();
  for (const input of inputs) {
    if (!heads.has(input.stream)) {
      // Serialises writers of this stream only, until commit. pg_current_xact_id(): the transaction
      // has its id before its event takes a seq, so the verifier's wait for the transactions in
      // progress covers every seq handed out before it (audit/verification.ts, settledHorizon).
      await sql(em, 'select pg_advisory_xact_lock(hashtextextended(?, 7)), pg_current_xact_id()', [input.stream]);
      const [head] = await sql<{ hash: string }>(
        em,
        'select hash from audit_event where stream = ? order by seq desc limit 1',
        [input.stream],
      );
      heads.set(input.stream, head?.hash ?? null);
    }
    // JSON round trip: what is hashed is exactly what jsonb gives back (no undefined, no Dates).
    const data = JSON.parse(JSON.stringify(input.data)) as Record<string, unknown>;
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
    const sig = signer.sign('event', hash);
    const [inserted] = await sql<{ seq: string }>(
      em,
      `insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash, sig, key_id)
       values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?) returning seq`,
      [base.id, base.tenantId, base.stream, base.type, base.actorType, base.actorId, base.at, JSON.stringify(data), base.prevHash, hash, sig, signer.keyId],
    );
    heads.set(input.stream, hash);
    rows.push({ ...base, seq: Number(inserted!.seq), hash, sig, keyId: signer.keyId });
    latencies.push(input.latencyFrom);
  }
  // What must happen with these events, in their transaction (webhook deliveries: appended.ts).
  await runAppendedEventsHook(em, rows);
  if (rows.length) {
    // Payload limit is 8000 bytes: send seqs in chunks.
    for (let i = 0; i < rows.length; i += 200) {
      const seqs = rows.slice(i, i + 200).map((r) => r.seq);
      await sql(em, 'select pg_notify(?, ?)', [EVENTS_CHANNEL, seqs.join(',')]);
    }
    onCommit(em, rows.map((row, i) => ({ row, latencyFrom: latencies[i] })));
  }
  return rows;
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
