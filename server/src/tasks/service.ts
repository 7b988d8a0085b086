import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { A2AClient, A2AError, A2AStreamLimitError } from '../a2a/client.js';
import { advertisedExtensionUris, preferredInterface } from '../a2a/card.js';
import { MEDIA_TYPE, SKILL_ROUTING_EXTENSION, STRUCTURED_FORM_EXTENSION, TASKBAY_EXTENSIONS } from '../a2a/extensions.js';
import { TERMINAL_STATES, type A2ATaskState, type AgentCard, type Message, type Part, type SendMessageParams, type StreamEvent } from '../a2a/types.js';
import { parseA2uiAction } from '../forms/a2ui.js';
import { coerceFormReply, parseFormDefinition, type FormDefinition } from '../forms/form-subset.js';
import { Agent } from '../agents/entities.js';
import { latestSnapshot, recordAgentFailure, requireCard } from '../agents/module.js';
import { authorize, authorizeAgent } from '../auth/module.js';
import type { Access } from '../access.js';
import { log } from '../log.js';
import type { Deps } from '../deps.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { codePointLength, jsonBytes, MESSAGE_LIMITS } from '../limits.js';
import { Task, TaskMessage, type TaskRow } from './entities.js';
import { claimReply, clientReplyKey, releaseReply, requireOpen, type ReplyKey } from './replies.js';
import { recordObservation, recordStreamEvent, stopFollowing } from './observe.js';
import { transportOf } from './transports.js';

// Starting tasks and replying on them: Taskbay sends A2A SendMessage (or SendStreamingMessage)
// and stores the answer as an observation; forms, start forms and A2UI actions are replies too.
// A failed send stores nothing and says why.

/** The Taskbay extensions the agent advertises: what A2A-Extensions names. */
export function negotiatedExtensions(card: AgentCard): string[] {
  const advertised = new Set(advertisedExtensionUris(card));
  return TASKBAY_EXTENSIONS.filter((u) => advertised.has(u));
}

/** A person's typed text as a text part (none for absent or empty text). */
function textParts(text: string | null | undefined): Part[] {
  if (text == null || text === '') return [];
  if (codePointLength(text, MESSAGE_LIMITS.textMax) > MESSAGE_LIMITS.textMax) throw badInput(`text is longer than ${MESSAGE_LIMITS.textMax} characters`);
  return [{ text }];
}

export function userParts(text: string | null | undefined, data: unknown): Part[] {
  const parts: Part[] = textParts(text);
  if (data !== undefined && data !== null) {
    if (typeof data !== 'object' || Array.isArray(data)) throw badInput('data must be a JSON object');
    if (jsonBytes(data) > MESSAGE_LIMITS.dataMaxBytes) throw badInput('data is larger than 64 KiB');
    parts.push({ data, mediaType: MEDIA_TYPE.json });
  }
  if (!parts.length) throw badInput('a message needs text or data');
  return parts;
}

/** SendMessage params: the message, skill routing metadata (seed 003 "Skill routing"), and any push config. */
export function sendParams(card: AgentCard, message: Message, skillId: string | null, push?: { url: string; token: string }): SendMessageParams {
  const extensions = negotiatedExtensions(card);
  const params: SendMessageParams = { message };
  if (skillId && extensions.includes(SKILL_ROUTING_EXTENSION)) params.metadata = { [SKILL_ROUTING_EXTENSION]: { skillId } };
  if (push) params.configuration = { taskPushNotificationConfig: { url: push.url, token: push.token } };
  return params;
}

function agentInterface(card: AgentCard) {
  const iface = preferredInterface(card);
  if (!iface) throw badInput('the agent has no JSON-RPC or HTTP+JSON interface Taskbay can use');
  return iface;
}

