import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Agent } from '../agents/entities.js';
import { manyToOneId } from '../db/relations.js';
import { PERMISSIONS, Tenant, User } from './entities.js';

// Beside auth/entities.ts, not in it: a grant refers to an agent, and an agent (a command hook)
// to its user, so one file would import the other both ways.

/** A user's VIEW or OPERATE access to an agent's requests, optionally limited to one skill. */
export const AgentGrant = defineEntity({
  name: 'AgentGrant',
  tableName: 'agent_grant',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    userId: manyToOneId(User, 'user_id'),
    agentId: manyToOneId(Agent, 'agent_id'),
    skillId: p.text().nullable(),
    permission: p.enum([...PERMISSIONS]),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  // One grant per user, agent and skill (no skill counts as one skill).
  uniques: [{ name: 'agent_grant_scope', expression: `create unique index agent_grant_scope on agent_grant (user_id, agent_id, coalesce(skill_id, ''))` }],
});

export type AgentGrantRow = InferEntity<typeof AgentGrant>;
