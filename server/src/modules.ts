import type { GraphQLSchema } from 'graphql';
import { registerLoaders } from './graphql/loaders.js';
import { buildSchema } from './graphql/schema.js';
import type { Route } from './http/route.js';
import type { JobDefinition } from './jobs/job.js';
import type { AuditEventRow } from './audit/entities.js';
import type { ModuleInstance, ModuleRunning, TaskbayModule } from './module-kit.js';
import { authModule } from './auth/module.js';
import { agentsModule } from './agents/module.js';
import { groupsModule } from './groups/module.js';
import { policiesModule } from './policies/module.js';
import { tasksModule } from './tasks/module.js';
import { aguiModule } from './agui/module.js';
import { approvalsModule } from './approvals/module.js';
import { escalationModule } from './escalation/module.js';
import { decisionsModule } from './decisions/module.js';
import { approvalSigningModule } from './approval-signing/module.js';
import { deliveryModule } from './delivery/module.js';
import { evidenceModule } from './evidence/module.js';
import { commandsModule } from './commands/module.js';
import { hooksModule } from './hooks/module.js';
import { mcpModule } from './mcp/module.js';
import { contractModule } from './contract/module.js';
import { auditModule } from './audit/module.js';
import { webhooksModule } from './webhooks/module.js';

// Every domain of Taskbay, once, in the order of the data path: who is who, the agent catalog,
// tasks and their transports, requests, decisions, delivery and what the agent reports, command
// approvals and coding-agent hooks, MCP hosts, the seed 001 view, the audit log and what tells the world.
// app.ts, the ORM's entity list, the loaders and the GraphQL schema are assembled from this list;
// adding a domain adds its folder and one line here (docs/ARCHITECTURE.md "Adding a domain").
export const MODULES: readonly TaskbayModule[] = [
  authModule,
  agentsModule,
  groupsModule,
  policiesModule,
  tasksModule,
  aguiModule,
  approvalsModule,
  escalationModule,
  decisionsModule,
  approvalSigningModule,
  deliveryModule,
  evidenceModule,
  commandsModule,
  hooksModule,
  mcpModule,
  contractModule,
  auditModule,
  webhooksModule,
];

const names = new Set<string>();
for (const m of MODULES) {
  if (names.has(m.name)) throw new Error(`two modules are named ${m.name}`);
  names.add(m.name);
  if (m.loaders) registerLoaders(m.loaders);
}

/** Every entity of every module, for MikroORM. */
export const ENTITIES: readonly unknown[] = MODULES.flatMap((m) => m.entities ?? []);

/** The modules' HTTP endpoints, in module order. */
export const MODULE_ROUTES: readonly Route[] = MODULES.flatMap((m) => m.routes ?? []);

/** The modules' background jobs. */
export const MODULE_JOBS: readonly JobDefinition[] = MODULES.flatMap((m) => m.jobs ?? []);

/** The GraphQL schema: every module's types and fields, registered when its module.ts was imported above. */
export const schema: GraphQLSchema = buildSchema();

/** Every module's part of one instance, started in module order (app.ts), as one. */
export function startModules(instance: ModuleInstance) {
  const running: ModuleRunning[] = MODULES.flatMap((m) => (m.start ? [m.start(instance)] : []));
  const channels: Record<string, (payload: string) => void> = {};
  for (const r of running) {
    for (const [name, handle] of Object.entries(r.channels ?? {})) {
      if (channels[name]) throw new Error(`two modules listen on ${name}`);
      channels[name] = handle;
    }
  }
  const appended = running.flatMap((r) => (r.appendedEvents ? [r.appendedEvents] : []));
  const listening = running.flatMap((r) => (r.onEvent ? [r.onEvent] : []));
  return {
    channels,
    onEvent: (event: AuditEventRow) => {
      for (const hear of listening) hear(event);
    },
    appendedEvents: async (tem: Parameters<NonNullable<ModuleRunning['appendedEvents']>>[0], rows: readonly AuditEventRow[]) => {
      for (const work of appended) await work(tem, rows);
    },
    startBackground: () => {
      for (const r of running) r.startBackground?.();
    },
    stop: async () => {
      for (const r of running) await r.stop?.();
    },
  };
}
