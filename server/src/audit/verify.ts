import { canonicalSha256, canonicalSha256Yielding } from '../lib/hashing.js';
import { eventHash, type AuditEventRow } from './log.js';
import { verifySignature, type SignedKind, type TrustedKey } from './signing.js';

// The one verification of a tenant's audit log, used online (the worker and auditChain,
// audit/verification.ts; Approval.chain for one stream) and offline (`taskbay audit verify`, from
// an export). It trusts only the public keys
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
//
// The verifier takes the log in parts (AuditVerifier: checkpoints, then events in seq order) and
// its state is plain JSON, so the worker verifies a tenant's log incrementally, a slice at a time,
// and resumes where it stopped (audit/verification.ts); verifyAudit is the same verifier given
// everything at once (the offline `taskbay audit verify`).

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

type CheckpointBody = Pick<CheckpointRecord, 'tenantId' | 'at' | 'heads' | 'prevHash' | 'firstSignedEventSeq'>;

function hashedPartOf(c: CheckpointBody) {
  const body = { at: c.at.toISOString(), heads: c.heads, prevHash: c.prevHash };
  return c.tenantId === null ? body : { tenantId: c.tenantId, firstSignedEventSeq: c.firstSignedEventSeq, ...body };
}

/** A checkpoint's hash: per tenant it covers the tenant too; the legacy global form does not. */
export function checkpointHash(c: CheckpointBody): string {
  return canonicalSha256(hashedPartOf(c));
}

/** The same hash letting the event loop turn: a checkpoint names every stream that changed (10,000 in the bench). */
export const checkpointHashYielding = (c: CheckpointBody): Promise<string> => canonicalSha256Yielding(hashedPartOf(c));

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

/** What a verification has established so far (JSON): resuming from it continues the same verification. */
export interface VerifierState {
  tenantId: string;
  events: number;
  streams: number;
  signedEvents: number;
  legacyUnsignedEvents: number;
  signedCheckpoints: number;
  legacyUnsignedCheckpoints: number;
  /** From this event seq on every event must be signed (null: no signed event or checkpoint yet). */
  signedFrom: number | null;
  /** The seq of the first per-tenant checkpoint: no legacy global checkpoint may follow it. */
  firstTenantCheckpoint: number | null;
  prevLegacyHash: string | null;
  prevCheckpointHash: string | null;
  lastCheckpoint: { seq: number; at: string; hash: string } | null;
  keyIds: string[];
  eventProblems: AuditProblem[];
  headProblems: AuditProblem[];
  checkpointProblems: AuditProblem[];
}

/** A stream head a checkpoint recorded: found once an event of that stream has that hash. */
interface HeadClaim {
  stream: string;
  seq: number | null;
  checkpointSeq: number;
  detail: string;
  found: boolean;
}

const claimKey = (stream: string, hash: string) => `${stream}\n${hash}`;

export class AuditVerifier {
  private readonly s: VerifierState;
  private readonly keys: Map<string, TrustedKey>;
  private readonly keyIds: Set<string>;
  private readonly scope: VerificationScope | undefined;
  /** Each stream's last event so far (its hash), which the stream's next event must link to. */
  private readonly streamHeads = new Map<string, string>();
  private readonly claims: HeadClaim[] = [];
  private readonly pending = new Map<string, HeadClaim[]>();
  private lastEventSeq = -Infinity;
  private finished = false;
  private readonly inScope = (stream: string) => !this.scope || this.scope.streams.has(stream);

  /**
   * `legacyHorizon` (the audit pin, audit/pin.ts): events above this seq must be signed whatever
   * the log says, so a log whose signatures were all stripped is not "legacy".
   */
  constructor(opts: { tenantId: string; trusted: TrustedKey[]; scope?: VerificationScope; resume?: VerifierState | null; legacyHorizon?: number | null }) {
    this.keys = new Map(opts.trusted.map((k) => [k.keyId, k]));
    this.scope = opts.scope;
    const r = opts.resume;
    if (r && r.tenantId !== opts.tenantId) throw new Error("resuming another tenant's verification");
    this.s = r
      ? structuredClone(r)
      : {
          tenantId: opts.tenantId,
          events: 0,
          streams: 0,
          signedEvents: 0,
          legacyUnsignedEvents: 0,
          signedCheckpoints: 0,
          legacyUnsignedCheckpoints: 0,
          signedFrom: opts.scope?.firstSignedEventSeq ?? null,
          firstTenantCheckpoint: null,
          prevLegacyHash: null,
          prevCheckpointHash: null,
          lastCheckpoint: null,
          keyIds: [],
          eventProblems: [],
          headProblems: [],
          checkpointProblems: [],
        };
    this.keyIds = new Set(this.s.keyIds);
    if (opts.legacyHorizon != null) this.lowerSignedFrom(opts.legacyHorizon + 1);
  }

