import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** Who did something: the audit log's actors (approvals' revisions name theirs the same way). */
/** Seed 002's command events, the only upper-case event types (a constraint below holds it). */
export const COMMAND_EVENT_TYPES = ['REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'NOOP', 'REVOKED', 'REVERTED'] as const;

export const ACTOR_TYPES = ['user', 'agent', 'service', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

// tenant_id is a plain uuid in both tables: the migrations give the audit log no foreign keys.

/** Append-only (database triggers refuse UPDATE and DELETE); written only by audit/log.ts. */
export const AuditEvent = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_event',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    id: p.uuid().unique(),
    tenantId: p.uuid(),
    stream: p.text(),
    type: p.text(),
    actorType: p.enum([...ACTOR_TYPES]),
    actorId: p.text().nullable(),
    at: p.datetime(),
    data: p.json<Record<string, unknown>>(),
    prevHash: p.text().nullable(),
    hash: p.text().unique(),
    /** Ed25519 signature of the hash (audit/signing.ts); null only before signing existed. */
    sig: p.text().nullable(),
    keyId: p.text().nullable(),
    /** The transaction that appended the event (events/listener.ts); null for events from before it was recorded. */
    xid: p.string().columnType('xid8').nullable().defaultRaw('pg_current_xact_id()'),
  },
  indexes: [
    { name: 'audit_event_stream', properties: ['stream', 'seq'] },
    { name: 'audit_event_tenant_seq', properties: ['tenantId', 'seq'] },
    { name: 'audit_event_xid', expression: 'create index audit_event_xid on audit_event (xid) where xid is not null' },
    // Whether a failed verification was acknowledged (audit/failures.ts).
    {
      name: 'audit_event_acknowledgements',
      expression: `create index audit_event_acknowledgements on audit_event ((data->>'failureId')) where type = 'audit.failure_acknowledged'`,
    },
  ],
  uniques: [
    // A stream never forks: one successor per head (and one first event per stream).
    { name: 'audit_event_chain', expression: `create unique index audit_event_chain on audit_event (stream, coalesce(prev_hash, ''))` },
    // One REQUESTED per stream (per command approval).
    { name: 'audit_event_one_requested', expression: `create unique index audit_event_one_requested on audit_event (stream) where type = 'REQUESTED'` },
  ],
  checks: [
    // Seed 002: an upper-case event type is one of its nine (written as Postgres prints it back).
    {
      name: 'audit_event_command_types',
      expression: `type !~ '^[A-Z_]+$' or type = any (array[${COMMAND_EVENT_TYPES.map((t) => `'${t}'`).join(', ')}])`,
    },
  ],
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
    hash: p.text().unique(),
    sig: p.text().nullable(),
    keyId: p.text().nullable(),
    /** The tenant's first signed event as of this checkpoint: no unsigned event may follow it. */
    firstSignedEventSeq: p.bigint('number').nullable(),
  },
  indexes: [{ name: 'audit_checkpoint_tenant', properties: ['tenantId', 'seq'] }],
  uniques: [
    // One chain per tenant (the legacy global chain has none): one first checkpoint and one successor per checkpoint in each.
    {
      name: 'audit_checkpoint_chain',
      expression: `create unique index audit_checkpoint_chain on audit_checkpoint (coalesce(tenant_id::text, ''), coalesce(prev_hash, ''))`,
    },
  ],
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
