import { canonicalSha256 } from '../lib/hashing.js';
import { eventHash, type AuditEventRow } from './log.js';
import { verifySignature, type SignedKind, type TrustedKey } from './signing.js';

// The one verification of a tenant's audit log, used online (GraphQL auditChain, from the
// database) and offline (`taskbay audit verify`, from an export). It trusts only the public keys
// it is given. What it checks:
//   events      each links to the previous event of its stream, matches its hash, and carries a
//               valid signature of that hash by a trusted key. Events written before signing
//               existed are accepted unsigned ("legacy") only before the tenant's first signed
//               event, as the events show it and as every signed checkpoint recorded it:
//               stripping the signatures of newer events does not make them legacy.
//   checkpoints the tenant's chain links, matches its hashes and is signed; every stream head it
//               records is still present (a removed stream or a cut tail is found). The global
//               unsigned checkpoints of before verify as they always did.
// The report names the first problem: the lowest event seq; else a missing checkpointed head;
// else a checkpoint.

export interface CheckpointRecord {
  seq: number;
  /** null: a global, unsigned checkpoint from before per-tenant signed checkpoints. */
  tenantId: string | null;
  at: Date;
  /** Per tenant: stream -> { seq, hash } of its head. Legacy: `<tenant>/<stream>` -> hash. */
  heads: Record<string, unknown>;
  prevHash: string | null;
  hash: string;
  sig: string | null;
  keyId: string | null;
  /** The seq of the tenant's first signed event when the checkpoint was written (per tenant only). */
  firstSignedEventSeq: number | null;
}

export interface StreamHead {
  seq: number;
  hash: string;
}

export interface AuditProblem {
  stream: string | null;
  seq: number | null;
  checkpointSeq: number | null;
  reason: string;
}

export interface AuditVerification {
  ok: boolean;
  tenantId: string;
  events: number;
  streams: number;
  signedEvents: number;
  legacyUnsignedEvents: number;
  signedCheckpoints: number;
  legacyUnsignedCheckpoints: number;
  /** The first problem (see above), also in problems[0]. */
  firstBrokenStream: string | null;
  firstBrokenSeq: number | null;
  reason: string | null;
  /** Every problem found, first first, at most MAX_PROBLEMS. */
  problems: AuditProblem[];
  /** Keys that signed the events and checkpoints (trusted or not). */
  keyIds: string[];
  /** The tenant's newest signed checkpoint: compare it with an earlier export to find a cut checkpoint chain. */
  lastCheckpoint: { seq: number; at: Date; hash: string } | null;
}

const MAX_PROBLEMS = 50;

/** A checkpoint's hash: per tenant it covers the tenant too; the legacy global form does not. */
export function checkpointHash(c: Pick<CheckpointRecord, 'tenantId' | 'at' | 'heads' | 'prevHash' | 'firstSignedEventSeq'>): string {
  const body = { at: c.at.toISOString(), heads: c.heads, prevHash: c.prevHash };
  return canonicalSha256(c.tenantId === null ? body : { tenantId: c.tenantId, firstSignedEventSeq: c.firstSignedEventSeq, ...body });
}

function asHead(v: unknown): StreamHead | null {
  if (typeof v !== 'object' || v === null) return null;
  const { seq, hash } = v as Record<string, unknown>;
  return typeof seq === 'number' && typeof hash === 'string' ? { seq, hash } : null;
}

/**
 * Verifying part of a tenant's log (one approval's page): `streams` are the streams whose events
 * are given (all of each), and the checkpoints given are those recording any of them. Checked
 * as for the whole log: every event, each given checkpoint's hash and signature, and every head
 * those checkpoints record for these streams. Not checked (the tenant-wide verification does):
 * heads of other streams, and the links between checkpoints (some are not given; each one's
 * signature still covers its link). `firstSignedEventSeq`: the tenant's, as its newest
 * checkpoint recorded it, since the first signed event may be in another stream.
 */
export interface VerificationScope {
  streams: ReadonlySet<string>;
  firstSignedEventSeq: number | null;
}

