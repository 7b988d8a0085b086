import { setTimeout as sleep, setImmediate as nextTurn } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { recordFailure, unacknowledgedFailure, type AuditFailure } from './failures.js';
import { rowToEvent, type AuditEventRow } from './log.js';
import { AuditPinError, auditPinsOf, newerCheckpoint, type TenantPin } from './pin.js';
import { auditSignerOf, type TrustedKey } from './signing.js';
import {
  AuditVerifier,
  checkpointHash,
  checkpointHashYielding,
  pinnedCheckpointProblem,
  report,
  rowToCheckpoint,
  withProblems,
  type AuditProblem,
  type AuditVerification,
  type CheckpointRecord,
  type VerifierState,
} from './verify.js';
import { loadVerification, saveVerification, type ChainCoverage, type StoredVerification } from './verification-store.js';

export type { ChainCoverage };

export interface ChainStatus extends AuditVerification {
  /** The key this instance signs with, published for verifiers (also GET /api/audit/public-key). */
  signingKey: TrustedKey;
  /** Tenant-wide answers (auditChain): how much of the log the answer covers. */
  coverage?: ChainCoverage;
  /** Tenant-wide answers: the failure found earlier that no admin has acknowledged (it keeps ok false). */
  failure?: AuditFailure | null;
}

// Verification of a tenant's audit log off the request path. The worker verifies incrementally
// (audit/verification-job.ts): after each checkpoint it continues from where it stopped, up to
// that checkpoint and the events before it, and stores the verifier's state (signed). auditChain
// answers from that state plus the events since, when they are few (REQUEST_TAIL_LIMIT), else
// says how far verification has reached; it never reads the whole log. Both use the one verifier
// (audit/verify.ts), fed in slices so the event loop is never held for long. A rewrite of events
// already verified is found by the next full verification (verifyAuditChain), the offline
// `taskbay audit verify`, and on the approval's own page (Approval.chain verifies its stream).

/** Events newer than the stored verification that auditChain verifies itself; more wait for the worker. */
export const REQUEST_TAIL_LIMIT = 1000;
/** Events read per statement by the worker. */
const PAGE = 2000;
/** Verification work between two turns of the event loop. */
const SLICE_MS = 5;
const SLICE_ITEMS = 10;

interface Base {
  seq: number;
  checkpointSeq: number;
  state: VerifierState | null;
}

const FROM_SCRATCH: Base = { seq: 0, checkpointSeq: 0, state: null };

const trustedOf = (em: EntityManager): TrustedKey => {
  const s = auditSignerOf(em);
  return { keyId: s.keyId, publicKey: s.publicKey, publicKeyPem: s.publicKeyPem };
};

/** Runs fn over items a few at a time, letting the event loop turn every SLICE_MS. */
async function inSlices<T>(items: T[], fn: (part: T[]) => void): Promise<void> {
  let since = performance.now();
  for (let i = 0; i < items.length; i += SLICE_ITEMS) {
    fn(items.slice(i, i + SLICE_ITEMS));
    if (performance.now() - since > SLICE_MS) {
      await nextTurn();
      since = performance.now();
    }
  }
}

/** Resuming: the last verified event (its hash) of each of these streams, at or before `upTo`. */
async function lastVerifiedEvents(em: EntityManager, tenantId: string, streams: string[], upTo: number): Promise<[string, string][]> {
  const rows = await sql<{ stream: string; hash: string }>(
    em,
    `select distinct on (stream) stream, hash from audit_event
      where tenant_id = ? and stream in (select jsonb_array_elements_text(?::jsonb)) and seq <= ? order by stream, seq desc`,
    [tenantId, JSON.stringify(streams), upTo],
  );
  return rows.map((r) => [r.stream, r.hash]);
}

/** Resuming: which of these recorded heads are events verified before (at or before `upTo`). */
async function verifiedHeads(em: EntityManager, tenantId: string, heads: { stream: string; hash: string }[], upTo: number) {
  return sql<{ stream: string; hash: string }>(
    em,
    `select distinct e.stream, e.hash from audit_event e
       join jsonb_to_recordset(?::jsonb) as h(stream text, hash text) on e.stream = h.stream and e.hash = h.hash
      where e.tenant_id = ? and e.seq <= ?`,
    [JSON.stringify(heads), tenantId, upTo],
  );
}

/**
 * Continues a verification from `base` over the checkpoints and event pages given (each after
 * base, in seq order; the checkpoints read no later than the events, so every head they record is
 * among those events or before them).
 */
