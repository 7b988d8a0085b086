import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { canonicalSha256 } from '../lib/hashing.js';
import { log } from '../log.js';
import { verifySignature, type AuditSigner, type TrustedKey } from './signing.js';

// The audit pin: what this instance knows of each tenant's log, kept outside the database
// (beside the signing key, TASKBAY_AUDIT_PIN_DIR). Whoever holds the database can strip every
// signature, delete the checkpoints and the stored verification, and leave a log that verifies
// as "legacy unsigned"; the pin says what the database must still hold: the newest checkpoint
// this instance signed or verified, the newest stored verification it saved, which events may be
// unsigned at all, and a failure no admin has acknowledged. Each pin is signed with the audit key,
// so the copy inside an export is trusted offline as far as that key is.

export const PIN_FORMAT = 'taskbay.audit-pin@1';
const LOG_PIN_FORMAT = 'taskbay.audit-pin-log@1';

export interface PinnedCheckpoint {
  seq: number;
  hash: string;
  at: string;
}

export interface PinnedVerification {
  /** The stored verification's version (audit_verification.version): it only grows. */
  version: number;
  verifiedSeq: number;
}

export interface PinnedFailure {
  id: string;
  foundAt: string;
  reason: string;
  stream: string | null;
  seq: number | null;
  checkpointSeq: number | null;
}

export interface TenantPin {
  tenantId: string;
  /** Events above this seq must be signed: the log's newest unsigned event when pins began. */
  legacyHorizon: number;
  checkpoint: PinnedCheckpoint | null;
  verification: PinnedVerification | null;
  failure: PinnedFailure | null;
  updatedAt: string;
}

export interface SignedPin {
  format: typeof PIN_FORMAT;
  pin: TenantPin;
  keyId: string;
  sig: string;
}

export class AuditPinError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const int = (v: unknown): v is number => Number.isSafeInteger(v);
const intOrNull = (v: unknown) => v === null || int(v);
const str = (v: unknown): v is string => typeof v === 'string';

/** A pin read from a file or an export: its shape checked, its signature not yet. */
export function parseSignedPin(doc: unknown, what: string): SignedPin {
  const d = doc as Record<string, any>;
  const bad = (detail: string) => new AuditPinError(`${what} is not a ${PIN_FORMAT} pin: ${detail}`);
  if (typeof d !== 'object' || d === null || d.format !== PIN_FORMAT) throw bad('wrong format');
  if (!str(d.keyId) || !str(d.sig)) throw bad('no signature');
  const p = d.pin as Record<string, any>;
  if (typeof p !== 'object' || p === null || !str(p.tenantId) || !int(p.legacyHorizon) || !str(p.updatedAt)) throw bad('malformed pin');
  const c = p.checkpoint;
  if (c !== null && (typeof c !== 'object' || !int(c.seq) || !str(c.hash) || !str(c.at))) throw bad('malformed checkpoint');
  const v = p.verification;
  if (v !== null && (typeof v !== 'object' || !int(v.version) || !int(v.verifiedSeq))) throw bad('malformed verification');
  const f = p.failure;
  if (f !== null && (typeof f !== 'object' || !str(f.id) || !str(f.foundAt) || !str(f.reason) || !intOrNull(f.seq) || !intOrNull(f.checkpointSeq))) {
    throw bad('malformed failure');
  }
  return {
    format: PIN_FORMAT,
    keyId: d.keyId,
    sig: d.sig,
    pin: {
      tenantId: p.tenantId,
      legacyHorizon: p.legacyHorizon,
      checkpoint: c && { seq: c.seq, hash: c.hash, at: c.at },
      verification: v && { version: v.version, verifiedSeq: v.verifiedSeq },
      failure: f && {
        id: f.id,
        foundAt: f.foundAt,
        reason: f.reason,
        stream: str(f.stream) ? f.stream : null,
        seq: f.seq,
        checkpointSeq: f.checkpointSeq,
      },
      updatedAt: p.updatedAt,
    },
  };
}

/** null when one of the trusted keys signed this pin, else why not. */
export function pinSignatureProblem(signed: SignedPin, trusted: TrustedKey[]): string | null {
  const key = trusted.find((k) => k.keyId === signed.keyId);
  if (!key) return `the audit pin is signed by key ${signed.keyId}, which is not a trusted key`;
  return verifySignature(key.publicKey, 'pin', canonicalSha256(signed.pin), signed.sig) ? null : 'the audit pin has a signature that does not verify';
}

/** The newer of two checkpoints (by seq). */
export const newerCheckpoint = (a: PinnedCheckpoint | null, b: PinnedCheckpoint | null) => (!a ? b : !b ? a : b.seq > a.seq ? b : a);

interface LogPin {
  format: typeof LOG_PIN_FORMAT;
  legacyHorizon: number;
  createdAt: string;
  keyId: string;
  sig: string;
}

/** How long a writer waits for another's lock on one pin file, and when a lock is taken as abandoned. */
const LOCK_WAIT_MS = 10_000;
const LOCK_STALE_MS = 30_000;

/**
 * The pins of one instance (one folder, which instances sharing a database should share). Writes
 * are whole files written aside and renamed into place under a lock file, so a reader never sees
 * half a pin and two writers never lose each other's change.
 */
export class AuditPins {
  private constructor(
    readonly dir: string,
    private readonly signer: AuditSigner,
    /** Unsigned events above this seq are never legacy (in any tenant). */
    readonly legacyHorizon: number,
  ) {}

