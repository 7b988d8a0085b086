import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, sqlWithParams } from '../db/sql.js';
import { recordFailure } from './failures.js';
import { eventHash, rowToEvent } from './log.js';
import { auditPinsOf, newerCheckpoint } from './pin.js';
import { auditSignerOf, verifySignature } from './signing.js';
import { verifiedThrough, type ChainStatus } from './verification.js';
import { checkpointHash, checkpointHashYielding, rowToCheckpoint, verifyAudit, type StreamHead } from './verify.js';

// Checkpoints, and the online verification of one stream (the tenant-wide one, off the request
// path, is audit/verification.ts). A stream verifies on its own (links, hashes, signatures);
// checkpoints record stream heads, so a stream that was removed, or whose tail was cut, is found
// even though its remaining events still link. Each tenant has its own signed checkpoint chain,
// so an export of one tenant names no other tenant's streams.

export { checkpointHash };

/**
 * Verifies one stream (an approval's page) as the tenant-wide verification would, without reading the rest of
 * the tenant's log: the stream's events, and the tenant's signed checkpoints (and legacy global
 * ones) that record a head of it. Costs what the stream costs, not what the tenant's log does.
 * A problem becomes the tenant's standing failure (audit/failures.ts).
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
  const legacyHorizon = auditPinsOf(em).legacyHorizon;
  const found = verifyAudit({ tenantId, events, checkpoints, trusted: [signingKey], scope, legacyHorizon });
  // What an approval's page finds stands for the tenant, as what auditChain finds does.
  if (!found.ok) await recordFailure(em, tenantId, found.problems[0]!, 'request');
  return { ...found, signingKey };
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

/** The tenants the log holds events of, one index probe each (audit_event_tenant_seq), not a scan of the log. */
const TENANTS_WITH_EVENTS = `with recursive t as (
    (select tenant_id from audit_event order by tenant_id limit 1)
    union all
    select (select e.tenant_id from audit_event e where e.tenant_id > t.tenant_id order by e.tenant_id limit 1) from t where t.tenant_id is not null)
  select tenant_id as id from t where tenant_id is not null`;

/**
 * The periodic checkpoint: for every tenant whose log verifies (audit/verification.ts
 * verifiedThrough: the stored verification continued up to now, no standing failure, the pin
 * holding), a signed checkpoint of the heads of the streams that changed since its last one, up
 * to the verified seq. A tenant whose log does not verify gets none: Taskbay never signs over a
 * log it could not verify.
 */
export async function writeCheckpoint(em: EntityManager): Promise<WrittenCheckpoint[]> {
  const verified: Record<string, number> = {};
  for (const { id } of await sql<{ id: string }>(em, TENANTS_WITH_EVENTS)) {
    const through = await verifiedThrough(em, id);
    if (through !== null) verified[id] = through;
  }
  if (!Object.keys(verified).length) return [];
  const { written, refused } = await signCheckpoints(em, verified);
  for (const r of refused) await recordFailure(em, r.tenantId, { stream: r.stream, seq: r.seq, checkpointSeq: null, reason: r.reason }, 'checkpoint');
  const pins = auditPinsOf(em);
  for (const w of written) await pins.update(w.tenantId, (p) => ({ ...p, checkpoint: newerCheckpoint(p.checkpoint, w.pinned) }));
  return written.map(({ pinned: _, ...w }) => w);
}

interface Refusal {
  tenantId: string;
  stream: string;
  seq: number;
  reason: string;
}

/** Head events checked between two turns of the event loop. */
const HEADS_PER_TURN = 200;

/**
 * Records, per tenant, the heads (at or before its verified seq) of the streams that changed since
 * the tenant's last checkpoint (the first one records every stream, legacy ones included), signed.
 * Every head is checked once more against its own signature, since the verification does not
 * re-read events it verified before: a head rewritten since is refused, and so is its tenant's
 * checkpoint. Serialised by an advisory lock so two instances never fork a checkpoint chain.
 */