async function extend(
  em: EntityManager,
  tenantId: string,
  base: Base,
  checkpoints: CheckpointRecord[],
  pages: AsyncIterable<AuditEventRow[]> | Iterable<AuditEventRow[]>,
  onPage?: (events: number) => Promise<void>,
): Promise<AuditVerifier> {
  const v = new AuditVerifier({ tenantId, trusted: [trustedOf(em)], resume: base.state, legacyHorizon: auditPinsOf(em).legacyHorizon });
  // Hashed ahead, letting the event loop turn: a checkpoint can name 10,000 streams.
  const hashes = new Map<CheckpointRecord, string>();
  for (const c of checkpoints) hashes.set(c, await checkpointHashYielding(c));
  await inSlices(checkpoints, (part) => v.addCheckpoints(part, (c) => hashes.get(c) ?? checkpointHash(c)));
  for await (const page of pages) {
    const unknown = base.seq > 0 ? v.unknownStreams(page) : [];
    if (unknown.length) v.continueStreams(await lastVerifiedEvents(em, tenantId, unknown, base.seq));
    await inSlices(page, (part) => v.addEvents(part));
    await onPage?.(page.length);
  }
  const missing = base.seq > 0 ? v.missingHeads() : [];
  if (missing.length) v.headsFound(await verifiedHeads(em, tenantId, missing, base.seq));
  v.finish();
  return v;
}

const checkpointsAfter = async (em: EntityManager, tenantId: string, after: number, opts: { upTo?: number; limit?: number }) =>
  (
    await sql(em, `select * from audit_checkpoint where (tenant_id = ? or tenant_id is null) and seq > ? and seq <= ? order by seq limit ?`, [
      tenantId,
      after,
      opts.upTo ?? Number.MAX_SAFE_INTEGER,
      opts.limit ?? null,
    ])
  ).map(rowToCheckpoint);

const baseOf = (stored: StoredVerification | null): Base =>
  stored?.state && stored.authentic ? { seq: stored.verifiedSeq, checkpointSeq: stored.verifiedCheckpointSeq, state: stored.state } : FROM_SCRATCH;

const FORGED = 'the stored verification state does not verify (it was changed outside Taskbay); the worker verifies the log again from the start';

/** The tenant's pin, or why it cannot be read (a pin file that does not verify is itself a problem). */
async function readPin(em: EntityManager, tenantId: string): Promise<{ pin: TenantPin | null; problem: AuditProblem | null }> {
  try {
    return { pin: await auditPinsOf(em).read(tenantId), problem: null };
  } catch (e) {
    if (!(e instanceof AuditPinError)) throw e;
    return { pin: null, problem: { stream: null, seq: null, checkpointSeq: null, reason: e.message } };
  }
}

/**
 * What the database must still hold by the tenant's pin: its pinned checkpoint as signed, and a
 * stored verification at least as new as the pinned one (deleting the row, or putting an older
 * signed one back, is found).
 */
async function pinProblems(em: EntityManager, tenantId: string, pin: TenantPin | null, stored: StoredVerification | null): Promise<AuditProblem[]> {
  const problems: AuditProblem[] = [];
  if (pin?.checkpoint) {
    const [row] = await sql(em, 'select * from audit_checkpoint where seq = ?', [pin.checkpoint.seq]);
    const found = row ? rowToCheckpoint(row) : null;
    const hash = found ? await checkpointHashYielding(found) : null;
    const p = pinnedCheckpointProblem(pin.checkpoint, found, hash, tenantId, [trustedOf(em)]);
    if (p) problems.push(p);
  }
  const pinned = pin?.verification;
  if (pinned && (!stored?.state || stored.version < pinned.version)) {
    problems.push({
      stream: null,
      seq: null,
      checkpointSeq: null,
      reason: `the stored verification of the log was ${stored?.state ? `replaced by an older one (version ${stored.version})` : 'deleted'}; the pin outside the database names version ${pinned.version}, verified through seq ${pinned.verifiedSeq}`,
    });
  }
  return problems;
}

function standingFailureProblem(f: AuditFailure): AuditProblem {
  return {
    stream: f.stream,
    seq: f.seq,
    checkpointSeq: f.checkpointSeq,
    reason: `the verification of ${f.foundAt.toISOString()} failed and stays failed until an admin acknowledges it (acknowledgeAuditFailure, failure ${f.id}): ${f.reason}`,
  };
}

/**
 * What a verification found, final: more problems (the pin, a forged stored state) after its own; a
 * problem is recorded as the tenant's failure unless one stands already; a standing failure
 * keeps the answer not ok even when the log now verifies.
 */
