import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { canonicalSha256 } from '../lib/hashing.js';
import { AUDIT_LIMITS } from '../limits.js';
import { log } from '../log.js';
import type { AuditEventType } from './catalogue.js';
import { appendEvents, eventHash, rowToEvent, stream, type Actor } from './log.js';
import { AuditPinError, auditPinsOf, type PinnedFailure, type TenantPin } from './pin.js';
import { auditSignerOf, verifySignature } from './signing.js';
import type { AuditProblem } from './verify.js';

// A failed verification of a tenant's log stays failed until an admin acknowledges it: cutting
// the events that showed a rewrite, or restarting the verification, must not make the log look
// sound again. A failure is kept twice: in the append-only, signed audit_failure table (so every
// instance sees it) and in the tenant's pin outside the database (so deleting the row does not
// erase it). An acknowledgement is a signed audit event naming the failure; the failure itself
// is never changed.

export const FAILURE_ACKNOWLEDGED = 'audit.failure_acknowledged' satisfies AuditEventType;

export type FailureFinder = 'worker' | 'request' | 'checkpoint';

export interface AuditFailure {
  id: string;
  tenantId: string;
  foundAt: Date;
  /** null: known only from this instance's pin (its row is gone from the database). */
  foundBy: FailureFinder | null;
  reason: string;
  stream: string | null;
  seq: number | null;
  checkpointSeq: number | null;
}

const failureHash = (f: AuditFailure) =>
  canonicalSha256({
    id: f.id,
    tenantId: f.tenantId,
    foundAt: f.foundAt.toISOString(),
    foundBy: f.foundBy,
    reason: f.reason,
    stream: f.stream,
    seq: f.seq,
    checkpointSeq: f.checkpointSeq,
  });

const pinned = (f: AuditFailure): PinnedFailure => ({
  id: f.id,
  foundAt: f.foundAt.toISOString(),
  reason: f.reason,
  stream: f.stream,
  seq: f.seq,
  checkpointSeq: f.checkpointSeq,
});

// A pin file that does not hold is reported by the verification (audit/verification.ts readPin) and
// left as it is, for whoever looks into it: failures are then kept in the database alone.
async function pinOrNull(em: EntityManager, tenantId: string): Promise<TenantPin | null> {
  try {
    return await auditPinsOf(em).read(tenantId);
  } catch (e) {
    if (e instanceof AuditPinError) return null;
    throw e;
  }
}

async function changePin(em: EntityManager, tenantId: string, change: (pin: TenantPin) => TenantPin): Promise<void> {
  try {
    await auditPinsOf(em).update(tenantId, change);
  } catch (e) {
    if (!(e instanceof AuditPinError)) throw e;
    log.error(`audit pin of tenant ${tenantId} not changed: ${e.message}`);
  }
}

/** The oldest failure of the tenant no admin has acknowledged; null when there is none. */
export async function unacknowledgedFailure(em: EntityManager, tenantId: string): Promise<AuditFailure | null> {
  const signer = auditSignerOf(em);
  const rows = await sql<Record<string, any>>(em, 'select * from audit_failure where tenant_id = ? order by found_at, id', [tenantId]);
  const found: AuditFailure[] = [];
  for (const r of rows) {
    const f: AuditFailure = {
      id: r.id,
      tenantId: r.tenant_id,
      foundAt: new Date(r.found_at),
      foundBy: r.found_by,
      reason: r.reason,
      stream: r.stream ?? null,
      seq: r.seq == null ? null : Number(r.seq),
      checkpointSeq: r.checkpoint_seq == null ? null : Number(r.checkpoint_seq),
    };
    // A row Taskbay did not sign says nothing (it cannot hide one that Taskbay did).
    if (r.key_id === signer.keyId && verifySignature(signer.publicKey, 'failure', failureHash(f), r.sig)) found.push(f);
  }
  const p = (await pinOrNull(em, tenantId))?.failure ?? null;
  if (p && !found.some((f) => f.id === p.id)) {
    found.unshift({ ...p, tenantId, foundAt: new Date(p.foundAt), foundBy: null });
  }
  if (!found.length) return null;
  const acknowledged = await acknowledgedIds(
    em,
    tenantId,
    found.map((f) => f.id),
  );
  if (p && acknowledged.has(p.id)) await changePin(em, tenantId, (cur) => (cur.failure?.id === p.id ? { ...cur, failure: null } : cur));
  return found.find((f) => !acknowledged.has(f.id)) ?? null;
}