  /**
   * Resuming: the last verified event of each stream that continues in the events to come (its
   * hash). Those streams were counted already.
   */
  continueStreams(heads: Iterable<[stream: string, hash: string]>): void {
    for (const [stream, hash] of heads) this.streamHeads.set(stream, hash);
  }

  /** Streams of these events that this verifier has not seen yet (resuming: ask their last verified event). */
  unknownStreams(events: Iterable<AuditEventRow>): string[] {
    const out = new Set<string>();
    for (const e of events) if (!this.streamHeads.has(e.stream)) out.add(e.stream);
    return [...out];
  }

  /** null when the signature holds, else why not. */
  private signatureProblem(kind: SignedKind, hash: string, sig: string, keyId: string | null): string | null {
    if (keyId) this.keyIds.add(keyId);
    const key = keyId ? this.keys.get(keyId) : undefined;
    if (!key) return `is signed by key ${keyId ?? '(none)'}, which is not a trusted key`;
    if (!verifySignature(key.publicKey, kind, hash, sig)) return 'has a signature that does not verify (changed after it was signed)';
    return null;
  }

  private lowerSignedFrom(seq: number) {
    if (this.s.signedFrom === null || seq < this.s.signedFrom) this.s.signedFrom = seq;
  }

  private push(list: AuditProblem[], p: AuditProblem) {
    // Only the first MAX_PROBLEMS of a kind can be reported: the report lists kinds in order.
    if (list.length < MAX_PROBLEMS) list.push(p);
  }

  private claim(stream: string, seq: number | null, checkpointSeq: number, hash: string | null, detail = '') {
    const c: HeadClaim = { stream, seq, checkpointSeq, detail, found: false };
    this.claims.push(c);
    if (hash === null) return; // malformed: lost whatever the events hold
    const key = claimKey(stream, hash);
    const list = this.pending.get(key);
    if (list) list.push(c);
    else this.pending.set(key, [c]);
  }