async function signCheckpoints(
  em: EntityManager,
  verified: Record<string, number>,
): Promise<{ written: (WrittenCheckpoint & { pinned: { seq: number; hash: string; at: string } })[]; refused: Refusal[] }> {
  return em.transactional(async (tem) => {
    const signer = auditSignerOf(tem);
    const legacyHorizon = auditPinsOf(tem).legacyHorizon;
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', ['audit_checkpoint']);
    // The streams whose head is not the one their tenant's checkpoints last recorded, compared in
    // Postgres: both sides grow with the log (every stream's head, every checkpoint's heads), and
    // reading them whole into this process each interval would hold its event loop; only
    // what changed comes back.
    const current = await sqlWithParams<Record<string, any>>(
      tem,
      `with verified as (select key::uuid as tenant_id, value::bigint as upto from jsonb_each_text($1::jsonb)),
       head as (
         select distinct on (e.tenant_id, e.stream) e.*
           from audit_event e join verified v on v.tenant_id = e.tenant_id and e.seq <= v.upto
          order by e.tenant_id, e.stream, e.seq desc),
       recorded as (
         select distinct on (c.tenant_id, h.key) c.tenant_id, h.key as stream, h.value->>'hash' as hash
           from audit_checkpoint c, jsonb_each(c.heads) h
          where c.tenant_id is not null
          order by c.tenant_id, h.key, c.seq desc)
       select head.*
         from head left join recorded on recorded.tenant_id = head.tenant_id and recorded.stream = head.stream
        where recorded.hash is distinct from head.hash
        order by head.tenant_id, head.stream`,
      [JSON.stringify(verified)],
    );
    const last = new Map<string, { hash: string; firstSignedEventSeq: number | null }>();
    for (const c of await sql<{ tenant_id: string; hash: string; first_signed_event_seq: string | null }>(
      tem,
      'select distinct on (tenant_id) tenant_id, hash, first_signed_event_seq from audit_checkpoint where tenant_id is not null order by tenant_id, seq desc',
    )) {
      last.set(c.tenant_id, { hash: c.hash, firstSignedEventSeq: c.first_signed_event_seq == null ? null : Number(c.first_signed_event_seq) });
    }
    const changed = new Map<string, Record<string, StreamHead>>();
    const refused = new Map<string, Refusal>();
    for (let i = 0; i < current.length; i++) {
      if (i % HEADS_PER_TURN === HEADS_PER_TURN - 1) await nextTurn();
      const e = rowToEvent(current[i]!);
      if (refused.has(e.tenantId)) continue;
      const why =
        eventHash(e) !== e.hash
          ? 'does not match its hash'
          : e.sig === null
            ? e.seq > legacyHorizon
              ? 'is not signed'
              : null
            : e.keyId !== signer.keyId || !verifySignature(signer.publicKey, 'event', e.hash, e.sig)
              ? 'has a signature that does not verify'
              : null;
      if (why) {
        refused.set(e.tenantId, {
          tenantId: e.tenantId,
          stream: e.stream,
          seq: e.seq,
          reason: `event ${e.seq} of ${e.stream}, the head a checkpoint was to record, ${why}: no checkpoint is signed over it`,
        });
        changed.delete(e.tenantId);
        continue;
      }
      let heads = changed.get(e.tenantId);
      if (!heads) {
        heads = {};
        changed.set(e.tenantId, heads);
      }
      heads[e.stream] = { seq: e.seq, hash: e.hash };
    }
    const written: (WrittenCheckpoint & { pinned: { seq: number; hash: string; at: string } })[] = [];
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
      const seq = Number(row!.seq);
      written.push({ seq, tenantId, streams: Object.keys(heads).length, pinned: { seq, hash, at: at.toISOString() } });
    }
    return { written, refused: [...refused.values()] };
  });
}
