import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { AgentCard } from '../a2a/types.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';
import type { AgentFailureKind } from '../net/failure.js';
import { AGENT_KIND_NAMES, agentKinds } from './kinds.js';

/** The last failed exchange with an agent (admins only): what callers saw, and the upstream detail they did not. */
export interface AgentFailureRecord {
  kind: AgentFailureKind;
  message: string;
  detail: string | null;
}

export { AGENT_KIND_NAMES, agentKindSpec, registerAgentKind, type AgentKind, type AgentKindSpec, type AgentKinds } from './kinds.js';

export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    /** The agent's protocol (kinds.ts); the list is read at discovery, once every module registered its kinds. */
    kind: p.enum(AGENT_KIND_NAMES).default('A2A'),
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
      // Each kind's own shape (kinds.ts), built at discovery.
      expression: () =>
        agentKinds()
          .map((k) => `(kind = '${k.kind}' and ${k.shape})`)
          .join(' or '),
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
