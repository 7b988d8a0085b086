import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { ActorType } from '../approvals/entities.js';

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
  },
});

export const AuditCheckpoint = defineEntity({
  name: 'AuditCheckpoint',
  tableName: 'audit_checkpoint',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    at: p.datetime(),
    heads: p.json<Record<string, string>>(),
    prevHash: p.text().nullable(),
    hash: p.text(),
  },
});

export type AuditEventEntityRow = InferEntity<typeof AuditEvent>;
