import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import type { ChainStatus } from './chain.js';
import { eventHash, rowToEvent } from './log.js';

// One stream's audit status (an approval's trail on its page): every event links to the one
// before it in the stream and matches its hash (log.ts's eventHash), and every head a
// checkpoint recorded for this stream is still there. The tenant-wide check is chain.ts's
// verifyChain; this is the same rule for a single stream.

export async function verifyStream(em: EntityManager, tenantId: string, streamName: string): Promise<ChainStatus> {
  const rows = (await sql(em, 'select * from audit_event where tenant_id = ? and stream = ? order by seq', [tenantId, streamName])).map(rowToEvent);
  const hashes = new Set<string>();
  let prev: string | null = null;
  for (const e of rows) {
    if (e.prevHash !== prev) return { ok: false, events: rows.length, firstBrokenSeq: e.seq, reason: `event ${e.seq} does not link to the previous event of ${streamName}` };
    if (eventHash(e) !== e.hash) return { ok: false, events: rows.length, firstBrokenSeq: e.seq, reason: `event ${e.seq} does not match its hash` };
    hashes.add(e.hash);
    prev = e.hash;
  }
  const key = `${tenantId}/${streamName}`;
  const recorded = await sql<{ seq: string; head: string }>(em, 'select seq, heads ->> ? as head from audit_checkpoint where jsonb_exists(heads, ?) order by seq', [key, key]);
  for (const c of recorded) {
    if (!hashes.has(c.head)) return { ok: false, events: rows.length, firstBrokenSeq: null, reason: `${streamName} lost events recorded by checkpoint ${c.seq}` };
  }
  return { ok: true, events: rows.length, firstBrokenSeq: null, reason: null };
}
