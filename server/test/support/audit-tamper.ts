import pg from 'pg';
import { checkpointHash } from '../../src/audit/chain.js';
import { eventHash, rowToEvent } from '../../src/audit/log.js';
import type { TestInstance } from './harness.js';

// The attacker of the audit tests: the database owner (superuser) with the append-only triggers
// off, rewriting rows with the product's own hash functions so that every link and hash holds.
// Only what it cannot do, sign, is left to find it.

const seqOrNull = (v: unknown) => (v == null ? null : Number(v));

export function auditAttacker(databaseUrl: string, tenantId: string) {
  async function query<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  }

  /** Runs fn in one transaction as the database owner, with every trigger of the audit tables off. */
  async function asSuperuser(fn: (c: pg.Client) => Promise<unknown>) {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      await c.query('begin');
      await c.query('alter table audit_event disable trigger all');
      await c.query('alter table audit_checkpoint disable trigger all');
      await fn(c);
      await c.query('alter table audit_event enable trigger all');
      await c.query('alter table audit_checkpoint enable trigger all');
      await c.query('commit');
    } catch (e) {
      await c.query('rollback').catch(() => {});
      throw e;
    } finally {
      await c.end();
    }
  }

  /** Recomputes hash and prev_hash of every event of a stream; optionally drops the signatures of the changed ones. */
  async function rehashStream(c: pg.Client, name: string, opts: { stripSignatures?: boolean } = {}) {
    const { rows } = await c.query('select * from audit_event where stream = $1 order by seq', [name]);
    let prev: string | null = null;
    for (const r of rows) {
      const hash = eventHash({ ...rowToEvent(r), prevHash: prev });
      if (hash !== r.hash || prev !== r.prev_hash) {
        await c.query('update audit_event set prev_hash = $2, hash = $3 where seq = $1', [r.seq, prev, hash]);
        if (opts.stripSignatures) await c.query('update audit_event set sig = null, key_id = null where seq = $1', [r.seq]);
      }
      prev = hash;
    }
  }

  /**
   * Rebuilds every checkpoint of the tenant over what the events are now: each head moves to the
   * stream's newest remaining event at or before it (or is dropped with its stream), and the chain
   * is re-hashed. The old signature stays, or `resign` makes a new one.
   */
  async function rehashCheckpoints(c: pg.Client, resign?: (hash: string) => { sig: string | null; keyId: string | null }) {
    const { rows } = await c.query('select * from audit_checkpoint where tenant_id = $1 order by seq', [tenantId]);
    let prev: string | null = null;
    for (const cp of rows) {
      const heads: Record<string, { seq: number; hash: string }> = {};
      for (const [s, head] of Object.entries(cp.heads as Record<string, { seq: number }>)) {
        const { rows: ev } = await c.query('select seq, hash from audit_event where stream = $1 and seq <= $2 order by seq desc limit 1', [s, head.seq]);
        if (ev[0]) heads[s] = { seq: Number(ev[0].seq), hash: ev[0].hash };
      }
      const firstSignedEventSeq = seqOrNull(cp.first_signed_event_seq);
      const hash = checkpointHash({ tenantId, at: new Date(cp.at), heads, prevHash: prev, firstSignedEventSeq });
      const { sig, keyId } = resign ? resign(hash) : { sig: cp.sig, keyId: cp.key_id };
      await c.query('update audit_checkpoint set heads = $2::jsonb, prev_hash = $3, hash = $4, sig = $5, key_id = $6 where seq = $1', [
        cp.seq,
        JSON.stringify(heads),
        prev,
        hash,
        sig,
        keyId,
      ]);
      prev = hash;
    }
  }

  /**
   * What verification could check before signatures: every event of the tenant links and matches
   * its hash, every checkpoint links and matches its hash, every recorded head is present. True
   * after each full rewrite, so only the signatures can find it.
   */
  async function linksAndHashesHold(): Promise<boolean> {
    const events = await query(`select * from audit_event where tenant_id = $1 order by stream, seq`, [tenantId]);
    const present = new Set<string>();
    let prev: Record<string, any> | null = null;
    for (const r of events) {
      const expectedPrev = prev && prev.stream === r.stream ? prev.hash : null;
      if (r.prev_hash !== expectedPrev || eventHash(rowToEvent(r)) !== r.hash) return false;
      present.add(`${r.stream} ${r.hash}`);
      prev = r;
    }
    let prevCp: string | null = null;
    for (const cp of await query(`select * from audit_checkpoint where tenant_id = $1 order by seq`, [tenantId])) {
      const firstSignedEventSeq = seqOrNull(cp.first_signed_event_seq);
      const recomputed = checkpointHash({ tenantId, at: new Date(cp.at), heads: cp.heads, prevHash: cp.prev_hash, firstSignedEventSeq });
      if (cp.prev_hash !== prevCp || recomputed !== cp.hash) return false;
      for (const [s, head] of Object.entries(cp.heads as Record<string, { hash: string }>)) if (!present.has(`${s} ${head.hash}`)) return false;
      prevCp = cp.hash;
    }
    return true;
  }

  /** Copies both audit tables aside (exact rows), for restore() after a tampering test. */
  async function snapshot() {
    await query('drop table if exists snap_event; create table snap_event as select * from audit_event');
    await query('drop table if exists snap_checkpoint; create table snap_checkpoint as select * from audit_checkpoint');
  }

  async function restore() {
    await asSuperuser(async (c) => {
      await c.query('delete from audit_event');
      await c.query('insert into audit_event select * from snap_event');
      await c.query('delete from audit_checkpoint');
      await c.query('insert into audit_checkpoint select * from snap_checkpoint');
    });
  }

  return { asSuperuser, rehashStream, rehashCheckpoints, linksAndHashesHold, snapshot, restore };
}

/** Drops the copies snapshot() made, at the end of a test file (nothing to do when there are none or the instance never started). */
export async function dropAuditSnapshot(t: TestInstance | undefined): Promise<void> {
  await t?.sql('drop table if exists snap_event; drop table if exists snap_checkpoint').catch(() => {});
}
