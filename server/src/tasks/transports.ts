import type { EntityManager } from '@mikro-orm/postgresql';
import type { AgentKind, AgentRow } from '../agents/entities.js';
import type { Deps } from '../deps.js';
import type { TaskRow } from './entities.js';

// The one place where a task's transport is chosen. A2A is the tasks module's own (tasks/service.ts);
// another protocol's module registers how it starts a task and sends the person's next message
// (AG-UI: agui/module.ts), so tasks/ imports none of them.

export interface TaskInput {
  skillId: string | null;
  text?: string | null;
  data?: unknown;
  formValues?: unknown;
}

export interface TaskTransport {
  start(em: EntityManager, deps: Deps, viewer: { tenantId: string; userId: string }, agent: AgentRow, input: TaskInput): Promise<TaskRow>;
  /** The person's next message; `idempotencyKey` is refused by a transport that does not offer it. */
  send(
    em: EntityManager,
    deps: Deps,
    agent: AgentRow,
    task: TaskRow,
    input: { text?: string | null; data?: unknown; idempotencyKey?: string | null },
  ): Promise<TaskRow>;
}

const transports = new Map<AgentKind, TaskTransport>();

export function registerTaskTransport(kind: AgentKind, transport: TaskTransport): void {
  const known = transports.get(kind);
  if (known && known !== transport) throw new Error(`a task transport for ${kind} agents is already registered`);
  transports.set(kind, transport);
}

/** The registered transport of the agent's kind; null for A2A (tasks/service.ts sends it). */
export function transportOf(agent: Pick<AgentRow, 'kind'>): TaskTransport | null {
  return transports.get(agent.kind) ?? null;
}
