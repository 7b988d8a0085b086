import type { EntityManager } from '@mikro-orm/postgresql';
import { canonicalSha256Yielding } from '../lib/hashing.js';
import { sql, sqlWithParams } from '../db/sql.js';
import { auditSignerOf, verifySignature } from './signing.js';
import type { VerifierState } from './verify.js';

// The stored verification of each tenant's audit log (table audit_verification). What it says
// about the log (how far, and the verifier's state) is signed with the audit key, so a row
// rewritten in the database is not believed: the whole log is verified again instead.

export type FullVerificationState = 'QUEUED' | 'RUNNING' | 'DONE' | 'FAILED';

export interface FullVerification {
  state: FullVerificationState;
  /** Events verified so far. */
  processed: number;
  /** Events to verify (known once it runs). */
  total: number;
  requestedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  error: string | null;
}

export interface StoredVerification {
  version: number;
  verifiedSeq: number;
  verifiedCheckpointSeq: number;
  checkedAt: Date | null;
  /** null: not verified yet. */
  state: VerifierState | null;
  /** The signature over the above holds (always true without a state). */
  authentic: boolean;
  full: FullVerification | null;
}

interface Signed {
  version: number;
  verifiedSeq: number;
  verifiedCheckpointSeq: number;
  checkedAt: Date;
  state: VerifierState;
}

// The state names every stream verified: hashed letting the event loop turn (lib/hashing.ts).
const hashOf = (tenantId: string, s: Signed) => canonicalSha256Yielding({ tenantId, ...s, checkedAt: s.checkedAt.toISOString() });

const date = (v: unknown) => (v == null ? null : new Date(v as string));

function fullOf(r: Record<string, any>): FullVerification | null {
  if (!r.full_requested_at) return null;
  const state: FullVerificationState = r.full_finished_at ? 'DONE' : r.full_error ? 'FAILED' : r.full_started_at ? 'RUNNING' : 'QUEUED';
  return {
    state,
    processed: Number(r.full_processed),
    total: Number(r.full_total),
    requestedAt: new Date(r.full_requested_at),
    startedAt: date(r.full_started_at),
    finishedAt: date(r.full_finished_at),
    error: r.full_error ?? null,
  };
}

export async function loadVerification(em: EntityManager, tenantId: string): Promise<StoredVerification | null> {
  const [r] = await sql<Record<string, any>>(em, 'select * from audit_verification where tenant_id = ?', [tenantId]);
  if (!r) return null;
  const state = (typeof r.state === 'string' ? JSON.parse(r.state) : r.state) as VerifierState | null;
  const stored: StoredVerification = {
    version: Number(r.version),
    verifiedSeq: Number(r.verified_seq),
    verifiedCheckpointSeq: Number(r.verified_checkpoint_seq),
    checkedAt: date(r.checked_at),
    state,
    authentic: true,
    full: fullOf(r),
  };
  if (state) {
    const signer = auditSignerOf(em);
    const signed = {
      version: stored.version,
      verifiedSeq: stored.verifiedSeq,
      verifiedCheckpointSeq: stored.verifiedCheckpointSeq,
      checkedAt: stored.checkedAt!,
      state,
    };
    stored.authentic =
      !!stored.checkedAt &&
      state.tenantId === tenantId &&
      r.key_id === signer.keyId &&
      typeof r.sig === 'string' &&
      verifySignature(signer.publicKey, 'verification', await hashOf(tenantId, signed), r.sig);
  }
  return stored;
}

/**
 * Stores a verification, signed, unless another run stored one since `expectedVersion` was read
 * (then false).
 */
