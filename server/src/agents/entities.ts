import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { AgentCard } from '../a2a/types.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';
import type { AgentFailureKind } from '../net/failure.js';

/** The last failed exchange with an agent (admins only): what callers saw, and the upstream detail they did not. */
export interface AgentFailureRecord {
  kind: AgentFailureKind;
  message: string;
  detail: string | null;
}

/**
 * The agent's protocol. A2A: registered from an Agent Card (has a card URL and snapshots).
 * AG_UI: an AG-UI agent registered by its endpoint URL (no card; docs/AG-UI.md). COMMAND_HOOK:
 * the agent record of one person's coding-agent hook (one per tenant and hook token owner; no
 * card), to which that person's command approvals belong, so grants on it decide who reviews them.
 * MCP_CLIENT: an MCP host calling Taskbay's MCP server with a person's API token (one per token
 * and client name; no card, no endpoint); its requests belong to it, so grants on it decide who
 * reviews them (docs/MCP.md).
 */
export const AGENT_KINDS = ['A2A', 'COMMAND_HOOK', 'AG_UI', 'MCP_CLIENT'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    kind: p.enum([...AGENT_KINDS]).default('A2A'),
    /** Null for a command hook. */
    cardUrl: p.text().nullable(),
    /** Where runs are POSTed (AG_UI only). */
    endpointUrl: p.text().nullable(),
    /** The user whose hook this is (COMMAND_HOOK only). */
    hookUserId: manyToOneId(User, 'hook_user_id').nullable(),
    name: p.text(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    lastError: p.json<AgentFailureRecord>().nullable(),
    lastErrorAt: p.datetime().nullable(),
  },
  uniques: [
    { properties: ['tenantId', 'cardUrl'] },
    { properties: ['tenantId', 'endpointUrl'] },
    {
      name: 'agent_one_hook_per_user',
      expression: `create unique index agent_one_hook_per_user on agent (tenant_id, hook_user_id) where kind = 'COMMAND_HOOK'`,
    },
  ],
  checks: [
    {
      name: 'agent_kind_shape',
      expression: `(kind = 'A2A' and card_url is not null and hook_user_id is null and endpoint_url is null) or (kind = 'COMMAND_HOOK' and card_url is null and hook_user_id is not null and endpoint_url is null) or (kind = 'AG_UI' and endpoint_url is not null and card_url is null and hook_user_id is null) or (kind = 'MCP_CLIENT' and card_url is null and hook_user_id is null and endpoint_url is null)`,
    },
  ],
});

/** Immutable: a refresh adds a snapshot; extension negotiation reads the latest. */
export const CardSnapshot = defineEntity({
  name: 'CardSnapshot',
  tableName: 'card_snapshot',
  properties: {
    id: p.uuid().primary(),
    agentId: manyToOneId(Agent, 'agent_id'),
    number: p.integer(),
    card: p.json<AgentCard>(),
    fetchedAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ properties: ['agentId', 'number'] }],
});

export type AgentRow = InferEntity<typeof Agent>;
export type CardSnapshotRow = InferEntity<typeof CardSnapshot>;