/** A client on the agent's preferred interface (JSON-RPC or HTTP+JSON), through the agent network. */
export function agentClient(deps: Deps, card: AgentCard): A2AClient {
  const iface = agentInterface(card);
  return new A2AClient({ url: iface.url, extensions: negotiatedExtensions(card), binding: iface.binding, fetchImpl: deps.network.fetch });
}

/** SendMessage on the preferred interface. */
function send(deps: Deps, card: AgentCard, params: SendMessageParams) {
  return agentClient(deps, card).sendMessage(params);
}

export async function sendToAgent(deps: Deps, card: AgentCard, message: Message, skillId: string | null) {
  return send(deps, card, sendParams(card, message, skillId));
}

/** The callback URL a pushing agent posts task updates to (seed 003 "Receive push callbacks"). */
export function pushCallbackUrl(deps: Deps, localTaskId: string): string {
  return `${deps.config.publicUrl}/a2a/push/${localTaskId}`;
}

export const hashPushToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

const INTERRUPTED: readonly A2ATaskState[] = ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED', ...TERMINAL_STATES];

/**
 * One send on a local task, through the binding the card offers: SendStreamingMessage (each
 * event stored as it arrives, in its own transaction, so what it opens is visible before the
 * stream ends) when the card says capabilities.streaming, otherwise SendMessage. A stream that
 * drops or ends early is resumed with SubscribeToTask, then resynchronised with GetTask.
 * Throws (BAD_USER_INPUT, reason AGENT_ERROR) when the agent refused before anything was observed.
 */
async function exchange(em: EntityManager, deps: Deps, card: AgentCard, task: TaskRow, message: Message, push?: { url: string; token: string }) {
  const params = sendParams(card, message, task.skillId ?? null, push);
  if (!card.capabilities.streaming) {
    const result = await send(deps, card, params).catch(agentUnavailable(em, task.agentId));
    await recordObservation(em, deps.config, task.id, { sent: message, result });
    return;
  }
  const client = agentClient(deps, card);
  let observed = 0;
  let state: A2ATaskState | null = null;
  let remoteTaskId = task.remoteTaskId ?? null;
  const onEvent = async (event: StreamEvent) => {
    if (observed > 0 && ofKnownTaskArtifact(event, remoteTaskId)) {
      observed += 1;
      return;
    }
    const row = await recordStreamEvent(em.fork(), deps.config, task.id, event, observed === 0 ? message : undefined);
    observed += 1;
    state = row.state;
    remoteTaskId = row.remoteTaskId ?? null;
    stopReadingWhenNotFollowed(row);
  };
  try {
    await client.sendStreamingMessage(params, onEvent);
  } catch (e) {
    if (e instanceof NotFollowed) return;
    if (observed === 0) await agentUnavailable(em, task.agentId)(e);
    await recordAgentFailure(em, task.agentId, e);
    log.warn(`[a2a] stream of task ${task.id} broke after ${observed} events: ${(e as Error).message}`);
    if (e instanceof A2AStreamLimitError) return void (await stopFollowing(em.fork(), task.id, e.message));
  }
  if (state && INTERRUPTED.includes(state)) return;
  await resume(em, deps, card, task.id).catch((e) => log.warn(`[a2a] resuming task ${task.id} failed: ${(e as Error).message}`));
}

/**
 * An artifact update naming the task the stream is about: nothing of it is stored (Taskbay keeps
 * no artifacts), so it costs no round trip; a stream of thousands costs only their reading.
 */
function ofKnownTaskArtifact(event: StreamEvent, remoteTaskId: string | null): boolean {
  return 'artifactUpdate' in event && remoteTaskId !== null && event.artifactUpdate.taskId === remoteTaskId;
}

/** Ends the read of a stream once its last event stopped Taskbay following the task (TASK_LIMITS). */
class NotFollowed extends Error {}
function stopReadingWhenNotFollowed(row: TaskRow) {
  if (row.limitReason != null) throw new NotFollowed(row.limitReason);
}

