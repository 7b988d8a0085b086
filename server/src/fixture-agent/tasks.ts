import { randomUUID } from 'node:crypto';
import { SKILL_ROUTING_EXTENSION } from '../a2a/extensions.js';
import { TERMINAL_STATES, type Message, type StreamEvent, type Task } from '../a2a/types.js';
import { isPlainObject } from '../lib/untrusted.js';
import { skillsOf, type Modes } from './cards.js';
import type { ApprovalKeysCheck } from './approval-trust.js';
import type { Variant } from './content.js';
import { computeReply, formAskedIn, RpcFailure, validateMessage } from './script.js';

// The fixture agent's tasks, in memory: the A2A methods on them, duplicate detection, the skill
// route, subscribers and push delivery. The binding (JSON-RPC or HTTP+JSON, SSE) is server.ts's;
// what a reply says is script.ts's.
//
// Seed 003: "Every reply is an A2A task update: TASK_STATE_WORKING, then a final status event".
// Each new message starts a run: the task turns WORKING, then the reply is applied (the final
// status). Each change is a statusUpdate event that goes to the task's open SubscribeToTask
// streams, and to its push config unless the sender already holds it: a blocking SendMessage
// (the A2A v1.0 default) is answered with the final Task after both changes, so both are pushed;
// a non-blocking one (configuration.returnImmediately) is answered with the WORKING Task and the
// reply follows after a delay, so only the final change is pushed; a stream carries both itself.
// A push config without returnImmediately counts as non-blocking: Taskbay relies on it
// (docs/choices.md "The fixture's WORKING step").

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

interface StoredTask {
  variant: Variant;
  task: Task;
  messageIds: Set<string>;
  /** The form of the latest send_data approval request the agent sent on this task. */
  askedForm?: Record<string, unknown>;
  /** taskPushNotificationConfig of the message that started the task (push mode). */
  push?: { url: string; token: string };
  /** Skill-routing mode: the skill the task started with (null: unrestricted), enforced on every follow-up. */
  skillId?: string | null;
  /** Runs under way: replies not yet applied (the task is WORKING until the last one is). */
  runs: number;
  /** Open SubscribeToTask streams, attached while a run is under way. */
  subscribers: Set<Subscriber>;
  /** Pushes go out one after the other, in the order of the changes. */
  pushQueue: Promise<void>;
}

/** A status event of the task; `last` when no run is left under way (the stream ends there). */
export type Subscriber = (event: StreamEvent, last: boolean) => void;

/** A received message: the task (WORKING while its run is under way); `finish` applies the reply. */
export interface Begun {
  task: Task;
  /** Absent for a duplicate (a retried messageId), which starts no run. */
  finish?: () => Promise<Task>;
  /** SendMessage to answer at once with the WORKING task (non-blocking). */
  immediate: boolean;
  /** The message as `received` records it. */
  received: ReceivedMessage;
}

