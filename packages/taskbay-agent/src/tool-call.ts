import { type ApprovalOutcome, type Risk, requestApproval, type WaitOptions } from './approval.js';
import type { TaskbayConnection } from './connection.js';
import { TaskbayAgentError } from './errors.js';

// A tool call as a Taskbay request, the same for every adapter. The action has the shape of an
// AG-UI tool-call interrupt's request (server/src/agui/interrupts.ts), so a reviewer sees a
// framework's tool call as they see an AG-UI agent's:
//   { kind: 'send_message', text: 'Call <tool> with <arguments as JSON>', data: { toolName, arguments } }
// The framework's tool call id is the request's externalId (kept out of the digest, never
// editable, signed with the approval). A reviewer who edits changes data.arguments; the tool runs
// with the approved data.arguments.

export interface ToolCall {
  /** The framework's id of this call (AI SDK toolCallId, Agents SDK callId, LangGraph tool call id). */
  id: string;
  name: string;
  arguments: unknown;
}

export interface ToolCallAction {
  kind: 'send_message';
  text: string;
  data: { toolName: string; arguments: unknown };
}

/** What the reviewer sees of a tool call; each field falls back to the default. */
export interface ToolCallDescription {
  title?: string;
  summary?: string;
  risk?: Risk | Lowercase<Risk>;
}

/** Options of every adapter: which Taskbay, and how a tool call is put to a reviewer. */
export interface ToolApprovalOptions extends TaskbayConnection, Omit<WaitOptions, 'onChange'> {
  /** The agent the requests are about (its OPERATE grant holders decide); without it only admins decide. */
  agentId?: string;
  /** Risk of every request (default MEDIUM), or per call through `describe`. */
  risk?: Risk | Lowercase<Risk>;
  /** Title, summary and risk per call (default title: `<tool>: <arguments>`). */
  describe?: (call: ToolCall) => ToolCallDescription | undefined;
  /** Seconds until a request expires (default ceil(timeoutMs / 1000), else Taskbay's default). */
  expiresInSeconds?: number;
  /** Called once each request is open (its approvalId, the call). */
  onRequested?: (request: { approvalId: string; call: ToolCall }) => void;
}

/** A tool call's decision, as the adapters act on it. */
export interface ToolCallDecision {
  toolCallId: string;
  toolName: string;
  /** Run the tool: the approval verified. */
  approved: boolean;
  status: ApprovalOutcome['status'];
  /** The arguments to run with: the approved ones (the reviewer's edit when they edited); the requested ones otherwise. */
  arguments: unknown;
  /** A reviewer changed the arguments before approving. */
  edited: boolean;
  /** Why not, in words for the model: who decided and their comment. */
  reason: string;
  outcome: ApprovalOutcome;
}

const TEXT_ARGS_MAX = 2000;
const TITLE_MAX = 200;

function cut(s: string, max: number): string {
  const chars = [...s];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : s;
}

function argumentsJson(args: unknown): string {
  const json = JSON.stringify(args);
  return json === undefined ? 'no arguments' : json;
}

/** The action of a tool call: one line naming the tool and its arguments, and the call as data. */
export function toolCallAction(toolName: string, args: unknown): ToolCallAction {
  return {
    kind: 'send_message',
    text: `Call ${toolName} with ${cut(argumentsJson(args), TEXT_ARGS_MAX)}`,
    data: { toolName, arguments: args ?? null },
  };
}

/**
 * The arguments an approval approves: `data.arguments` of the signed action. Throws
 * INVALID_APPROVED_ACTION when the approved action is not a call of this tool (a reviewer's edit
 * removed the arguments or named another tool).
 */
export function approvedArguments(action: unknown, toolName: string, approvalId?: string): unknown {
  const data = (action as { kind?: unknown; data?: unknown } | null)?.kind === 'send_message' ? (action as { data?: unknown }).data : undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new TaskbayAgentError('INVALID_APPROVED_ACTION', `the approved action carries no tool call (data is ${JSON.stringify(data ?? null)})`, {
      approvalId,
    });
  }
  const call = data as Record<string, unknown>;
  if (call.toolName !== toolName) {
    throw new TaskbayAgentError('INVALID_APPROVED_ACTION', `the approved action calls ${JSON.stringify(call.toolName)}, not ${toolName}`, { approvalId });
  }
  if (!Object.hasOwn(call, 'arguments'))
    throw new TaskbayAgentError('INVALID_APPROVED_ACTION', `the approved action has no arguments for ${toolName}`, { approvalId });
  return call.arguments;
}

export function reasonOf(outcome: ApprovalOutcome): string {
  const who = outcome.decidedBy ? ` by ${outcome.decidedBy.name}` : '';
  const why = outcome.comment ? `: ${outcome.comment}` : '';
  switch (outcome.status) {
    case 'APPROVED':
      return `Approved in Taskbay${who}${outcome.edited ? ' with edited arguments' : ''}${why}`;
    case 'REJECTED':
      return `Rejected in Taskbay${who}${why}`;
    case 'CHANGES_REQUESTED':
      return `Not approved: changes requested in Taskbay${who}${why}`;
    case 'EXPIRED':
      return 'Not approved: the Taskbay request expired undecided';
    case 'SUPERSEDED':
      return 'Not approved: the Taskbay request was superseded';
  }
}

/** The request options of one tool call. */
export function toolCallRequest(call: ToolCall, opts: ToolApprovalOptions, editable: boolean) {
  const described = opts.describe?.(call) ?? {};
  return {
    title: described.title ?? cut(`${call.name}: ${argumentsJson(call.arguments)}`, TITLE_MAX),
    ...(described.summary !== undefined ? { summary: described.summary } : {}),
    ...((described.risk ?? opts.risk) !== undefined ? { risk: described.risk ?? opts.risk } : {}),
    action: toolCallAction(call.name, call.arguments),
    externalId: call.id,
    editable,
  };
}

/** The decision of an outcome for a call: approved arguments checked against the tool. */
export function decisionOf(call: ToolCall, outcome: ApprovalOutcome): ToolCallDecision {
  const approved = outcome.status === 'APPROVED';
  return {
    toolCallId: call.id,
    toolName: call.name,
    approved,
    status: outcome.status,
    arguments: approved ? approvedArguments(outcome.action, call.name, outcome.approvalId) : call.arguments,
    edited: outcome.edited,
    reason: reasonOf(outcome),
    outcome,
  };
}

/** Opens a request for one tool call, waits, verifies: the decision the adapters act on. */
export async function requestToolApproval(call: ToolCall, opts: ToolApprovalOptions & { editable?: boolean }): Promise<ToolCallDecision> {
  const outcome = await requestApproval({
    ...opts,
    ...toolCallRequest(call, opts, opts.editable ?? true),
    onRequested: (r) => opts.onRequested?.({ approvalId: r.approvalId, call }),
  });
  return decisionOf(call, outcome);
}

/**
 * Runs `fn` for every item at once; the first failure aborts the others (their signal) and is
 * thrown, so a batch of calls is answered whole or not at all.
 */
export async function allOrNothing<I, T>(items: readonly I[], signal: AbortSignal | undefined, fn: (item: I, signal: AbortSignal) => Promise<T>): Promise<T[]> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal!.reason);
  if (signal?.aborted) throw signal.reason;
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.all(
      items.map((item) =>
        fn(item, stop.signal).catch((e) => {
          stop.abort(e);
          throw e;
        }),
      ),
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
