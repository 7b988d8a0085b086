import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, sqlWithParams } from '../db/sql.js';
import { rowToEvent } from './log.js';
import { auditSignerOf, type TrustedKey } from './signing.js';
import { checkpointHash, checkpointHashYielding, verifyAudit, type AuditVerification, type CheckpointRecord, type StreamHead } from './verify.js';
import type { ChainCoverage } from './verification-store.js';

// Checkpoints, and the online verification of one stream (the tenant-wide one, off the request
// path, is audit/verification.ts). A stream verifies on its own (links, hashes, signatures);
// checkpoints record stream heads, so a stream that was removed, or whose tail was cut, is found
// even though its remaining events still link. Each tenant has its own signed checkpoint chain,
// so an export of one tenant names no other tenant's streams.

export { checkpointHash };

export interface ChainStatus extends AuditVerification {
  /** The key this instance signs with, published for verifiers (also GET /api/audit/public-key). */
  signingKey: TrustedKey;
  /** Tenant-wide answers (auditChain): how much of the log the answer covers. */
  coverage?: ChainCoverage;
}

export function rowToCheckpoint(r: Record<string, any>): CheckpointRecord {
  return {
    seq: Number(r.seq),
    tenantId: r.tenant_id ?? null,
    at: new Date(r.at),
    heads: typeof r.heads === 'string' ? JSON.parse(r.heads) : r.heads,
    prevHash: r.prev_hash,
    hash: r.hash,
    sig: r.sig ?? null,
    keyId: r.key_id ?? null,
    firstSignedEventSeq: r.first_signed_event_seq == null ? null : Number(r.first_signed_event_seq),
  };
}

/**
 * Verifies one stream (an approval's page) as the tenant-wide verification would, without reading the rest of
 * the tenant's log: the stream's events, and the tenant's signed checkpoints (and legacy global
 * ones) that record a head of it. Costs what the stream costs, not what the tenant's log does.
 */
export async function verifyStream(em: EntityManager, tenantId: string, streamName: string): Promise<ChainStatus> {
  const signer = auditSignerOf(em);
  const events = (await sql(em, 'select * from audit_event where stream = ? order by seq', [streamName])).map(rowToEvent);
  const checkpoints = (
    await sql(
      em,
      `select * from audit_checkpoint
       where (tenant_id = ? and jsonb_exists(heads, ?)) or (tenant_id is null and jsonb_exists(heads, ?))
       order by seq`,
      [tenantId, streamName, `${tenantId}/${streamName}`],
    )
  ).map(rowToCheckpoint);
  const [newest] = await sql<{ first_signed_event_seq: string | null }>(
    em,
    'select first_signed_event_seq from audit_checkpoint where tenant_id = ? order by seq desc limit 1',
    [tenantId],
  );
  const firstSignedEventSeq = newest?.first_signed_event_seq == null ? null : Number(newest.first_signed_event_seq);
  const signingKey = { keyId: signer.keyId, publicKey: signer.publicKey, publicKeyPem: signer.publicKeyPem };
  const scope = { streams: new Set([streamName]), firstSignedEventSeq };
  return { ...verifyAudit({ tenantId, events, checkpoints, trusted: [signingKey], scope }), signingKey };
}

/** Recorded in each checkpoint: from here on a tenant's events must be signed. */
async function firstSignedEvent(em: EntityManager, tenantId: string): Promise<number | null> {
  const [row] = await sql<{ seq: string | null }>(em, 'select min(seq) as seq from audit_event where tenant_id = ? and sig is not null', [tenantId]);
  return row?.seq == null ? null : Number(row.seq);
}

export interface WrittenCheckpoint {
  seq: number;
  tenantId: string;
  streams: number;
}

/**
 * Records, per tenant, the heads of the streams that changed since the tenant's last checkpoint
 * (the first one records every stream, legacy ones included), signed. Runs as a periodic job;
 * serialised by an advisory lock so two instances never fork a checkpoint chain.
 */
export async function writeCheckpoint(em: EntityManager): Promise<WrittenCheckpoint[]> {
  return em.transactional(async (tem) => {
    const signer = auditSignerOf(tem);
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', ['audit_checkpoint']);
    // The streams whose head is not the one their tenant's checkpoints last recorded, compared in
    // Postgres: both sides grow with the log (every stream's head, every checkpoint's heads), and
    // reading them whole into this process each interval held its event loop (issue 11); only
    // what changed comes back.
    const current = await sql<{ tenant_id: string; stream: string; seq: string; hash: string }>(
      tem,
      `with head as (
         select distinct on (tenant_id, stream) tenant_id, stream, seq, hash from audit_event order by tenant_id, stream, seq desc),
       recorded as (
         select distinct on (c.tenant_id, h.key) c.tenant_id, h.key as stream, h.value->>'hash' as hash
           from audit_checkpoint c, jsonb_each(c.heads) h
          where c.tenant_id is not null
          order by c.tenant_id, h.key, c.seq desc)
       select head.tenant_id, head.stream, head.seq, head.hash
         from head left join recorded on recorded.tenant_id = head.tenant_id and recorded.stream = head.stream
        where recorded.hash is distinct from head.hash
        order by head.tenant_id, head.stream`,
    );
    const last = new Map<string, { hash: string; firstSignedEventSeq: number | null }>();
    for (const c of await sql<{ tenant_id: string; hash: string; first_signed_event_seq: string | null }>(
      tem,
      'select distinct on (tenant_id) tenant_id, hash, first_signed_event_seq from audit_checkpoint where tenant_id is not null order by tenant_id, seq desc',
    )) {
      last.set(c.tenant_id, { hash: c.hash, firstSignedEventSeq: c.first_signed_event_seq == null ? null : Number(c.first_signed_event_seq) });
    }
    const changed = new Map<string, Record<string, StreamHead>>();
    for (const r of current) {
      let heads = changed.get(r.tenant_id);
      if (!heads) {
        heads = {};
        changed.set(r.tenant_id, heads);
      }
      heads[r.stream] = { seq: Number(r.seq), hash: r.hash };
    }
    const written: WrittenCheckpoint[] = [];
    for (const [tenantId, heads] of changed) {
      const prev = last.get(tenantId);
      const firstSignedEventSeq = prev?.firstSignedEventSeq ?? (await firstSignedEvent(tem, tenantId));
      const prevHash = prev?.hash ?? null;
      const at = new Date();
      const hash = await checkpointHashYielding({ tenantId, at, heads, prevHash, firstSignedEventSeq });
      // Bound, not quoted into the text: the heads can be a megabyte (db/sql.ts sqlWithParams).
      const [row] = await sqlWithParams<{ seq: string }>(
        tem,
        `insert into audit_checkpoint (tenant_id, at, heads, prev_hash, hash, sig, key_id, first_signed_event_seq)
         values ($1, $2, $3::jsonb, $4, $5, $6, $7, $8) returning seq`,
        [tenantId, at, JSON.stringify(heads), prevHash, hash, signer.sign('checkpoint', hash), signer.keyId, firstSignedEventSeq],
      );
      written.push({ seq: Number(row!.seq), tenantId, streams: Object.keys(heads).length });
    }
    return written;
  });
}
