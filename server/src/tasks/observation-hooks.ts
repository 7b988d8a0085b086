import type { EntityManager } from '@mikro-orm/postgresql';
import type { AgentCard, Message } from '../a2a/types.js';
import type { Config } from '../config.js';
import type { TaskRow } from './entities.js';

// What later steps of the data path do with an observation, inside its transaction and under the
// task's row lock (tasks/observe.ts). They register here from their module.ts (approvals: detection
// and closing, delivery: outcomes, evidence: execution reports), so observation imports none of them.

export interface ObservationHook {
  /** The agent's messages this observation stored, also on an ended task (a report may come with the end). */
  messagesStored?(tem: EntityManager, task: TaskRow, messages: readonly Message[], card: AgentCard | null): Promise<void>;
  /** The agent answered with its task (not after the task ended, not over a limit). */
  taskAnswered?(tem: EntityManager, task: TaskRow): Promise<void>;
  /** The task ended (a terminal state) or Taskbay stopped following it: `state` is the task's. */
  taskEnded?(tem: EntityManager, task: TaskRow, state: string): Promise<void>;
  /**
   * The task is INPUT_REQUIRED with a status message from the agent. `known`: the agent's latest
   * card when the observation read it already (undefined: not read), the message's step when it
   * stored the message itself. A failure here must not fail the observation.
   */
  inputRequired?(
    tem: EntityManager,
    config: Config,
    task: TaskRow,
    message: Message,
    known: { card: AgentCard | null | undefined; stepSeq: number | undefined },
  ): Promise<void>;
}

const hooks = new Map<string, ObservationHook>();

export function registerObservationHook(name: string, hook: ObservationHook): void {
  const known = hooks.get(name);
  if (known && known !== hook) throw new Error(`an observation hook named ${name} is already registered`);
  hooks.set(name, hook);
}

export async function messagesStored(tem: EntityManager, task: TaskRow, messages: readonly Message[], card: AgentCard | null) {
  for (const h of hooks.values()) await h.messagesStored?.(tem, task, messages, card);
}

export async function taskAnswered(tem: EntityManager, task: TaskRow) {
  for (const h of hooks.values()) await h.taskAnswered?.(tem, task);
}

export async function taskEnded(tem: EntityManager, task: TaskRow, state: string) {
  for (const h of hooks.values()) await h.taskEnded?.(tem, task, state);
}

export async function inputRequired(...args: Parameters<NonNullable<ObservationHook['inputRequired']>>) {
  for (const h of hooks.values()) await h.inputRequired?.(...args);
}
