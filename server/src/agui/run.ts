import { randomUUID } from 'node:crypto';
import type { Message as AgUiMessage, ResumeEntry, RunAgentInput } from '@ag-ui/core';
import { PROTOCOL_VERSION } from '@ag-ui/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { A2ATaskState, Message, Part } from '../a2a/types.js';
import { AgUiError, runAgent } from './protocol/client.js';
import { foldRun, toolCallArguments, type RunTranscript } from './protocol/transcript.js';
import { recordAgentFailure } from '../agents/module.js';
import { recordObservation } from '../tasks/module.js';
import type { AgentRow } from '../agents/entities.js';
import type { Deps } from '../deps.js';
import { storable } from '../db/storable.js';
import { AgUiRun, type AgUiRunRow, type AgUiRunStatus } from './entities.js';
import { openInterruptApprovals } from './interrupts.js';
import { TaskMessage, type TaskRow } from '../tasks/entities.js';

// One AG-UI run of a task (docs/AG-UI.md): POST the RunAgentInput, read the events, then, in one
// transaction, store the run as an observation of the task (tasks/observe.ts: the transcript as
// messages numbered per task, the task's state, task.observed), the run row (agui_run) and, when
// the run ended with the interrupt outcome, one approval per interrupt.

/** How a run's end shows on the task (A2A task states are the task model of the console). */
const TASK_STATE: Record<AgUiRunStatus, A2ATaskState> = {
  RUNNING: 'TASK_STATE_WORKING',
  SUCCESS: 'TASK_STATE_COMPLETED',
  INTERRUPTED: 'TASK_STATE_INPUT_REQUIRED',
  ERROR: 'TASK_STATE_FAILED',
  CANCELLED: 'TASK_STATE_CANCELED',
};

export const AGUI_MEDIA_TYPE = {
  toolCall: 'application/vnd.ag-ui.tool-call+json',
  toolResult: 'application/vnd.ag-ui.tool-result+json',
  message: 'application/vnd.ag-ui.message+json',
} as const;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) => (p && typeof p === 'object' && (p as { type?: unknown }).type === 'text' ? String((p as { text?: unknown }).text ?? '') : ''))
      .join('');
  return '';
}

/** An AG-UI message as a transcript message (the console renders text and data parts as inert content). */
export function transcriptMessage(m: AgUiMessage): Message | null {
  const parts: Part[] = [];
  if (m.role === 'user') {
    const text = textOf(m.content);
    if (text) parts.push({ text });
    if (Array.isArray(m.content) && m.content.some((p) => p.type !== 'text')) parts.push({ data: { content: m.content }, mediaType: AGUI_MEDIA_TYPE.message });
    return parts.length ? { messageId: m.id, role: 'ROLE_USER', parts } : null;
  }
  if (m.role === 'assistant') {
    const text = textOf(m.content);
    if (text) parts.push({ text });
    for (const call of m.toolCalls ?? []) {
      parts.push({
        data: { toolCallId: call.id, name: call.function.name, arguments: toolCallArguments(call.function.arguments) },
        mediaType: AGUI_MEDIA_TYPE.toolCall,
      });
    }
  } else if (m.role === 'tool') {
    parts.push({ data: { toolCallId: m.toolCallId, content: m.content, ...(m.error ? { error: m.error } : {}) }, mediaType: AGUI_MEDIA_TYPE.toolResult });
  } else {
    parts.push({ data: { role: m.role, content: (m as { content?: unknown }).content ?? null }, mediaType: AGUI_MEDIA_TYPE.message });
  }
  return parts.length ? { messageId: m.id, role: 'ROLE_AGENT', parts } : null;
}

/** The RunAgentInput of a run on the task's thread. */
export function runInput(threadId: string, runId: string, messages: AgUiMessage[], state: unknown, resume?: ResumeEntry[]): RunAgentInput {
  return {
    threadId,
    runId,
    protocolVersion: PROTOCOL_VERSION,
    state: state ?? {},
    messages,
    tools: [],
    context: [],
    forwardedProps: {},
    ...(resume ? { resume } : {}),
  };
}

function statusOf(t: RunTranscript): AgUiRunStatus {
  return ({ success: 'SUCCESS', interrupt: 'INTERRUPTED', cancelled: 'CANCELLED', error: 'ERROR' } as const)[t.end.type];
}

export interface RecordedRun {
  run: AgUiRunRow;
  transcript: RunTranscript;
}

/**
 * Runs the agent once and records the run. Throws AgUiError when the agent did not accept the
 * run (nothing was started, nothing is recorded); a run that started is recorded whatever its
 * stream held, with the error it ended with.
 */
export async function runAndRecord(
  em: EntityManager,
  deps: Deps,
  agent: AgentRow,
  task: TaskRow,
  input: RunAgentInput,
  resumesId: string | null,
): Promise<RecordedRun> {
  let stream;
  try {
    stream = await runAgent({ url: agent.endpointUrl!, fetchImpl: deps.network.fetch }, input);
  } catch (e) {
    await recordAgentFailure(em, agent.id, e);
    throw e;
  }
  if (stream.error) await recordAgentFailure(em, agent.id, stream.error);
  const transcript = storable(foldRun(input, stream.events, stream.error?.message ?? null));
  const status = statusOf(transcript);
  const run = await em.transactional(async (tem) => {
    const history = transcript.messages.map(transcriptMessage).filter((m): m is Message => m !== null);
    const observed = await recordObservation(tem, deps.config, task.id, {
      result: { task: { id: input.threadId, contextId: input.threadId, status: { state: TASK_STATE[status] }, history } },
    });
    const row = tem.create(AgUiRun, {
      id: randomUUID(),
      taskId: task.id,
      runId: input.runId,
      threadId: input.threadId,
      resumesId,
      status,
      error: transcript.end.type === 'error' ? transcript.end.message : null,
      events: stream.events.length,
      messages: transcript.messages,
      state: transcript.state ?? null,
      result: transcript.end.type === 'success' ? (transcript.end.result ?? null) : null,
      resumeStatus: null,
      resumeRunId: null,
      resumeAttempts: 0,
      resumeError: null,
      createdAt: new Date(),
      finishedAt: new Date(),
    });
    await tem.flush();
    // A run that took the task over its limits opens nothing: Taskbay no longer follows the task.
    if (transcript.end.type === 'interrupt' && observed.limitReason == null) {
      const [last] = await tem.find(TaskMessage, { taskId: task.id }, { orderBy: { stepSeq: 'desc' }, limit: 1, fields: ['stepSeq'] });
      await openInterruptApprovals(
        tem,
        deps.config,
        observed,
        { rowId: row.id, agentName: agent.name, messages: transcript.messages, stepSeq: last?.stepSeq ?? null },
        transcript.end.interrupts,
      );
    }
    return row;
  });
  return { run, transcript };
}

export { AgUiError };