/**
 * SubscribeToTask after a dropped stream; GetTask when that is refused or ends early too. A
 * stream Taskbay ended for its limits (A2AStreamLimitError) is not resumed: the agent would send
 * the same again; the task stops being followed instead, with the reason.
 */
export async function resume(em: EntityManager, deps: Deps, card: AgentCard, localTaskId: string) {
  const task = await em.fork().findOneOrFail(Task, { id: localTaskId });
  if (!task.remoteTaskId || task.limitReason != null) return;
  const client = agentClient(deps, card);
  let state: A2ATaskState = task.state;
  try {
    await client.subscribeToTask({ id: task.remoteTaskId }, async (event) => {
      if (ofKnownTaskArtifact(event, task.remoteTaskId ?? null)) return;
      const row = await recordStreamEvent(em.fork(), deps.config, localTaskId, event);
      state = row.state;
      stopReadingWhenNotFollowed(row);
    });
  } catch (e) {
    if (e instanceof NotFollowed) return;
    await recordAgentFailure(em, task.agentId, e);
    log.warn(`[a2a] SubscribeToTask for task ${localTaskId}: ${(e as Error).message}`);
    if (e instanceof A2AStreamLimitError) return void (await stopFollowing(em.fork(), localTaskId, e.message));
  }
  if (INTERRUPTED.includes(state)) return;
  const remote = await client.getTask({ id: task.remoteTaskId }).catch(async (e: unknown) => {
    await recordAgentFailure(em, task.agentId, e);
    throw e;
  });
  await recordObservation(em.fork(), deps.config, localTaskId, { result: { task: remote } });
}

/**
 * The caller's error for a failed exchange: the classified message (kind and agent host, never
 * what the agent answered), after the failure with its upstream detail is kept for admins.
 */
function agentUnavailable(em: EntityManager, agentId: string) {
  return async (e: unknown): Promise<never> => {
    await recordAgentFailure(em, agentId, e);
    if (e instanceof A2AError) {
      throw new DomainError('BAD_USER_INPUT', `the agent did not accept the message: ${e.message}`, { reason: 'AGENT_ERROR', failure: e.kind });
    }
    throw e;
  };
}

/** The start form of the agent's latest card (params.startForm of the structured-form entry), when valid. */
export function startFormOf(card: AgentCard): FormDefinition | null {
  const entry = card.capabilities.extensions?.find((e) => e.uri === STRUCTURED_FORM_EXTENSION);
  if (!entry?.params || !Object.hasOwn(entry.params, 'startForm')) return null;
  const r = parseFormDefinition(entry.params.startForm);
  return r.ok ? r.form : null;
}

function formValuesPart(form: FormDefinition, values: unknown): Part {
  const r = coerceFormReply(form, values);
  if (!r.ok) throw badInput('the form values are not valid', { fieldErrors: r.errors });
  return { data: r.values, mediaType: MEDIA_TYPE.json };
}

