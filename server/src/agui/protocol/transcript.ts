import type { Interrupt, Message, RunAgentInput } from '@ag-ui/core';
import { AGUI_LIMITS, JSON_DEPTH_MAX } from '../../limits.js';
import { nestedDeeperThan } from '../../lib/untrusted.js';
import type { AgUiEvent } from './client.js';

// What one run's events add up to (AG-UI 1.0): the conversation after the run (text message
// events assembled into assistant messages, tool calls kept with their arguments, tool results,
// MESSAGES_SNAPSHOT replacing the list), the last state snapshot, and how the run ended. Only
// events of this run count: an event after RUN_FINISHED or RUN_ERROR is ignored.

export type RunEnd =
  | { type: 'success'; result: unknown }
  | { type: 'interrupt'; interrupts: Interrupt[] }
  | { type: 'cancelled' }
  | { type: 'error'; message: string };

export interface RunTranscript {
  messages: Message[];
  state: unknown;
  end: RunEnd;
  /** Ids of the messages this run added or changed, in order. */
  touched: string[];
}

type AssistantLike = Extract<Message, { role: 'assistant' }>;

/** Folds a run's valid events; `streamError` is why reading stopped early (it ends the run as an error unless the run had already ended). */
export function foldRun(
  input: Pick<RunAgentInput, 'threadId' | 'runId' | 'messages' | 'state'>,
  events: readonly AgUiEvent[],
  streamError: string | null,
): RunTranscript {
  let messages: Message[] = input.messages.map((m) => ({ ...m }));
  let state: unknown = input.state ?? null;
  let end: RunEnd | null = null;
  const touched: string[] = [];
  const touch = (id: string) => {
    if (!touched.includes(id)) touched.push(id);
  };
  const find = (id: string) => messages.find((m) => m.id === id);
  const assistant = (id: string): AssistantLike => {
    let m = find(id);
    if (!m) {
      m = { id, role: 'assistant', content: '' } as AssistantLike;
      messages.push(m);
    }
    touch(id);
    return m as AssistantLike;
  };
  const toolCallOwner = new Map<string, string>();
  const toolCall = (toolCallId: string) => {
    const owner = toolCallOwner.get(toolCallId);
    const m = owner ? (find(owner) as AssistantLike | undefined) : undefined;
    const call = m?.toolCalls?.find((c) => c.id === toolCallId);
    if (m) touch(m.id);
    return call;
  };
  const startToolCall = (toolCallId: string, name: string, parentMessageId: string | undefined) => {
    if (toolCall(toolCallId)) return;
    const m = assistant(parentMessageId ?? `tool-call-${toolCallId}`);
    m.toolCalls = [...(m.toolCalls ?? []), { id: toolCallId, type: 'function', function: { name, arguments: '' } }];
    toolCallOwner.set(toolCallId, m.id);
  };
  const appendText = (id: string, delta: string) => {
    const m = assistant(id);
    m.content = (typeof m.content === 'string' ? m.content : '') + delta;
  };

  for (const e of events) {
    if (end) break;
    const ev = e as AgUiEvent & Record<string, any>;
    switch (ev.type) {
      case 'RUN_STARTED':
        if (ev.threadId !== input.threadId || ev.runId !== input.runId) {
          end = {
            type: 'error',
            message: `RUN_STARTED names thread ${JSON.stringify(String(ev.threadId).slice(0, 80))} run ${JSON.stringify(String(ev.runId).slice(0, 80))}, not the run Taskbay started`,
          };
        }
        break;
      case 'TEXT_MESSAGE_START':
        assistant(ev.messageId);
        break;
      case 'TEXT_MESSAGE_CONTENT':
        appendText(ev.messageId, ev.delta);
        break;
      case 'TEXT_MESSAGE_CHUNK':
        if (ev.messageId) appendText(ev.messageId, ev.delta ?? '');
        break;
      case 'TOOL_CALL_START':
        startToolCall(ev.toolCallId, ev.toolCallName, ev.parentMessageId);
        break;
      case 'TOOL_CALL_CHUNK':
        if (ev.toolCallId) {
          if (ev.toolCallName) startToolCall(ev.toolCallId, ev.toolCallName, ev.parentMessageId);
          const call = toolCall(ev.toolCallId);
          if (call) call.function.arguments += ev.delta ?? '';
        }
        break;
      case 'TOOL_CALL_ARGS': {
        const call = toolCall(ev.toolCallId);
        if (call) call.function.arguments += ev.delta;
        break;
      }
      case 'TOOL_CALL_RESULT':
        if (!find(ev.messageId)) messages.push({ id: ev.messageId, role: 'tool', toolCallId: ev.toolCallId, content: ev.content } as Message);
        touch(ev.messageId);
        break;
      case 'MESSAGES_SNAPSHOT':
        messages = (ev.messages as Message[]).map((m) => ({ ...m }));
        for (const m of messages) touch(m.id);
        break;
      case 'STATE_SNAPSHOT':
        state = ev.snapshot;
        break;
      case 'RUN_ERROR':
        end = {
          type: 'error',
          message: `the agent reported an error: ${String(ev.message).slice(0, 500)}${ev.code ? ` (${String(ev.code).slice(0, 100)})` : ''}`,
        };
        break;
      case 'RUN_FINISHED': {
        const outcome = ev.outcome as { type: string; interrupts?: Interrupt[] } | undefined;
        if (outcome?.type === 'interrupt') end = interruptEnd(outcome.interrupts ?? []);
        else if (outcome?.type === 'cancelled') end = { type: 'cancelled' };
        else end = { type: 'success', result: ev.result ?? null };
        break;
      }
      default:
        // Steps, reasoning, activity, custom and raw events, state deltas, subagents: valid, not kept.
        break;
    }
  }
  if (!end) end = { type: 'error', message: streamError ?? 'the stream ended before RUN_FINISHED' };
  return { messages, state, end, touched };
}

/** Interrupt ids MUST be unique within the run (AG-UI 1.0 "Interrupts and Resume"); at least one. */
function interruptEnd(interrupts: Interrupt[]): RunEnd {
  if (interrupts.length === 0) return { type: 'error', message: 'RUN_FINISHED has the interrupt outcome with no interrupts' };
  if (interrupts.length > AGUI_LIMITS.interruptsMax)
    return { type: 'error', message: `the run ended with ${interrupts.length} interrupts, at most ${AGUI_LIMITS.interruptsMax}` };
  const ids = new Set(interrupts.map((i) => i.id));
  if (ids.size !== interrupts.length) return { type: 'error', message: 'two interrupts of the run have the same id' };
  return { type: 'interrupt', interrupts };
}

/**
 * A tool call's arguments: the JSON they hold when they parse and nest at most JSON_DEPTH_MAX
 * levels, else the text as the agent streamed it. The text is assembled from many deltas, so
 * no event bound has seen its depth.
 */
export function toolCallArguments(text: string): unknown {
  try {
    const args: unknown = JSON.parse(text);
    return nestedDeeperThan(args, JSON_DEPTH_MAX) ? text : args;
  } catch {
    return text;
  }
}
