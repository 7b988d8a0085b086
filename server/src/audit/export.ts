import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { rowToEvent, type AuditEventRow } from './log.js';
import { auditPinsOf, parseSignedPin, type SignedPin } from './pin.js';
import type { TrustedKey } from './signing.js';
import { rowToCheckpoint, type CheckpointRecord } from './verify.js';

// A tenant's audit log as one JSON document (GET /api/audit/export, `taskbay audit export`):
// every event with its signature and the tenant's signed checkpoints, for `taskbay audit verify`
// to check offline. The public key inside names the signer; it is not a trust anchor (whoever
// could rewrite the database could write an export and a key to match). Since @2 it carries the
// tenant's audit pin (audit/pin.ts, signed with the audit key): the newest checkpoint the server
// knows and which events may be unsigned, so a cut tail or stripped signatures are found offline.

export const EXPORT_FORMAT = 'taskbay.audit-export@2';
/** Exports from before the pin: verified as strictly as having no pin allows (audit/cli.ts). */
export const EXPORT_FORMAT_V1 = 'taskbay.audit-export@1';

export interface AuditExport {
  format: typeof EXPORT_FORMAT;
  tenant: { id: string; name: string };
  exportedAt: string;
  publicKey: { algorithm: 'Ed25519'; keyId: string; pem: string };
  /** Global unsigned checkpoints of before per-tenant ones: left out, they name every tenant's streams. */
  legacyCheckpointsOmitted: number;
  /** The tenant's pin as the server keeps it outside the database, read before the export's snapshot. */
  pin: SignedPin;
  checkpoints: (Omit<CheckpointRecord, 'at'> & { at: string })[];
  events: (Omit<AuditEventRow, 'at'> & { at: string })[];
}

/**
 * Events per statement and per write: the event loop turns between pages, whatever the size of
 * the log. A page's events are made into JSON in one go, so a page is small: 2,000 took up to
 * 40 ms on a busy 2-core machine in the bench's 100,000-event export.
 */
export const EXPORT_PAGE = 500;

/**
 * Writes the export a page of events at a time (the document's text, in order, through `write`,
 * which may wait for the reader). All of it from one snapshot of the database, so an event that
 * commits meanwhile is either in it with everything before it in its stream, or not at all.
 */
export async function writeExport(em: EntityManager, tenantId: string, signer: TrustedKey, write: (chunk: string) => Promise<void>): Promise<void> {
  // Read first: it was written after what it names committed, so the snapshot below holds all of that.
  const pin = await auditPinsOf(em).ensure(tenantId);
  await em.transactional(
    async (tem) => {
      const [tenant] = await sql<{ id: string; name: string }>(tem, 'select id, name from tenant where id = ?', [tenantId]);
      const checkpoints = (await sql(tem, 'select * from audit_checkpoint where tenant_id = ? order by seq', [tenantId])).map(rowToCheckpoint);
      const [legacy] = await sql<{ n: number }>(tem, 'select count(*)::int as n from audit_checkpoint where tenant_id is null');
      const head: Omit<AuditExport, 'events'> = {
        format: EXPORT_FORMAT,
        tenant: { id: tenantId, name: tenant?.name ?? '' },
        exportedAt: new Date().toISOString(),
        publicKey: { algorithm: 'Ed25519', keyId: signer.keyId, pem: signer.publicKeyPem },
        legacyCheckpointsOmitted: legacy?.n ?? 0,
        pin,
        checkpoints: checkpoints.map((c) => ({ ...c, at: c.at.toISOString() })),
      };
      await write(`${JSON.stringify(head).slice(0, -1)},"events":[`);
      for (let cursor = 0, first = true; ; first = false) {
        const page = (await sql(tem, 'select * from audit_event where tenant_id = ? and seq > ? order by seq limit ?', [tenantId, cursor, EXPORT_PAGE])).map(
          rowToEvent,
        );
        if (!page.length) break;
        await write((first ? '' : ',') + page.map((e) => JSON.stringify({ ...e, at: e.at.toISOString() })).join(','));
        cursor = page.at(-1)!.seq;
      }
      await write(']}');
    },
    { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true },
  );
}

export class ExportFormatError extends Error {}

const str = (v: unknown): v is string => typeof v === 'string';
const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const date = (v: unknown, what: string): Date => {
  const d = str(v) ? new Date(v) : new Date(NaN);
  if (Number.isNaN(d.getTime())) throw new ExportFormatError(`${what}: "at" is not a timestamp`);
  return d;
};