export async function startTask(
  em: EntityManager,
  access: Access,
  deps: Deps,
  input: { agentId: string; skillId?: string | null; text?: string | null; data?: unknown; formValues?: unknown },
) {
  const viewer = access.viewer;
  const skillId = input.skillId ?? null;
  const agent = await authorizeAgent(access, 'OPERATE', await em.findOne(Agent, { id: input.agentId, tenantId: viewer.tenantId }), skillId);
  const transport = transportOf(agent);
  if (transport) return transport.start(em, deps, viewer, agent, { ...input, skillId });
  requireCard(agent, 'takes no tasks');
  const snapshot = await latestSnapshot(em, agent.id);
  if (!snapshot) throw notFound('agent card');
  const card = snapshot.card;
  if (skillId && !card.skills.some((s) => s.id === skillId)) throw badInput(`the agent has no skill ${skillId}`);
  let parts: Part[];
  if (input.formValues !== undefined && input.formValues !== null) {
    // Seed 003 "Offer a start-of-task form": the submission is the first message's one
    // application/json data part. Text the person typed goes with it as a text part, before it.
    if (input.data !== undefined && input.data !== null) throw badInput('send either data or formValues, not both');
    const form = startFormOf(card);
    if (!form) throw badInput('the agent offers no valid start form');
    parts = [...textParts(input.text), formValuesPart(form, input.formValues)];
  } else {
    parts = userParts(input.text, input.data);
  }
  const message: Message = { messageId: randomUUID(), role: 'ROLE_USER', parts };
  const taskId = randomUUID();
  const push = card.capabilities.pushNotifications ? { url: pushCallbackUrl(deps, taskId), token: randomBytes(32).toString('base64url') } : undefined;
  // The task exists before the send: streamed events and pushes are stored against it as they
  // arrive. One INSERT, committed on its own (no BEGIN/COMMIT around it: one statement, not three).
  const now = new Date();
  const task: TaskRow = {
    id: taskId,
    tenantId: viewer.tenantId,
    agentId: agent.id,
    skillId,
    remoteTaskId: null,
    contextId: null,
    state: 'TASK_STATE_SUBMITTED',
    createdById: viewer.userId,
    lastStepSeq: 0,
    storedBytes: 0,
    statusChanges: 0,
    limitReason: null,
    pushTokenHash: push ? hashPushToken(push.token) : null,
    createdAt: now,
    updatedAt: now,
  };
  await em.insert(Task, task);
  try {
    await exchange(em, deps, card, task, message, push);
  } catch (e) {
    // A refused start stores nothing: the task goes again unless something was observed.
    await em.fork().transactional(async (tem) => {
      const row = await tem.findOne(Task, { id: taskId, lastStepSeq: 0 }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (row) tem.remove(row);
    });
    throw e;
  }
  return em.findOneOrFail(Task, { id: taskId }, { refresh: true });
}

async function operableTask(em: EntityManager, access: Access, taskId: string) {
  return authorize(access, 'OPERATE', 'task', await em.findOne(Task, { id: taskId, tenantId: access.viewer.tenantId }));
}

/** One send on an open task, as the person: the answer is stored as an observation. */
async function reply(em: EntityManager, deps: Deps, task: TaskRow, parts: Part[], messageId: string) {
  const snapshot = await latestSnapshot(em, task.agentId);
  if (!snapshot) throw notFound('agent card');
  const message: Message = {
    messageId,
    role: 'ROLE_USER',
    parts,
    taskId: task.remoteTaskId ?? undefined,
    contextId: task.contextId ?? undefined,
  };
  await exchange(em, deps, snapshot.card, task, message);
  return em.findOneOrFail(Task, { id: task.id }, { refresh: true });
}

/**
 * A reply that reaches the agent once per key (tasks/replies.ts); the same reply again sends
 * nothing. `answer` identifies it (by default the parts).
 */
async function keyedReply(em: EntityManager, access: Access, deps: Deps, task: TaskRow, key: ReplyKey, parts: Part[], answer: unknown = parts) {
  const claim = await claimReply(em, task.id, key, answer, access.viewer.userId);
  if (!claim.rowId) return em.findOneOrFail(Task, { id: task.id }, { refresh: true });
  try {
    return await reply(em, deps, task, parts, claim.messageId);
  } catch (e) {
    await releaseReply(em, claim);
    throw e;
  }
}

/**
 * The composer. Without an idempotencyKey every call is a new message; with one, the same key
 * and content again sends nothing and answers the task as it stands, other content is refused.
 */
export async function sendTaskMessage(
  em: EntityManager,
  access: Access,
  deps: Deps,
  input: { taskId: string; text?: string | null; data?: unknown; idempotencyKey?: string | null },
) {
  const task = await operableTask(em, access, input.taskId);
  const agent = await em.findOneOrFail(Agent, { id: task.agentId });
  const transport = transportOf(agent);
  if (transport) return transport.send(em, deps, agent, task, input);
  const parts = userParts(input.text, input.data);
  if (input.idempotencyKey != null) return keyedReply(em, access, deps, task, clientReplyKey(input.idempotencyKey), parts);
  requireOpen(task);
  return reply(em, deps, task, parts, randomUUID());
}

/** The agent message a person answers through the console (the waiting check runs when the answer is claimed). */
async function answeredMessage(em: EntityManager, task: TaskRow, messageId: string) {
  const [message] = await em.find(TaskMessage, { taskId: task.id, messageId, role: 'ROLE_AGENT' }, { refresh: true });
  if (!message) throw notFound('message');
  return message;
}

/** Seed 003 "Ask for a form": validate, keep only declared keys, coerce, send one application/json data part. */
export async function submitTaskForm(em: EntityManager, access: Access, deps: Deps, input: { taskId: string; messageId: string; values: unknown }) {
  const task = await operableTask(em, access, input.taskId);
  const message = await answeredMessage(em, task, input.messageId);
  const form = message.form ? parseFormDefinition(message.form) : null;
  if (!form?.ok) throw badInput('this message asks for no form');
  const parts = [formValuesPart(form.form, input.values)];
  return keyedReply(em, access, deps, task, { kind: 'answer', agentMessageId: message.messageId }, parts);
}

/** Seed 003 "Show an A2UI surface": one application/a2ui+json data part holding the action object. */
export async function sendA2uiAction(em: EntityManager, access: Access, deps: Deps, input: { taskId: string; messageId: string; action: unknown }) {
  const task = await operableTask(em, access, input.taskId);
  const message = await answeredMessage(em, task, input.messageId);
  if (!message.a2ui) throw badInput('this message shows no A2UI surface');
  const action = parseA2uiAction(input.action);
  if (!action.ok) throw badInput(action.error);
  const parts = [{ data: { version: 'v0.9', action: action.action }, mediaType: MEDIA_TYPE.a2ui }];
  // The same button pressed again is the same answer, whenever it was pressed.
  const { timestamp: _pressedAt, ...pressed } = action.action;
  return keyedReply(em, access, deps, task, { kind: 'answer', agentMessageId: message.messageId }, parts, pressed);
}

/** CancelTask on the agent; the task it returns is stored as an observation. */
export async function cancelTask(em: EntityManager, access: Access, deps: Deps, taskId: string) {
  const task = await operableTask(em, access, taskId);
  if (TERMINAL_STATES.includes(task.state)) throw badInput(`the task is already ${task.state}`);
  if (!task.remoteTaskId) throw badInput('the agent has not named this task yet');
  const snapshot = await latestSnapshot(em, task.agentId);
  if (!snapshot) throw notFound('agent card');
  const remote = await agentClient(deps, snapshot.card).cancelTask({ id: task.remoteTaskId }).catch(agentUnavailable(em, task.agentId));
  await recordObservation(em, deps.config, task.id, { result: { task: remote } });
  return em.findOneOrFail(Task, { id: task.id }, { refresh: true });
}

/** GetTask: resynchronises the stored task with the agent's view (VIEW is enough). */
export async function syncTask(em: EntityManager, access: Access, deps: Deps, taskId: string) {
  const task = await authorize(access, 'VIEW', 'task', await em.findOne(Task, { id: taskId, tenantId: access.viewer.tenantId }));
  if (!task.remoteTaskId) return task;
  const snapshot = await latestSnapshot(em, task.agentId);
  if (!snapshot) throw notFound('agent card');
  const remote = await agentClient(deps, snapshot.card).getTask({ id: task.remoteTaskId }).catch(agentUnavailable(em, task.agentId));
  await recordObservation(em, deps.config, task.id, { result: { task: remote } });
  return em.findOneOrFail(Task, { id: task.id }, { refresh: true });
}