export function verifyAudit(input: {
  tenantId: string;
  events: AuditEventRow[];
  checkpoints: CheckpointRecord[];
  trusted: TrustedKey[];
  scope?: VerificationScope;
}): AuditVerification {
  const { tenantId, scope } = input;
  const inScope = (stream: string) => !scope || scope.streams.has(stream);
  const keys = new Map(input.trusted.map((k) => [k.keyId, k]));
  const keyIds = new Set<string>();
  const eventProblems: AuditProblem[] = [];
  const headProblems: AuditProblem[] = [];
  const checkpointProblems: AuditProblem[] = [];

  /** null when the signature holds, else why not. */
  const signatureProblem = (kind: SignedKind, hash: string, sig: string, keyId: string | null): string | null => {
    if (keyId) keyIds.add(keyId);
    const key = keyId ? keys.get(keyId) : undefined;
    if (!key) return `is signed by key ${keyId ?? '(none)'}, which is not a trusted key`;
    if (!verifySignature(key.publicKey, kind, hash, sig)) return 'has a signature that does not verify (changed after it was signed)';
    return null;
  };

  const events = [...input.events].sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : a.seq - b.seq));
  // From this seq on every event must be signed: the first signed event, or what a checkpoint
  // recorded as such (should the signatures of all newer events have been stripped).
  let signedFrom = Infinity;
  for (const e of events) if (e.sig !== null && e.seq < signedFrom) signedFrom = e.seq;
  for (const c of input.checkpoints) {
    if (c.tenantId !== null && c.firstSignedEventSeq !== null && c.firstSignedEventSeq < signedFrom) signedFrom = c.firstSignedEventSeq;
  }
  if (scope?.firstSignedEventSeq != null && scope.firstSignedEventSeq < signedFrom) signedFrom = scope.firstSignedEventSeq;

  let signedEvents = 0;
  let legacyUnsignedEvents = 0;
  const hashesByStream = new Map<string, Set<string>>();
  let prev: AuditEventRow | null = null;
  for (const e of events) {
    const problem = (reason: string) => eventProblems.push({ stream: e.stream, seq: e.seq, checkpointSeq: null, reason });
    const expectedPrev = prev && prev.stream === e.stream ? prev.hash : null;
    if (e.tenantId !== tenantId) problem(`event ${e.seq} of ${e.stream} belongs to another tenant`);
    else if (e.prevHash !== expectedPrev) problem(`event ${e.seq} does not link to the previous event of ${e.stream}`);
    else if (eventHash(e) !== e.hash) problem(`event ${e.seq} of ${e.stream} does not match its hash`);
    else if (e.sig === null) {
      if (e.seq >= signedFrom) problem(`event ${e.seq} of ${e.stream} is not signed, but every event since ${signedFrom} must be`);
      else legacyUnsignedEvents++;
    } else {
      const bad = signatureProblem('event', e.hash, e.sig, e.keyId);
      if (bad) problem(`event ${e.seq} of ${e.stream} ${bad}`);
      else signedEvents++;
    }
    let set = hashesByStream.get(e.stream);
    if (!set) {
      set = new Set();
      hashesByStream.set(e.stream, set);
    }
    set.add(e.hash);
    prev = e;
  }

  const checkpoints = [...input.checkpoints].sort((a, b) => a.seq - b.seq);
  const firstTenantCheckpoint = checkpoints.find((c) => c.tenantId !== null)?.seq ?? Infinity;
  let signedCheckpoints = 0;
  let legacyUnsignedCheckpoints = 0;
  let prevLegacy: string | null = null;
  let prevOwn: string | null = null;
  let lastCheckpoint: AuditVerification['lastCheckpoint'] = null;
  for (const c of checkpoints) {
    const problem = (reason: string) => checkpointProblems.push({ stream: null, seq: null, checkpointSeq: c.seq, reason });
    const lost = (stream: string, seq: number | null, detail = '') =>
      headProblems.push({ stream, seq, checkpointSeq: c.seq, reason: `stream ${stream} lost events recorded by checkpoint ${c.seq}${detail}` });

    if (c.tenantId === null) {
      // Legacy: one global unsigned chain whose heads name `<tenant>/<stream>`.
      if (c.seq > firstTenantCheckpoint) problem(`checkpoint ${c.seq} is an unsigned global checkpoint after signed ones`);
      else if ((!scope && c.prevHash !== prevLegacy) || checkpointHash(c) !== c.hash) problem(`checkpoint ${c.seq} is altered`);
      else legacyUnsignedCheckpoints++;
      prevLegacy = c.hash;
      for (const [key, hash] of Object.entries(c.heads)) {
        const slash = key.indexOf('/');
        if (key.slice(0, slash) !== tenantId) continue;
        const s = key.slice(slash + 1);
        if (!inScope(s)) continue;
        if (typeof hash !== 'string' || !hashesByStream.get(s)?.has(hash)) lost(s, null);
      }
      continue;
    }
    if (c.tenantId !== tenantId) {
      problem(`checkpoint ${c.seq} belongs to another tenant`);
      continue;
    }
    if (!scope && c.prevHash !== prevOwn) problem(`checkpoint ${c.seq} does not link to the previous checkpoint of the tenant`);
    else if (checkpointHash(c) !== c.hash) problem(`checkpoint ${c.seq} does not match its hash`);
    else if (c.sig === null) problem(`checkpoint ${c.seq} is not signed`);
    else {
      const bad = signatureProblem('checkpoint', c.hash, c.sig, c.keyId);
      if (bad) problem(`checkpoint ${c.seq} ${bad}`);
      else signedCheckpoints++;
    }
    prevOwn = c.hash;
    lastCheckpoint = { seq: c.seq, at: c.at, hash: c.hash };
    for (const [s, value] of Object.entries(c.heads)) {
      if (!inScope(s)) continue;
      const head = asHead(value);
      if (!head) problem(`checkpoint ${c.seq} records a malformed head for ${s}`);
      else if (!hashesByStream.get(s)?.has(head.hash)) lost(s, head.seq, ` (its event ${head.seq} is missing or changed)`);
    }
  }

  eventProblems.sort((a, b) => a.seq! - b.seq!);
  const problems = [...eventProblems, ...headProblems, ...checkpointProblems].slice(0, MAX_PROBLEMS);
  const first = problems[0] ?? null;
  return {
    ok: !first,
    tenantId,
    events: events.length,
    streams: hashesByStream.size,
    signedEvents,
    legacyUnsignedEvents,
    signedCheckpoints,
    legacyUnsignedCheckpoints,
    firstBrokenStream: first?.stream ?? null,
    firstBrokenSeq: first?.seq ?? null,
    reason: first?.reason ?? null,
    problems,
    keyIds: [...keyIds].sort(),
    lastCheckpoint,
  };
}