export interface TaskStoreOptions {
  modes: Modes;
  /** How long a non-blocking SendMessage's task stays WORKING before its reply is applied (default 50 ms). */
  deferredReplyMs?: number;
  /** Awaited while a task is WORKING, before its reply is applied (tests hold a run there). */
  whileWorking?: (taskId: string) => Promise<void> | void;
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
    if (!isPlainObject(params) || typeof params.id !== 'string') throw new RpcFailure(-32602, 'params.id is required');
    const stored = tasks.get(params.id);
    if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${params.id}`);
    return stored;
  };

  const statusEvent = (task: Task): StreamEvent => ({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: structuredClone(task.status) } });

  /** Posts `event` to the task's push config, after the pushes before it. */
  const queuePush = (stored: StoredTask, event: StreamEvent) => {
    const target = stored.push!;
    stored.pushQueue = stored.pushQueue.then(async () => {
      const entry: SentPush = { taskId: stored.task.id, url: target.url, token: target.token, body: event, outcome: 'pending' };
      try {
        const r = await fetch(target.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-A2A-Notification-Token': target.token },
          body: JSON.stringify(event),
          signal: AbortSignal.timeout(10_000),
        });
        await r.body?.cancel().catch(() => undefined);
        entry.outcome = r.status;
      } catch (e) {
        entry.outcome = String((e as Error)?.message ?? e);
      }
      pushes.push(entry);
    });
  };

  /** A status change: to every open subscriber, and (`push`) to the push config. */
  const emit = (stored: StoredTask, push: boolean) => {
    const event = statusEvent(stored.task);
    const last = stored.runs === 0 || TERMINAL_STATES.includes(stored.task.status.state);
    for (const subscriber of [...stored.subscribers]) subscriber(structuredClone(event), last);
    if (last) stored.subscribers.clear();
    if (push && stored.push) queuePush(stored, event);
  };

  /** configuration.returnImmediately of SendMessage params (A2A v1.0 SendMessageConfiguration). */
  const returnImmediatelyOf = (params: Record<string, unknown>): boolean | undefined => {
    if (params.configuration === undefined) return undefined;
    if (!isPlainObject(params.configuration)) throw new RpcFailure(-32602, 'params.configuration must be an object');
    const value = params.configuration.returnImmediately;
    if (value !== undefined && typeof value !== 'boolean') throw new RpcFailure(-32602, 'configuration.returnImmediately must be a boolean');
    return value;
  };

  /**
   * Receives a message and starts its run: the task turns WORKING (returned); `finish()` applies
   * the reply. `via` is the method (a stream carries every change itself: nothing is pushed);
   * `keys`, when the agent checks approval signatures (approval-trust.ts).
   */
  const begin = (variant: Variant, params: unknown, headers: ReceivedMessage['headers'], via: 'message' | 'stream', keys?: ApprovalKeysCheck): Begun => {
    if (!isPlainObject(params)) throw new RpcFailure(-32602, 'params must be an object');
    const message = validateMessage(params.message);
    const returnImmediately = returnImmediatelyOf(params);
    const requestMetadata = isPlainObject(params.metadata) ? params.metadata : undefined;
    const record = (taskId: string, duplicate: boolean): ReceivedMessage => {
      const entry: ReceivedMessage = {
        variant,
        headers,
        message: structuredClone(message),
        ...(requestMetadata ? { requestMetadata: structuredClone(requestMetadata) } : {}),
        taskId,
        duplicate,
      };
      received.push(entry);
      return entry;
    };

    let stored: StoredTask | undefined;
    if (message.taskId !== undefined) {
      stored = tasks.get(message.taskId);
      if (!stored || stored.variant !== variant) throw new RpcFailure(-32001, `Task not found: ${message.taskId}`);
      if (message.contextId !== undefined && message.contextId !== stored.task.contextId) {
        throw new RpcFailure(-32602, 'message.contextId does not match the task');
      }
      if (stored.messageIds.has(message.messageId)) {
        return { task: snapshot(stored), immediate: false, received: record(stored.task.id, true) };
      }
      if (TERMINAL_STATES.includes(stored.task.status.state)) {
        throw new RpcFailure(-32004, `Task ${stored.task.id} is in a terminal state (${stored.task.status.state})`);
      }
    } else {
      const earlier = startedBy.get(`${variant} ${message.messageId}`);
      const earlierTask = earlier ? tasks.get(earlier) : undefined;
      if (earlierTask) {
        return { task: snapshot(earlierTask), immediate: false, received: record(earlierTask.task.id, true) };
      }
    }

    // Seed 003 "Skill routing": "Your agent must enforce the route, reject unsupported skills,
    // and keep the new context inside the skill": a follow-up must carry the route its task
    // started with (none when it started unrestricted).
    const route = modes.skillRouting ? requestMetadata?.[SKILL_ROUTING_EXTENSION] : undefined;
    let routedSkill: string | null = null;
    if (route !== undefined) {
      const skills = skillsOf(variant).map((s) => s.id);
      if (!isPlainObject(route) || typeof route.skillId !== 'string' || !skills.includes(route.skillId)) {
        throw new RpcFailure(-32602, `unsupported skill ${String(isPlainObject(route) ? route.skillId : route)}`);
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
    const reply = computeReply(variant, message, stored?.askedForm, keys ? { keys, taskId: stored?.task.id } : undefined);

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
        runs: 0,
        subscribers: new Set(),
        pushQueue: Promise.resolve(),
      };
      tasks.set(id, stored);
      startedBy.set(`${variant} ${message.messageId}`, id);
    }
    const task = stored.task;
    const pushConfig = isPlainObject(params.configuration) ? params.configuration.taskPushNotificationConfig : undefined;
    if (modes.push && !stored.push && isPlainObject(pushConfig) && typeof pushConfig.url === 'string' && typeof pushConfig.token === 'string') {
      stored.push = { url: pushConfig.url, token: pushConfig.token };
    }
    stored.messageIds.add(message.messageId);
    const entry = record(task.id, false);
    task.history!.push({ ...structuredClone(message), taskId: task.id, contextId: task.contextId });

    const agentMessage: Message = {
      messageId: randomUUID(),
      role: 'ROLE_AGENT',
      parts: reply.parts,
      taskId: task.id,
      contextId: task.contextId,
    };
    const run = stored;
    // Answered with the WORKING Task: asked for (returnImmediately), or on a task with a push
    // config when the sender did not say (what Taskbay expects of a pushing agent).
    const immediate = via === 'message' && (returnImmediately ?? run.push !== undefined);
    run.runs += 1;
    task.status = { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() };
    emit(run, via === 'message' && !immediate);
    const finish = async () => {
      if (opts.whileWorking) await opts.whileWorking(task.id);
      run.runs -= 1;
      // A task canceled meanwhile stays canceled: the reply is dropped (its subscribers ended then).
      if (TERMINAL_STATES.includes(task.status.state)) return snapshot(run);
      task.status = { state: reply.state, message: agentMessage, timestamp: new Date().toISOString() };
      task.history!.push(structuredClone(agentMessage));
      const asked = formAskedIn(reply.parts);
      if (asked) run.askedForm = asked;
      emit(run, via === 'message');
      return snapshot(run);
    };
    return { task: snapshot(run), finish, immediate, received: entry };
  };

  /** SendMessage: the final Task (blocking), or the WORKING Task with the reply applied after deferredReplyMs. */
  const sendMessage = async (
    variant: Variant,
    params: unknown,
    headers: ReceivedMessage['headers'],
    keys?: ApprovalKeysCheck,
  ): Promise<{ task: Task; received: ReceivedMessage }> => {
    const r = begin(variant, params, headers, 'message', keys);
    if (r.finish && !r.immediate) return { task: await r.finish(), received: r.received };
    // A failing whileWorking hook surfaces as an unhandled rejection: a test bug, not agent behaviour.
    if (r.finish) setTimeout(() => void r.finish!(), opts.deferredReplyMs ?? 50);
    return { task: r.task, received: r.received };
  };

  /**
   * SubscribeToTask: the task now, and while a run is under way its status events until the
   * last run ends (then `onEvent` is told `last`). A task with nothing under way answers alone.
   */
  const subscribe = (variant: Variant, params: unknown, onEvent: Subscriber): { task: Task; unsubscribe?: () => void } => {
    const stored = find(variant, params);
    const task = snapshot(stored);
    if (stored.runs === 0) return { task };
    stored.subscribers.add(onEvent);
    return { task, unsubscribe: () => stored.subscribers.delete(onEvent) };
  };

  const getTask = (variant: Variant, params: unknown): Task => {
    const stored = find(variant, params);
    const historyLength = isPlainObject(params) && typeof params.historyLength === 'number' ? params.historyLength : undefined;
    return snapshot(stored, historyLength);
  };

  const cancelTask = (variant: Variant, params: unknown): Task => {
    const stored = find(variant, params);
    if (TERMINAL_STATES.includes(stored.task.status.state)) {
      throw new RpcFailure(-32002, `Task ${stored.task.id} cannot be canceled: it is ${stored.task.status.state}`);
    }
    stored.task.status = { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() };
    emit(stored, false);
    return snapshot(stored);
  };

  return {
    received,
    pushes,
    begin,
    sendMessage,
    subscribe,
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
