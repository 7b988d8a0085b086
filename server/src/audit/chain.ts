import type { EntityManager } from '@mikro-orm/postgresql';
import { canonicalJson, sha256Hex } from '../approvals/digest.js';
import { sql } from '../db/sql.js';
import { eventHash, rowToEvent } from './log.js';

// Verification and checkpoints of the audit chain. A stream verifies on its own (links and
// hashes); checkpoints record stream heads, so a stream that was removed, or whose tail was cut,
// is found even though its remaining events still link.

export interface ChainStatus {
  ok: boolean;
  events: number;
  firstBrokenSeq: number | null;
  reason: string | null;
}

const headKey = (tenantId: string, stream: string) => `${tenantId}/${stream}`;

export function checkpointHash(c: { at: Date; heads: Record<string, string>; prevHash: string | null }): string {
  return sha256Hex(canonicalJson({ at: c.at.toISOString(), heads: c.heads, prevHash: c.prevHash }));
}

/** Verifies every stream of a tenant and every checkpoint entry for it. */
export async function verifyChain(em: EntityManager, tenantId: string): Promise<ChainStatus> {
  const rows = (await sql(em, 'select * from audit_event where tenant_id = ? order by stream, seq', [tenantId])).map(
    rowToEvent,
  );
  let firstBroken: { seq: number; reason: string } | null = null;
  const broken = (seq: number, reason: string) => {
    if (!firstBroken || seq < firstBroken.seq) firstBroken = { seq, reason };
  };
  const hashesByStream = new Map<string, Set<string>>();
  let prev: (typeof rows)[number] | null = null;
  for (const e of rows) {
    const expectedPrev = prev && prev.stream === e.stream ? prev.hash : null;
    if (e.prevHash !== expectedPrev) broken(e.seq, `event ${e.seq} does not link to the previous event of ${e.stream}`);
    else if (eventHash(e) !== e.hash) broken(e.seq, `event ${e.seq} does not match its hash`);
    let set = hashesByStream.get(e.stream);
    if (!set) hashesByStream.set(e.stream, (set = new Set()));
    set.add(e.hash);
    prev = e;
  }

  const checkpoints = await sql<Record<string, any>>(em, 'select * from audit_checkpoint order by seq');
  let prevCheckpoint: string | null = null;
  let checkpointProblem: string | null = null;
  for (const c of checkpoints) {
    const heads = (typeof c.heads === 'string' ? JSON.parse(c.heads) : c.heads) as Record<string, string>;
    const at = new Date(c.at);
    if (c.prev_hash !== prevCheckpoint || checkpointHash({ at, heads, prevHash: c.prev_hash }) !== c.hash) {
      checkpointProblem ??= `checkpoint ${c.seq} is altered`;
    }
    prevCheckpoint = c.hash;
    for (const [key, hash] of Object.entries(heads)) {
      const slash = key.indexOf('/');
      if (key.slice(0, slash) !== tenantId) continue;
      const s = key.slice(slash + 1);
      if (!hashesByStream.get(s)?.has(hash)) {
        checkpointProblem ??= `stream ${s} lost events recorded by checkpoint ${c.seq}`;
      }
    }
  }
  const fb = firstBroken as { seq: number; reason: string } | null;
  return {
    ok: !fb && !checkpointProblem,
    events: rows.length,
    firstBrokenSeq: fb?.seq ?? null,
    reason: fb?.reason ?? checkpointProblem,
  };
}

/**
 * Records the heads of the streams that changed since the last checkpoint. Runs as a periodic
 * job; serialised by an advisory lock so two instances never fork the checkpoint chain.
 */
export async function writeCheckpoint(em: EntityManager): Promise<{ seq: number; streams: number } | null> {
  return em.transactional(async (tem) => {
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', ['audit_checkpoint']);
    const current = await sql<{ tenant_id: string; stream: string; hash: string }>(
      tem,
      'select distinct on (stream) tenant_id, stream, hash from audit_event order by stream, seq desc',
    );
    const known = new Map<string, string>();
    const all = await sql<{ heads: any; hash: string }>(tem, 'select heads, hash from audit_checkpoint order by seq');
    for (const c of all) {
      const heads = typeof c.heads === 'string' ? JSON.parse(c.heads) : c.heads;
      for (const [k, v] of Object.entries(heads)) known.set(k, v as string);
    }
    const heads: Record<string, string> = {};
    for (const r of current) {
      const key = headKey(r.tenant_id, r.stream);
      if (known.get(key) !== r.hash) heads[key] = r.hash;
    }
    if (!Object.keys(heads).length) return null;
    const prevHash = all.length ? all[all.length - 1]!.hash : null;
    const at = new Date();
    const hash = checkpointHash({ at, heads, prevHash });
    const [row] = await sql<{ seq: string }>(
      tem,
      'insert into audit_checkpoint (at, heads, prev_hash, hash) values (?, ?::jsonb, ?, ?) returning seq',
      [at, JSON.stringify(heads), prevHash, hash],
    );
    return { seq: Number(row!.seq), streams: Object.keys(heads).length };
  });
}
