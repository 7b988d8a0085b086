import type { EntityManager } from '@mikro-orm/postgresql';
import { byId, manyBy } from '../graphql/loaders.js';
import { Agent, CardSnapshot, type AgentRow, type CardSnapshotRow } from './entities.js';
import { agentsCatalogRoute } from './routes.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './grant-admin-graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { actorOf, AgentRef } from './graphql.js';
export { registerAgentKind, type AgentKind, type AgentKinds } from './kinds.js';
export { alreadyRegistered, ensureCommandHookAgent, latestSnapshot, recordAgentFailure, requireCard } from './service.js';

// The agent catalog: agents registered by their Agent Card (or another module's way: AG-UI, command hooks)
// and the immutable snapshots of their cards.

const loaders = (em: EntityManager) => ({
  agent: byId<AgentRow>(em, Agent),
  snapshots: manyBy<CardSnapshotRow>(em, CardSnapshot, 'agentId', { number: 'desc' }),
});
type AgentsLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends AgentsLoaders {}
}

export const agentsModule = defineModule({
  name: 'agents',
  entities: [Agent, CardSnapshot],
  loaders,
  routes: [agentsCatalogRoute],
});