/** The failures among `ids` that a signed audit event acknowledges (an event Taskbay did not sign acknowledges nothing). */
async function acknowledgedIds(em: EntityManager, tenantId: string, ids: string[]): Promise<Set<string>> {
  const signer = auditSignerOf(em);
  const rows = await sql(
    em,
    `select * from audit_event where type = ? and tenant_id = ? and data->>'failureId' in (select jsonb_array_elements_text(?::jsonb))`,
    [FAILURE_ACKNOWLEDGED, tenantId, JSON.stringify(ids)],
  );
  const out = new Set<string>();
  for (const e of rows.map(rowToEvent)) {
    if (e.sig && e.keyId === signer.keyId && eventHash(e) === e.hash && verifySignature(signer.publicKey, 'event', e.hash, e.sig)) {
      out.add(String(e.data.failureId));
    }
  }
  return out;
}

/**
 * Records what a verification found, unless a failure of the tenant is already unacknowledged
 * (the first one stands; it is what an admin must look at). Returns the standing failure.
 */
export async function recordFailure(em: EntityManager, tenantId: string, problem: AuditProblem, foundBy: FailureFinder): Promise<AuditFailure> {
  const standing = await unacknowledgedFailure(em, tenantId);
  if (standing) return standing;
  const signer = auditSignerOf(em);
  const f: AuditFailure = {
    id: randomUUID(),
    tenantId,
    foundAt: new Date(),
    foundBy,
    reason: problem.reason.slice(0, AUDIT_LIMITS.failureReasonMax),
    stream: problem.stream,
    seq: problem.seq,
    checkpointSeq: problem.checkpointSeq,
  };
  await sql(
    em,
    `insert into audit_failure (id, tenant_id, found_at, found_by, reason, stream, seq, checkpoint_seq, sig, key_id)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [f.id, tenantId, f.foundAt, foundBy, f.reason, f.stream, f.seq, f.checkpointSeq, signer.sign('failure', failureHash(f)), signer.keyId],
  );
  await changePin(em, tenantId, (cur) => (cur.failure ? cur : { ...cur, failure: pinned(f) }));
  log.error(`audit verification of tenant ${tenantId} failed (${foundBy}): ${f.reason}`);
  return f;
}

/**
 * An admin acknowledges the standing failure (named, so nobody acknowledges one they have not
 * seen): a signed audit event on the tenant's stream, with the failure and the admin's note.
 * Returns false when that failure is not the standing one.
 */
export async function acknowledgeFailure(em: EntityManager, tenantId: string, failureId: string, actor: Actor, note: string): Promise<boolean> {
  const standing = await unacknowledgedFailure(em, tenantId);
  if (!standing || standing.id !== failureId) return false;
  await em.transactional((tem) =>
    appendEvents(tem, [
      {
        tenantId,
        stream: stream.tenant(tenantId),
        type: FAILURE_ACKNOWLEDGED,
        actor,
        data: {
          failureId,
          foundAt: standing.foundAt.toISOString(),
          reason: standing.reason,
          failedStream: standing.stream,
          failedSeq: standing.seq,
          note,
        },
      },
    ]),
  );
  await changePin(em, tenantId, (cur) => (cur.failure?.id === failureId ? { ...cur, failure: null } : cur));
  return true;
}
