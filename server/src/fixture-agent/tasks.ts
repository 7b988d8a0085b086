import { randomUUID } from 'node:crypto';
import { SKILL_ROUTING_EXTENSION } from '../a2a/extensions.js';
import { TERMINAL_STATES, type Message, type Task } from '../a2a/types.js';
import { skillsOf, type Modes } from './cards.js';
import type { Variant } from './content.js';
import { computeReply, formAskedIn, isObject, RpcFailure, validateMessage } from './script.js';

// The fixture agent's tasks, in memory: the A2A methods (SendMessage, GetTask, CancelTask) on
// them, duplicate detection, the skill route, and push delivery. The binding (JSON-RPC or
// HTTP+JSON, SSE) is server.ts's; what a reply says is script.ts's.

export interface ReceivedMessage {
  variant: Variant;
  /** Request headers as received (lower-case names); undefined when absent. */
  headers: { 'a2a-version'?: string; 'a2a-extensions'?: string };
  /** `params.message` exactly as it arrived. */
  message: Message;
  /** `params.metadata` (request-level metadata, e.g. skill routing), when present. */
  requestMetadata?: Record<string, unknown>;
  /** The task the message went to. */
  taskId: string;
  /** True when the messageId was already seen on that task (a retry): not processed again. */
  duplicate: boolean;
}

export interface SentPush {
  taskId: string;
  url: string;
  token: string;
  /** The JSON body posted (an A2A v1.0 StreamResponse with a statusUpdate). */
  body: unknown;
  /** The HTTP status the receiver answered, or an error message. */
  outcome: number | string;
}

export interface StoredTask {
  variant: Variant;
  task: Task;
  messageIds: Set<string>;
  /** The form of the latest send_data approval request the agent sent on this task. */
  askedForm?: Record<string, unknown>;
  /** taskPushNotificationConfig of the message that started the task (push mode). */
  push?: { url: string; token: string };
  /** Skill-routing mode: the skill the task started with (null: unrestricted), enforced on every follow-up. */
  skillId?: string | null;
}

/** A handled SendMessage: the task as answered; with `finish`, the reply is still to be applied. */
export interface Handled {
  task: Task;
  stored?: StoredTask;
  finish?: () => Task;
}

export interface TaskStoreOptions {
  modes: Modes;
  /** Delay before a push is sent (default 50 ms). */
  pushDelayMs?: number;
  /** Awaited before the agent finishes a task and pushes the update. */
  beforePush?: (taskId: string) => Promise<void> | void;
}