export async function saveVerification(
  em: EntityManager,
  tenantId: string,
  v: {
    expectedVersion: number | null;
    /** The new version: above expectedVersion (and above the pinned one, audit/pin.ts). */
    version: number;
    verifiedSeq: number;
    verifiedCheckpointSeq: number;
    state: VerifierState;
    /** It was a full verification, now done: what it found (the first problem, if any). */
    full: { ok: boolean; problem: string | null } | null;
  },
): Promise<boolean> {
  const fullFinished = v.full !== null;
  const signer = auditSignerOf(em);
  const signed: Signed = {
    version: v.version,
    verifiedSeq: v.verifiedSeq,
    verifiedCheckpointSeq: v.verifiedCheckpointSeq,
    checkedAt: new Date(),
    state: v.state,
  };
  const sig = signer.sign('verification', await hashOf(tenantId, signed));
  // Bound, not quoted into the text: the state names every stream (db/sql.ts sqlWithParams).
  const rows = await sqlWithParams(
    em,
    `insert into audit_verification (tenant_id, version, verified_seq, verified_checkpoint_seq, state, checked_at, sig, key_id)
     values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)
     on conflict (tenant_id) do update set version = excluded.version, verified_seq = excluded.verified_seq,
       verified_checkpoint_seq = excluded.verified_checkpoint_seq, state = excluded.state, checked_at = excluded.checked_at,
       sig = excluded.sig, key_id = excluded.key_id,
       full_finished_at = case when $9::boolean then now() else audit_verification.full_finished_at end,
       full_processed = case when $10::boolean then audit_verification.full_total else audit_verification.full_processed end,
       last_full_finished_at = case when $11::boolean then now() else audit_verification.last_full_finished_at end,
       last_full_ok = case when $12::boolean then $13::boolean else audit_verification.last_full_ok end,
       last_full_problem = case when $14::boolean then $15::text else audit_verification.last_full_problem end
     where audit_verification.version = $16
     returning version`,
    [
      tenantId,
      signed.version,
      signed.verifiedSeq,
      signed.verifiedCheckpointSeq,
      JSON.stringify(signed.state),
      signed.checkedAt,
      sig,
      signer.keyId,
      fullFinished,
      fullFinished,
      fullFinished,
      fullFinished,
      v.full?.ok ?? null,
      fullFinished,
      v.full?.problem?.slice(0, 500) ?? null,
      v.expectedVersion ?? -1,
    ],
  );
  return rows.length === 1;
}

/** Marks a full verification as asked for, unless one is queued or running; true when this asked. */
export async function markFullVerificationRequested(em: EntityManager, tenantId: string): Promise<boolean> {
  const rows = await sql(
    em,
    `insert into audit_verification (tenant_id, full_requested_at) values (?, now())
     on conflict (tenant_id) do update set full_requested_at = now(), full_started_at = null, full_finished_at = null,
       full_processed = 0, full_total = 0, full_error = null
     where audit_verification.full_requested_at is null or audit_verification.full_finished_at is not null
        or audit_verification.full_error is not null
     returning tenant_id`,
    [tenantId],
  );
  return rows.length === 1;
}

/** A full verification that could not run to its end (the job's attempt failed): no result, and /metrics counts it as not ok. */
export async function markFullVerificationFailed(em: EntityManager, tenantId: string, error: string): Promise<void> {
  await sql(em, 'update audit_verification set full_error = ? where tenant_id = ? and full_finished_at is null', [error.slice(0, 500), tenantId]);
}

/**
 * Over every tenant: when the least recently verified one last finished a full verification, how
 * many are not ok, and how many have a failure no admin has acknowledged (audit/failures.ts; a
 * count for alerting, its signatures not checked here).
 */
export const FULL_VERIFICATION_SUMMARY = `select
    extract(epoch from min(last_full_finished_at)) as oldest_finished,
    count(*) filter (where last_full_finished_at is not null) as verified,
    count(*) filter (where last_full_ok = false or (full_error is not null and full_finished_at is null)) as not_ok,
    (select count(distinct f.tenant_id) from audit_failure f
      where not exists (select 1 from audit_event e where e.type = 'audit.failure_acknowledged' and e.data->>'failureId' = f.id::text)) as failed_tenants
  from audit_verification`;

/** How far an auditChain answer reaches (audit/verification.ts chainStatus). */
export interface ChainCoverage {
  /** Every event of the tenant up to this seq is covered by the answer. */
  verifiedThroughSeq: number;
  /** Newer events the answer does not cover (the worker has not reached them yet). */
  pendingEvents: number;
  /** When the worker stored the verification the answer starts from (null: none yet). */
  checkedAt: Date | null;
  full: StoredVerification['full'];
}