async function concluded(
  em: EntityManager,
  tenantId: string,
  r: AuditVerification,
  extra: AuditProblem[],
  foundBy: 'worker' | 'request',
): Promise<AuditVerification & { failure: AuditFailure | null }> {
  const found = withProblems(r, extra);
  if (!found.ok) return { ...found, failure: await recordFailure(em, tenantId, found.problems[0]!, foundBy) };
  const failure = await unacknowledgedFailure(em, tenantId);
  return { ...(failure ? withProblems(found, [standingFailureProblem(failure)]) : found), failure };
}

/**
 * auditChain: the stored verification plus the events since, verified here when there are at
 * most REQUEST_TAIL_LIMIT of them; else the stored verification and how many events it does not
 * cover yet. Reads O(REQUEST_TAIL_LIMIT) rows, whatever the size of the log. Checked against the
 * tenant's pin, and not ok while a failure found earlier stands.
 */
export async function chainStatus(em: EntityManager, tenantId: string): Promise<ChainStatus> {
  const signingKey = trustedOf(em);
  // The pin first: it is written after what it names has committed, so the rows read next are at least as new.
  const { pin, problem: pinProblem } = await readPin(em, tenantId);
  const stored = await loadVerification(em, tenantId);
  const base = baseOf(stored);
  const forged = !!stored?.state && !stored.authentic;
  const coverage = (verifiedThroughSeq: number, pendingEvents: number): ChainCoverage => ({
    verifiedThroughSeq,
    pendingEvents,
    checkedAt: base.state ? stored!.checkedAt : null,
    full: stored?.full ?? null,
  });
  const extra = [
    ...(pinProblem ? [pinProblem] : []),
    ...(forged ? [{ stream: null, seq: null, checkpointSeq: null, reason: FORGED }] : []),
    ...(await pinProblems(em, tenantId, pin, stored)),
  ];

  // Checkpoints first: the events read after them include every head they record.
  const checkpoints = await checkpointsAfter(em, tenantId, base.checkpointSeq, { limit: REQUEST_TAIL_LIMIT + 1 });
  const tail = (
    await sql(em, 'select * from audit_event where tenant_id = ? and seq > ? order by seq limit ?', [tenantId, base.seq, REQUEST_TAIL_LIMIT + 1])
  ).map(rowToEvent);
  if (tail.length > REQUEST_TAIL_LIMIT || checkpoints.length > REQUEST_TAIL_LIMIT) {
    const [{ n } = { n: 0 }] = await sql<{ n: number }>(em, 'select count(*)::int as n from audit_event where tenant_id = ? and seq > ?', [tenantId, base.seq]);
    const stale = base.state ? report(base.state) : new AuditVerifier({ tenantId, trusted: [signingKey] }).finish();
    return { ...(await concluded(em, tenantId, stale, extra, 'request')), signingKey, coverage: coverage(base.seq, n) };
  }
  const v = await extend(em, tenantId, base, checkpoints, [tail]);
  return { ...(await concluded(em, tenantId, v.finish(), extra, 'request')), signingKey, coverage: coverage(tail.at(-1)?.seq ?? base.seq, 0) };
}

/**
 * The log up to the returned seqs is final: the transactions in progress when they were read
 * (one of which might still add an event with a lower seq) have ended. Throws after timeoutMs.
 */
export async function settledHorizon(em: EntityManager, tenantId: string, timeoutMs = 10_000): Promise<{ seq: number; checkpointSeq: number }> {
  const [h] = await sql<{ seq: string; checkpoint_seq: string; xip: string[] }>(
    em,
    `select (select coalesce(max(seq), 0) from audit_event where tenant_id = ?) as seq,
            (select coalesce(max(seq), 0) from audit_checkpoint where tenant_id = ? or tenant_id is null) as checkpoint_seq,
            array(select pg_snapshot_xip(pg_current_snapshot()))::text[] as xip`,
    [tenantId, tenantId],
  );
  const deadline = Date.now() + timeoutMs;
  for (let xip = h!.xip; xip.length; ) {
    xip = (
      await sql<{ x: string }>(em, `select x from jsonb_array_elements_text(?::jsonb) x where pg_xact_status(x::xid8) = 'in progress'`, [JSON.stringify(xip)])
    ).map((r) => r.x);
    if (!xip.length) break;
    if (Date.now() > deadline) throw new Error(`audit verification: transactions ${xip.join(', ')} still in progress after ${timeoutMs} ms`);
    await sleep(20);
  }
  return { seq: Number(h!.seq), checkpointSeq: Number(h!.checkpoint_seq) };
}

