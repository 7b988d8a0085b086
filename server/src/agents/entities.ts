import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { AgentCard } from '../a2a/types.js';
import type { AgentFailureKind } from '../net/failure.js';

/** The last failed exchange with an agent (admins only): what callers saw, and the upstream detail they did not. */
export interface AgentFailureRecord {
  kind: AgentFailureKind;
  message: string;
  detail: string | null;
}

/**
 * A2A: registered from an Agent Card (has a card URL and snapshots). COMMAND_HOOK: the agent
 * record of one person's coding-agent hook (one per tenant and hook token owner; no card), to
 * which that person's command approvals belong, so grants on it decide who reviews them.
 */
export type AgentKind = 'A2A' | 'COMMAND_HOOK';

export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    kind: p.text().$type<AgentKind>(),
    /** Null for a command hook. */
    cardUrl: p.text().nullable(),
    /** The user whose hook this is (COMMAND_HOOK only). */
    hookUserId: p.uuid().nullable(),
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
