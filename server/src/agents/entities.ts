import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { AgentCard } from '../a2a/types.js';
import type { AgentFailureKind } from '../net/failure.js';

/** The last failed exchange with an agent (admins only): what callers saw, and the upstream detail they did not. */
export interface AgentFailureRecord {
  kind: AgentFailureKind;
  message: string;
  detail: string | null;
}

export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    cardUrl: p.text(),
    name: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastError: p.json<AgentFailureRecord>().nullable(),
    lastErrorAt: p.datetime().nullable(),
  },
});

/** Immutable: a refresh adds a snapshot; extension negotiation reads the latest. */
export const CardSnapshot = defineEntity({
  name: 'CardSnapshot',
  tableName: 'card_snapshot',
  properties: {
    id: p.uuid().primary(),
    agentId: p.uuid(),
    number: p.integer(),
    card: p.json<AgentCard>(),
    fetchedAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AgentRow = InferEntity<typeof Agent>;
export type CardSnapshotRow = InferEntity<typeof CardSnapshot>;