  /**
   * Opens the folder (created 0700), and on first use records the legacy horizon: the seq of the
   * newest unsigned event the log holds now. Every event Taskbay writes is signed, so an unsigned
   * event above it was stripped.
   */
  static async open(dir: string, signer: AuditSigner, em: EntityManager): Promise<AuditPins> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'log.json');
    let logPin = readJson(path) as LogPin | null;
    if (!logPin) {
      const [row] = await sql<{ seq: string | null }>(em, 'select max(seq) as seq from audit_event where sig is null');
      const legacyHorizon = row?.seq == null ? 0 : Number(row.seq);
      const createdAt = new Date().toISOString();
      const body = { kind: 'log', legacyHorizon, createdAt };
      const fresh: LogPin = { format: LOG_PIN_FORMAT, legacyHorizon, createdAt, keyId: signer.keyId, sig: signer.sign('pin', canonicalSha256(body)) };
      await withLock(path, () => {
        // Another instance on this folder may have written it first: theirs stands.
        if (!readJson(path)) writeAtomically(path, fresh);
      });
      logPin = readJson(path) as LogPin;
      if (logPin.sig === fresh.sig) log.info(`Started the audit pins in ${dir} (events above seq ${legacyHorizon} must be signed).`);
    }
    const ok =
      logPin.format === LOG_PIN_FORMAT &&
      int(logPin.legacyHorizon) &&
      logPin.keyId === signer.keyId &&
      verifySignature(signer.publicKey, 'pin', canonicalSha256({ kind: 'log', legacyHorizon: logPin.legacyHorizon, createdAt: logPin.createdAt }), logPin.sig);
    if (!ok)
      throw new AuditPinError(
        `the audit pin ${path} is not signed by this instance's audit key (key ${signer.keyId}); restore it, or move the folder away only if the database is new too`,
      );
    return new AuditPins(dir, signer, logPin.legacyHorizon);
  }

  private pathOf(tenantId: string): string {
    if (!UUID.test(tenantId)) throw new Error(`not a tenant id: ${tenantId}`);
    return join(this.dir, `tenant-${tenantId.toLowerCase()}.json`);
  }

  /** The tenant's signed pin; null when this instance has none yet. Throws when the file does not verify. */
  async signed(tenantId: string): Promise<SignedPin | null> {
    const path = this.pathOf(tenantId);
    const doc = readJson(path);
    if (!doc) return null;
    const signed = parseSignedPin(doc, path);
    const problem = pinSignatureProblem(signed, [this.signer]) ?? (signed.pin.tenantId === tenantId ? null : 'it names another tenant');
    if (problem) throw new AuditPinError(`the audit pin ${path} does not hold: ${problem}`);
    return signed;
  }

  /** The tenant's pin, or a new one (nothing pinned yet) when there is none. */
  async read(tenantId: string): Promise<TenantPin> {
    return (await this.signed(tenantId))?.pin ?? this.empty(tenantId);
  }

  private empty(tenantId: string): TenantPin {
    return { tenantId, legacyHorizon: this.legacyHorizon, checkpoint: null, verification: null, failure: null, updatedAt: new Date().toISOString() };
  }

  /** The tenant's signed pin, written now (nothing pinned yet) when there is none: an export always carries one. */
  async ensure(tenantId: string): Promise<SignedPin> {
    const existing = await this.signed(tenantId);
    if (existing) return existing;
    await this.update(tenantId, (p) => ({ ...p }));
    return (await this.signed(tenantId))!;
  }

  /** Changes the tenant's pin under its lock; `change` gets the current pin and returns the new one (or the same to write nothing). */
  async update(tenantId: string, change: (pin: TenantPin) => TenantPin): Promise<TenantPin> {
    const path = this.pathOf(tenantId);
    let result!: TenantPin;
    await withLock(path, async () => {
      const current = await this.read(tenantId);
      const next = change(current);
      result = next;
      if (next === current) return;
      const pin = { ...next, tenantId, updatedAt: new Date().toISOString() };
      const signed: SignedPin = { format: PIN_FORMAT, pin, keyId: this.signer.keyId, sig: this.signer.sign('pin', canonicalSha256(pin)) };
      writeAtomically(path, signed);
      result = pin;
    });
    return result;
  }
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AuditPinError(`the audit pin ${path} is not JSON`);
  }
}

function writeAtomically(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(value, null, 2));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

async function withLock(path: string, fn: () => unknown): Promise<void> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock);
      } catch {
        // gone meanwhile: try again
      }
      if (Date.now() > deadline) throw new AuditPinError(`the audit pin ${path} stayed locked for ${LOCK_WAIT_MS} ms (${lock})`);
      await sleep(5);
    }
  }
  try {
    await fn();
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      // already taken as stale by another writer
    }
  }
}

// The pins travel with the ORM, as the signer does (audit/signing.ts).
const EXTENSION = 'taskbay:audit-pins';

export function registerAuditPins(orm: { config: { registerExtension(name: string, cb: () => unknown): void } }, pins: AuditPins) {
  orm.config.registerExtension(EXTENSION, () => pins);
}

export function auditPinsOf(em: { config: { getExtension<T>(name: string): T | undefined } }): AuditPins {
  const pins = em.config.getExtension<AuditPins>(EXTENSION);
  if (!pins) throw new Error('no audit pins registered on this ORM (startInstance registers them)');
  return pins;
}