async function* eventPages(em: EntityManager, tenantId: string, after: number, upTo: number): AsyncGenerator<AuditEventRow[]> {
  for (let cursor = after; cursor < upTo; ) {
    const rows = await sql(em, 'select * from audit_event where tenant_id = ? and seq > ? and seq <= ? order by seq limit ?', [tenantId, cursor, upTo, PAGE]);
    if (!rows.length) return;
    const page = rows.map(rowToEvent);
    cursor = page.at(-1)!.seq;
    yield page;
  }
}

export interface VerificationRun {
  verifiedSeq: number;
  verifiedCheckpointSeq: number;
  events: number;
  /** The log verifies, the pin holds and no failure stands. */
  ok: boolean;
}

/**
 * The worker's verification of one tenant: from the stored state (or, `full` or without a
 * trustworthy one, from the start) up to the settled horizon, stored with its signature, and
 * pinned outside the database. A problem becomes the tenant's standing failure. null: nothing
 * new, or another run stored first.
 */
export async function runVerification(em: EntityManager, tenantId: string, opts: { full?: boolean } = {}): Promise<VerificationRun | null> {
  const { pin, problem: pinProblem } = await readPin(em, tenantId);
  const horizon = await settledHorizon(em, tenantId);
  const stored = await loadVerification(em, tenantId);
  const forged = !!stored?.state && !stored.authentic;
  const extra = [
    ...(pinProblem ? [pinProblem] : []),
    ...(forged ? [{ stream: null, seq: null, checkpointSeq: null, reason: FORGED }] : []),
    ...(await pinProblems(em, tenantId, pin, stored)),
  ];
  const base = opts.full ? FROM_SCRATCH : baseOf(stored);
  if (!extra.length && base.state && base.seq >= horizon.seq && base.checkpointSeq >= horizon.checkpointSeq) return null;
  let progress: ((n: number) => Promise<void>) | undefined;
  if (opts.full) {
    const [{ n } = { n: 0 }] = await sql<{ n: number }>(em, 'select count(*)::int as n from audit_event where tenant_id = ? and seq <= ?', [
      tenantId,
      horizon.seq,
    ]);
    await sql(em, 'update audit_verification set full_started_at = now(), full_total = ?, full_processed = 0, full_error = null where tenant_id = ?', [
      n,
      tenantId,
    ]);
    progress = (events) => sql(em, 'update audit_verification set full_processed = full_processed + ? where tenant_id = ?', [events, tenantId]).then(() => {});
  }
  const checkpoints = await checkpointsAfter(em, tenantId, base.checkpointSeq, { upTo: horizon.checkpointSeq });
  const v = await extend(em, tenantId, base, checkpoints, eventPages(em, tenantId, base.seq, horizon.seq), progress);
  const state = v.state();
  const verifies = report(state);
  const found = await concluded(em, tenantId, verifies, extra, 'worker');
  // Numbered past the pinned version too, so a re-established verification is newer than the pin.
  const version = Math.max(stored?.version ?? 0, pin?.verification?.version ?? 0) + 1;
  const saved = await saveVerification(em, tenantId, {
    expectedVersion: stored?.version ?? null,
    version,
    verifiedSeq: horizon.seq,
    verifiedCheckpointSeq: horizon.checkpointSeq,
    state,
    full: opts.full ? { ok: found.ok, problem: found.reason } : null,
  });
  if (!saved) return null;
  // The newest checkpoint is pinned only once its log verified up to it; a pin that does not hold is left for whoever looks into it.
  if (!pinProblem)
    await auditPinsOf(em).update(tenantId, (p) => ({
      ...p,
      verification: { version, verifiedSeq: horizon.seq },
      checkpoint: verifies.ok && !extra.length && state.lastCheckpoint ? newerCheckpoint(p.checkpoint, state.lastCheckpoint) : p.checkpoint,
    }));
  return { verifiedSeq: horizon.seq, verifiedCheckpointSeq: horizon.checkpointSeq, events: state.events, ok: found.ok };
}

/**
 * For the checkpoint: the seq up to which the tenant's log verifies now (the worker's
 * verification continued up to the settled horizon), or null when it does not, its pin does not
 * hold, or a failure stands.
 */
export async function verifiedThrough(em: EntityManager, tenantId: string): Promise<number | null> {
  const run = await runVerification(em, tenantId);
  if (run) return run.ok ? run.verifiedSeq : null;
  // Nothing new since the stored verification (its pin checked), or another run stored first.
  const stored = await loadVerification(em, tenantId);
  if (!stored?.state || !stored.authentic || !report(stored.state).ok) return null;
  if (await unacknowledgedFailure(em, tenantId)) return null;
  return stored.verifiedSeq;
}
