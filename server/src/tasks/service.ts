import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { A2AError } from '../a2a/client.js';
import { advertisedExtensionUris, preferredJsonRpcInterface } from '../a2a/card.js';
import { MEDIA_TYPE, SKILL_ROUTING_EXTENSION, TASKBAY_EXTENSIONS } from '../a2a/extensions.js';
import { TERMINAL_STATES, type AgentCard, type Message, type Part } from '../a2a/types.js';
import { Agent } from '../agents/entities.js';
import { latestSnapshot } from '../agents/service.js';
import type { Access } from '../auth/access.js';
import type { Deps } from '../deps.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { jsonBytes } from '../limits.js';
import { Task } from './entities.js';
import { recordObservation } from './observe.js';

// Starting tasks and replying on them: Taskbay sends A2A SendMessage and stores the answer as an
// observation. A failed send stores nothing and says why.

export const MESSAGE_LIMITS = { textMax: 20000, dataMaxBytes: 64 * 1024 } as const;

/** The Taskbay extensions the agent advertises: what A2A-Extensions names. */
export function negotiatedExtensions(card: AgentCard): string[] {
  const advertised = new Set(advertisedExtensionUris(card));
  return TASKBAY_EXTENSIONS.filter((u) => advertised.has(u));
}

export function userParts(text: string | null | undefined, data: unknown): Part[] {
  const parts: Part[] = [];
  if (text != null && text !== '') {
    if ([...text].length > MESSAGE_LIMITS.textMax) throw badInput(`text is longer than ${MESSAGE_LIMITS.textMax} characters`);
    parts.push({ text });
  }
  if (data !== undefined && data !== null) {
    if (typeof data !== 'object' || Array.isArray(data)) throw badInput('data must be a JSON object');
    if (jsonBytes(data) > MESSAGE_LIMITS.dataMaxBytes) throw badInput('data is larger than 64 KiB');
    parts.push({ data, mediaType: MEDIA_TYPE.json });
  }
  if (!parts.length) throw badInput('a message needs text or data');
  return parts;
}

export async function sendToAgent(deps: Deps, card: AgentCard, message: Message, skillId: string | null) {
  const iface = preferredJsonRpcInterface(card);
  if (!iface) throw badInput('the agent has no JSON-RPC interface Taskbay can use');
  const extensions = negotiatedExtensions(card);
  const metadata: Record<string, unknown> = {};
  if (skillId && extensions.includes(SKILL_ROUTING_EXTENSION)) metadata[SKILL_ROUTING_EXTENSION] = { skillId };
  return deps.sendMessage(iface.url, extensions, { message, ...(Object.keys(metadata).length ? { metadata } : {}) });
}

function agentUnavailable(e: unknown): never {
  if (e instanceof A2AError) {
    throw new DomainError('BAD_USER_INPUT', `the agent did not accept the message: ${e.message}`, { reason: 'AGENT_ERROR' });
  }
  throw e;
}

export async function startTask(
  em: EntityManager,
  access: Access,
  deps: Deps,
  input: { agentId: string; skillId?: string | null; text?: string | null; data?: unknown },
) {
  const viewer = access.viewer;
  const agent = await em.findOne(Agent, { id: input.agentId, tenantId: viewer.tenantId });
  const skillId = input.skillId ?? null;
  // Seeing the agent (any grant on it) and being allowed to use this skill are different answers.
  if (!agent || !(await access.seesAgent(agent.id))) throw notFound('agent');
  if (!(await access.has('OPERATE', agent.id, skillId))) throw new DomainError('FORBIDDEN', 'you need OPERATE on this agent');
  const snapshot = await latestSnapshot(em, agent.id);
  if (!snapshot) throw notFound('agent card');
  if (skillId && !snapshot.card.skills.some((s) => s.id === skillId)) throw badInput(`the agent has no skill ${skillId}`);
  const message: Message = { messageId: randomUUID(), role: 'ROLE_USER', parts: userParts(input.text, input.data) };
  const result = await sendToAgent(deps, snapshot.card, message, skillId).catch(agentUnavailable);
  const taskId = randomUUID();
  await em.transactional(async (tem) => {
    tem.create(Task, {
      id: taskId,
      tenantId: viewer.tenantId,
      agentId: agent.id,
      skillId,
      remoteTaskId: null,
      contextId: null,
      state: 'TASK_STATE_SUBMITTED',
      createdById: viewer.userId,
      lastStepSeq: 0,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    await tem.flush();
    await recordObservation(tem, deps.config, taskId, { sent: message, result });
  });
  return em.findOneOrFail(Task, { id: taskId }, { refresh: true });
}

export async function sendTaskMessage(
  em: EntityManager,
  access: Access,
  deps: Deps,
  input: { taskId: string; text?: string | null; data?: unknown },
) {
  const viewer = access.viewer;
  const task = await em.findOne(Task, { id: input.taskId, tenantId: viewer.tenantId });
  if (!task || !(await access.has('VIEW', task.agentId, task.skillId ?? null))) throw notFound('task');
  if (!(await access.has('OPERATE', task.agentId, task.skillId ?? null))) throw new DomainError('FORBIDDEN', 'you need OPERATE on this agent');
  if (TERMINAL_STATES.includes(task.state)) throw badInput(`the task is ${task.state} and takes no more messages`);
  const snapshot = await latestSnapshot(em, task.agentId);
  if (!snapshot) throw notFound('agent card');
  const message: Message = {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: userParts(input.text, input.data),
    taskId: task.remoteTaskId ?? undefined,
    contextId: task.contextId ?? undefined,
  };
  const result = await sendToAgent(deps, snapshot.card, message, task.skillId ?? null).catch(agentUnavailable);
  await recordObservation(em, deps.config, task.id, { sent: message, result });
  return em.findOneOrFail(Task, { id: task.id }, { refresh: true });
}