/** Reads an export back into what verifyAudit takes; throws ExportFormatError when it is not one. */
export function parseExport(doc: unknown): {
  tenant: { id: string; name: string };
  exportedAt: string | null;
  publicKey: { keyId: string | null; pem: string | null };
  events: AuditEventRow[];
  checkpoints: CheckpointRecord[];
  legacyCheckpointsOmitted: number;
  /** null: an @1 export, from before pins. */
  pin: SignedPin | null;
  format: typeof EXPORT_FORMAT | typeof EXPORT_FORMAT_V1;
} {
  const d = doc as Record<string, any>;
  if (typeof d !== 'object' || d === null || (d.format !== EXPORT_FORMAT && d.format !== EXPORT_FORMAT_V1)) {
    throw new ExportFormatError(`not a ${EXPORT_FORMAT} (or ${EXPORT_FORMAT_V1}) document`);
  }
  let pin: SignedPin | null = null;
  if (d.format === EXPORT_FORMAT) {
    try {
      pin = parseSignedPin(d.pin, 'pin');
    } catch (e) {
      throw new ExportFormatError((e as Error).message);
    }
  }
  if (!str(d.tenant?.id)) throw new ExportFormatError('tenant.id is missing');
  if (!Array.isArray(d.events) || !Array.isArray(d.checkpoints)) throw new ExportFormatError('events and checkpoints must be arrays');
  const events = d.events.map((e: any, i: number): AuditEventRow => {
    const what = `events[${i}]`;
    if (typeof e !== 'object' || e === null) throw new ExportFormatError(`${what} is not an object`);
    if (!Number.isSafeInteger(e.seq) || ![e.id, e.tenantId, e.stream, e.type, e.actorType, e.hash].every(str)) {
      throw new ExportFormatError(`${what} lacks seq, id, tenantId, stream, type, actorType or hash`);
    }
    if (![e.actorId, e.prevHash, e.sig, e.keyId].every(strOrNull) || typeof e.data !== 'object' || e.data === null) {
      throw new ExportFormatError(`${what} has a malformed actorId, prevHash, sig, keyId or data`);
    }
    return {
      seq: e.seq,
      id: e.id,
      tenantId: e.tenantId,
      stream: e.stream,
      type: e.type,
      actorType: e.actorType,
      actorId: e.actorId,
      at: date(e.at, what),
      data: e.data,
      prevHash: e.prevHash,
      hash: e.hash,
      sig: e.sig,
      keyId: e.keyId,
    };
  });
  const checkpoints = d.checkpoints.map((c: any, i: number): CheckpointRecord => {
    const what = `checkpoints[${i}]`;
    if (typeof c !== 'object' || c === null) throw new ExportFormatError(`${what} is not an object`);
    if (!Number.isSafeInteger(c.seq) || !str(c.hash) || ![c.tenantId, c.prevHash, c.sig, c.keyId].every(strOrNull)) {
      throw new ExportFormatError(`${what} has a malformed seq, tenantId, prevHash, hash, sig or keyId`);
    }
    if (typeof c.heads !== 'object' || c.heads === null || Array.isArray(c.heads)) throw new ExportFormatError(`${what}.heads is not an object`);
    if (c.firstSignedEventSeq !== null && !Number.isSafeInteger(c.firstSignedEventSeq)) throw new ExportFormatError(`${what}.firstSignedEventSeq is not a seq`);
    return {
      seq: c.seq,
      tenantId: c.tenantId,
      at: date(c.at, what),
      heads: c.heads,
      prevHash: c.prevHash,
      hash: c.hash,
      sig: c.sig,
      keyId: c.keyId,
      firstSignedEventSeq: c.firstSignedEventSeq,
    };
  });
  return {
    tenant: { id: d.tenant.id, name: str(d.tenant.name) ? d.tenant.name : '' },
    exportedAt: str(d.exportedAt) ? d.exportedAt : null,
    publicKey: { keyId: str(d.publicKey?.keyId) ? d.publicKey.keyId : null, pem: str(d.publicKey?.pem) ? d.publicKey.pem : null },
    events,
    checkpoints,
    legacyCheckpointsOmitted: Number.isSafeInteger(d.legacyCheckpointsOmitted) ? d.legacyCheckpointsOmitted : 0,
    pin,
    format: d.format,
  };
}