  /** Checkpoints, each after those given before (sorted here within a call). A part's checkpoints come before its events. */
  /** `hashOf`: the server passes hashes it made ahead letting the event loop turn (audit/verification.ts). */
  addCheckpoints(checkpoints: CheckpointRecord[], hashOf: (c: CheckpointRecord) => string = checkpointHash): void {
    const s = this.s;
    const { scope, inScope } = this;
    // Every event from the tenant's first signed one on must be signed, as recorded by any checkpoint.
    for (const c of checkpoints) if (c.tenantId !== null && c.firstSignedEventSeq !== null) this.lowerSignedFrom(c.firstSignedEventSeq);
    for (const c of [...checkpoints].sort((a, b) => a.seq - b.seq)) {
      const problem = (reason: string) => this.push(s.checkpointProblems, { stream: null, seq: null, checkpointSeq: c.seq, reason });
      if (c.tenantId === null) {
        // Legacy: one global unsigned chain whose heads name `<tenant>/<stream>`.
        if (s.firstTenantCheckpoint !== null && c.seq > s.firstTenantCheckpoint)
          problem(`checkpoint ${c.seq} is an unsigned global checkpoint after signed ones`);
        else if ((!scope && c.prevHash !== s.prevLegacyHash) || hashOf(c) !== c.hash) problem(`checkpoint ${c.seq} is altered`);
        else s.legacyUnsignedCheckpoints++;
        s.prevLegacyHash = c.hash;
        for (const [key, hash] of Object.entries(c.heads)) {
          const slash = key.indexOf('/');
          if (key.slice(0, slash) !== s.tenantId) continue;
          const stream = key.slice(slash + 1);
          if (inScope(stream)) this.claim(stream, null, c.seq, typeof hash === 'string' ? hash : null);
        }
        continue;
      }
      if (s.firstTenantCheckpoint === null) s.firstTenantCheckpoint = c.seq;
      if (c.tenantId !== s.tenantId) {
        problem(`checkpoint ${c.seq} belongs to another tenant`);
        continue;
      }
      if (!scope && c.prevHash !== s.prevCheckpointHash) problem(`checkpoint ${c.seq} does not link to the previous checkpoint of the tenant`);
      else if (hashOf(c) !== c.hash) problem(`checkpoint ${c.seq} does not match its hash`);
      else if (c.sig === null) problem(`checkpoint ${c.seq} is not signed`);
      else {
        const bad = this.signatureProblem('checkpoint', c.hash, c.sig, c.keyId);
        if (bad) problem(`checkpoint ${c.seq} ${bad}`);
        else s.signedCheckpoints++;
      }
      s.prevCheckpointHash = c.hash;
      s.lastCheckpoint = { seq: c.seq, at: c.at.toISOString(), hash: c.hash };
      for (const [stream, value] of Object.entries(c.heads)) {
        if (!inScope(stream)) continue;
        const head = asHead(value);
        if (!head) problem(`checkpoint ${c.seq} records a malformed head for ${stream}`);
        else this.claim(stream, head.seq, c.seq, head.hash, ` (its event ${head.seq} is missing or changed)`);
      }
    }
  }

