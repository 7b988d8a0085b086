import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** Who did something: the audit log's actors (approvals' revisions name theirs the same way). */
export type ActorType = 'user' | 'agent' | 'service' | 'system';

/** Append-only (database triggers refuse UPDATE and DELETE); written only by audit/log.ts. */
export const AuditEvent = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_event',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    id: p.uuid(),
    tenantId: p.uuid(),
    stream: p.text(),
    type: p.text(),
    actorType: p.text().$type<ActorType>(),
    actorId: p.text().nullable(),
    at: p.datetime(),
    data: p.json<Record<string, unknown>>(),
    prevHash: p.text().nullable(),
    hash: p.text(),
    /** Ed25519 signature of the hash (audit/signing.ts); null only before signing existed. */
    sig: p.text().nullable(),
    keyId: p.text().nullable(),
  },
});

/** One signed chain per tenant; tenantId null marks the unsigned global checkpoints of before. */
export const AuditCheckpoint = defineEntity({
  name: 'AuditCheckpoint',
  tableName: 'audit_checkpoint',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    tenantId: p.uuid().nullable(),
    at: p.datetime(),
    heads: p.json<Record<string, unknown>>(),
    prevHash: p.text().nullable(),
    hash: p.text(),
    sig: p.text().nullable(),
    keyId: p.text().nullable(),
    /** The tenant's first signed event as of this checkpoint: no unsigned event may follow it. */
    firstSignedEventSeq: p.bigint('number').nullable(),
  },
});

export type AuditEventEntityRow = InferEntity<typeof AuditEvent>;

/** An audit event as read and verified (the row, typed). */
export interface AuditEventRow {
  seq: number;
  id: string;
  tenantId: string;
  stream: string;
  type: string;
  actorType: ActorType;
  actorId: string | null;
  at: Date;
  data: Record<string, unknown>;
  prevHash: string | null;
  hash: string;
  /** base64 Ed25519 signature of the hash; null only on events written before signing existed. */
  sig: string | null;
  keyId: string | null;
}