export function createTaskStore(opts: TaskStoreOptions) {
  const { modes } = opts;
  const tasks = new Map<string, StoredTask>();
  /** `<variant> <messageId>` of messages that started a task, so a retried first message is a duplicate. */
  const startedBy = new Map<string, string>();
  const received: ReceivedMessage[] = [];
  const pushes: SentPush[] = [];

  const snapshot = (stored: StoredTask, historyLength?: number): Task => {
    const copy = structuredClone(stored.task);
    if (historyLength !== undefined && copy.history) {
      copy.history = historyLength <= 0 ? [] : copy.history.slice(-historyLength);
    }
    return copy;
  };

  const find = (variant: Variant, params: unknown): StoredTask => {
    if (!isObject(params) || typeof params.id !== 'string') throw new RpcFailure(-32602, 'params.id is required');
    const stored = tasks.get(params.id);
    if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${params.id}`);
    return stored;
  };

  /** Handles a message; with `defer` the task is left WORKING and `finish()` applies the reply later. */
  const sendMessage = (variant: Variant, params: unknown, headers: ReceivedMessage['headers'], defer = false): Handled => {
    if (!isObject(params)) throw new RpcFailure(-32602, 'params must be an object');
    const message = validateMessage(params.message);
    const requestMetadata = isObject(params.metadata) ? params.metadata : undefined;
    const record = (taskId: string, duplicate: boolean) =>
      received.push({
        variant,
        headers,
        message: structuredClone(message),
        ...(requestMetadata ? { requestMetadata: structuredClone(requestMetadata) } : {}),
        taskId,
        duplicate,
      });

    let stored: StoredTask | undefined;
    if (message.taskId !== undefined) {
      stored = tasks.get(message.taskId);
      if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${message.taskId}`);
      if (message.contextId !== undefined && message.contextId !== stored.task.contextId) {
        throw new RpcFailure(-32602, 'message.contextId does not match the task');
      }
      if (stored.messageIds.has(message.messageId)) {
        record(stored.task.id, true);
        return { task: snapshot(stored) };
      }
      if (TERMINAL_STATES.includes(stored.task.status.state)) {
        throw new RpcFailure(-32004, `Task ${stored.task.id} is in a terminal state (${stored.task.status.state})`);
      }
    } else {
      const earlier = startedBy.get(`${variant} ${message.messageId}`);
      const earlierTask = earlier ? tasks.get(earlier) : undefined;
      if (earlierTask) {
        record(earlierTask.task.id, true);
        return { task: snapshot(earlierTask) };
      }
    }

    // Seed 003 "Skill routing": "Your agent must enforce the route, reject unsupported skills,
    // and keep the new context inside the skill": a follow-up must carry the route its task
    // started with (none when it started unrestricted).
    const route = modes.skillRouting ? requestMetadata?.[SKILL_ROUTING_EXTENSION] : undefined;
    let routedSkill: string | null = null;
    if (route !== undefined) {
      const skills = skillsOf(variant).map((s) => s.id);
      if (!isObject(route) || typeof route.skillId !== 'string' || !skills.includes(route.skillId)) {
        throw new RpcFailure(-32602, `unsupported skill ${String(isObject(route) ? route.skillId : route)}`);
      }
      routedSkill = route.skillId;
    }
    if (modes.skillRouting && stored && (stored.skillId ?? null) !== routedSkill) {
      throw new RpcFailure(
        -32602,
        `task ${stored.task.id} is routed to ${stored.skillId ? `skill ${stored.skillId}` : 'no skill'}; this message is routed to ${routedSkill ? `skill ${routedSkill}` : 'no skill'}`,
      );
    }

    // Compute before mutating, so a scripted-reply error leaves no trace.
    const reply = computeReply(variant, message, stored?.askedForm);

    if (!stored) {
      const id = randomUUID();
      stored = {
        variant,
        task: {
          id,
          contextId: message.contextId ?? randomUUID(),
          status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
          history: [],
        },
        messageIds: new Set(),
        skillId: routedSkill,
      };
      tasks.set(id, stored);
      startedBy.set(`${variant} ${message.messageId}`, id);
    }
    const task = stored.task;
    const pushConfig = isObject(params.configuration) ? params.configuration.taskPushNotificationConfig : undefined;
    if (modes.push && !stored.push && isObject(pushConfig) && typeof pushConfig.url === 'string' && typeof pushConfig.token === 'string') {
      stored.push = { url: pushConfig.url, token: pushConfig.token };
    }
    stored.messageIds.add(message.messageId);
    record(task.id, false);
    task.history!.push({ ...structuredClone(message), taskId: task.id, contextId: task.contextId });

    const agentMessage: Message = {
      messageId: randomUUID(),
      role: 'ROLE_AGENT',
      parts: reply.parts,
      taskId: task.id,
      contextId: task.contextId,
    };
    const done = stored;
    const finish = () => {
      task.status = { state: reply.state, message: agentMessage, timestamp: new Date().toISOString() };
      task.history!.push(structuredClone(agentMessage));
      const asked = formAskedIn(reply.parts);
      if (asked) done.askedForm = asked;
      return snapshot(done);
    };
    if (defer || (modes.push && stored.push)) {
      task.status = { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() };
      return { task: snapshot(stored), stored, finish };
    }
    finish();
    return { task: snapshot(stored), stored };
  };

  /** Push mode: applies the reply after a delay and posts it to the task's callback. */
  const schedulePush = (stored: StoredTask, finish: () => Task) => {
    const target = stored.push!;
    setTimeout(async () => {
      await opts.beforePush?.(stored.task.id);
      const task = finish();
      const body = { statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } };
      const entry: SentPush = { taskId: task.id, url: target.url, token: target.token, body, outcome: 'pending' };
      fetch(target.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-A2A-Notification-Token': target.token },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (r) => {
          await r.body?.cancel().catch(() => undefined);
          entry.outcome = r.status;
          pushes.push(entry);
        },
        (e: unknown) => {
          entry.outcome = String((e as Error)?.message ?? e);
          pushes.push(entry);
        },
      );
    }, opts.pushDelayMs ?? 50);
  };

  /** SendMessage (not streamed): the answer, with the reply pushed later when the task has a push config. */
  const sendAndPush = (variant: Variant, params: unknown, headers: ReceivedMessage['headers']): Task => {
    const r = sendMessage(variant, params, headers);
    if (r.finish && r.stored?.push) schedulePush(r.stored, r.finish);
    return r.task;
  };

  const getTask = (variant: Variant, params: unknown): Task => {
    const stored = find(variant, params);
    const historyLength = isObject(params) && typeof params.historyLength === 'number' ? params.historyLength : undefined;
    return snapshot(stored, historyLength);
  };

  const cancelTask = (variant: Variant, params: unknown): Task => {
    const stored = find(variant, params);
    if (TERMINAL_STATES.includes(stored.task.status.state)) {
      throw new RpcFailure(-32002, `Task ${stored.task.id} cannot be canceled: it is ${stored.task.status.state}`);
    }
    stored.task.status = { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() };
    return snapshot(stored);
  };

  return {
    received,
    pushes,
    sendMessage,
    sendAndPush,
    getTask,
    cancelTask,
    /** A stored task (a copy), for assertions. */
    peek(taskId: string): Task | undefined {
      const stored = tasks.get(taskId);
      return stored ? snapshot(stored) : undefined;
    },
    reset() {
      tasks.clear();
      startedBy.clear();
      received.length = 0;
      pushes.length = 0;
    },
  };
}

export type TaskStore = ReturnType<typeof createTaskStore>;