  /** Events in ascending seq order, across calls too (each call's events are sorted here). */
  addEvents(input: AuditEventRow[]): void {
    const s = this.s;
    const events = [...input].sort((a, b) => a.seq - b.seq || (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
    if (events.length && events[0]!.seq < this.lastEventSeq) throw new Error('audit events must be verified in seq order');
    for (const e of events) {
      const problem = (reason: string) => this.push(s.eventProblems, { stream: e.stream, seq: e.seq, checkpointSeq: null, reason });
      // Every event since the first signed one must be signed: in seq order, that one came first.
      if (e.sig !== null) this.lowerSignedFrom(e.seq);
      const expectedPrev = this.streamHeads.get(e.stream) ?? null;
      if (e.tenantId !== s.tenantId) problem(`event ${e.seq} of ${e.stream} belongs to another tenant`);
      else if (e.prevHash !== expectedPrev) problem(`event ${e.seq} does not link to the previous event of ${e.stream}`);
      else if (eventHash(e) !== e.hash) problem(`event ${e.seq} of ${e.stream} does not match its hash`);
      else if (e.sig === null) {
        if (s.signedFrom !== null && e.seq >= s.signedFrom)
          problem(`event ${e.seq} of ${e.stream} is not signed, but every event since ${s.signedFrom} must be`);
        else s.legacyUnsignedEvents++;
      } else {
        const bad = this.signatureProblem('event', e.hash, e.sig, e.keyId);
        if (bad) problem(`event ${e.seq} of ${e.stream} ${bad}`);
        else s.signedEvents++;
      }
      if (!this.streamHeads.has(e.stream)) s.streams++;
      this.streamHeads.set(e.stream, e.hash);
      s.events++;
      this.resolve(e.stream, e.hash);
      this.lastEventSeq = e.seq;
    }
  }

  private resolve(stream: string, hash: string) {
    const key = claimKey(stream, hash);
    const claims = this.pending.get(key);
    if (!claims) return;
    for (const c of claims) c.found = true;
    this.pending.delete(key);
  }

  /** Heads recorded by the checkpoints given that no event given has (resuming: look among the verified events). */
  missingHeads(): { stream: string; hash: string }[] {
    return [...this.pending.keys()].map((k) => {
      const i = k.indexOf('\n');
      return { stream: k.slice(0, i), hash: k.slice(i + 1) };
    });
  }

  /** Resuming: heads found among the events verified before. */
  headsFound(found: Iterable<{ stream: string; hash: string }>): void {
    for (const f of found) this.resolve(f.stream, f.hash);
  }

  /** Ends this part: every recorded head still missing is a problem. Then state() and report() hold. */
  finish(): AuditVerification {
    if (!this.finished) {
      this.finished = true;
      for (const c of this.claims) {
        if (!c.found) {
          const reason = `stream ${c.stream} lost events recorded by checkpoint ${c.checkpointSeq}${c.detail}`;
          this.push(this.s.headProblems, { stream: c.stream, seq: c.seq, checkpointSeq: c.checkpointSeq, reason });
        }
      }
      this.s.eventProblems.sort((a, b) => a.seq! - b.seq!);
      this.s.keyIds = [...this.keyIds].sort();
    }
    return report(this.s);
  }

  state(): VerifierState {
    if (!this.finished) throw new Error('finish() first');
    return structuredClone(this.s);
  }
}

/** The report of a finished verification. */
export function report(s: VerifierState): AuditVerification {
  const problems = [...s.eventProblems, ...s.headProblems, ...s.checkpointProblems].slice(0, MAX_PROBLEMS);
  const first = problems[0] ?? null;
  return {
    ok: !first,
    tenantId: s.tenantId,
    events: s.events,
    streams: s.streams,
    signedEvents: s.signedEvents,
    legacyUnsignedEvents: s.legacyUnsignedEvents,
    signedCheckpoints: s.signedCheckpoints,
    legacyUnsignedCheckpoints: s.legacyUnsignedCheckpoints,
    firstBrokenStream: first?.stream ?? null,
    firstBrokenSeq: first?.seq ?? null,
    reason: first?.reason ?? null,
    problems,
    keyIds: [...s.keyIds],
    lastCheckpoint: s.lastCheckpoint && { ...s.lastCheckpoint, at: new Date(s.lastCheckpoint.at) },
  };
}

/** The whole log (or a scoped part) at once: the checkpoints, then every event. */
export function verifyAudit(input: {
  tenantId: string;
  events: AuditEventRow[];
  checkpoints: CheckpointRecord[];
  trusted: TrustedKey[];
  scope?: VerificationScope;
  legacyHorizon?: number | null;
}): AuditVerification {
  const v = new AuditVerifier({ tenantId: input.tenantId, trusted: input.trusted, scope: input.scope, legacyHorizon: input.legacyHorizon });
  v.addCheckpoints(input.checkpoints);
  v.addEvents(input.events);
  return v.finish();
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
 * The checkpoint an audit pin names (kept outside the database, audit/pin.ts) must still be in the
 * log as it was signed: found is the log's checkpoint of that seq (null: none), its hash computed
 * by the caller. A cut tail or deleted checkpoints are found against it.
 */
export function pinnedCheckpointProblem(
  pinned: { seq: number; hash: string },
  found: CheckpointRecord | null,
  computedHash: string | null,
  tenantId: string,
  trusted: TrustedKey[],
): AuditProblem | null {
  const key = found?.keyId ? trusted.find((k) => k.keyId === found.keyId) : undefined;
  const why = !found
    ? 'is missing'
    : found.tenantId !== tenantId
      ? 'belongs to another tenant'
      : found.hash !== pinned.hash || computedHash !== found.hash
        ? 'was changed'
        : !found.sig || !key || !verifySignature(key.publicKey, 'checkpoint', found.hash, found.sig)
          ? 'is not signed by a trusted key'
          : null;
  if (!why) return null;
  return {
    stream: null,
    seq: null,
    checkpointSeq: pinned.seq,
    reason: `checkpoint ${pinned.seq}, pinned outside the database (hash ${pinned.hash.slice(0, 16)}…), ${why}: the log was cut or its checkpoints removed`,
  };
}

/**
 * A report with more problems found outside the verifier (the pin, a forged stored state), after
 * its own: what names an altered event comes first.
 */
export function withProblems(r: AuditVerification, extra: AuditProblem[]): AuditVerification {
  if (!extra.length) return r;
  const problems = [...r.problems, ...extra].slice(0, MAX_PROBLEMS);
  const first = problems[0]!;
  return { ...r, ok: false, problems, firstBrokenStream: first.stream, firstBrokenSeq: first.seq, reason: first.reason };
}
