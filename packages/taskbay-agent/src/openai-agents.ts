import {
  type Agent,
  type FunctionTool,
  type RunContext,
  RunState,
  type RunToolApprovalItem,
  type ToolInputParameters,
  type ToolOptions,
  tool,
  type UnknownContext,
} from '@openai/agents-core';
import { openApproval, readApproval, waitForApproval } from './approval.js';
import { TaskbayAgentError } from './errors.js';
import { allOrNothing, decisionOf, type ToolApprovalOptions, type ToolCall, type ToolCallDecision, toolCallRequest } from './tool-call.js';

// OpenAI Agents SDK (`@openai/agents` / `@openai/agents-core`): a tool with `needsApproval` makes
// run() stop with `result.interruptions` (RunToolApprovalItem). This adapter puts each one to
// Taskbay and answers it with state.approve / state.reject, then you run(agent, state) again.
// Two ways:
//   - in one process: approveToolCalls(result, options) opens, waits and applies;
//   - across processes: openToolApprovals(result, options) opens the requests and returns the
//     serialised RunState with the request ids (store it); later (a Taskbay webhook, a cron)
//     resumeToolApprovals(agent, stored, options) rebuilds the state, reads the decisions,
//     verifies and applies them.
//
// Edits: RunState.approve takes no arguments in 0.20 (and the SDK refuses an approval whose
// call's arguments changed), so a tool can only run with a reviewer's edited arguments if it
// reads them itself. taskbayTool(...) is `tool(...)` with `needsApproval: true` whose execute runs
// only for a call with a verified Taskbay approval in this run, with the approved arguments
// (validated by the tool's own parameters). Requests for its calls are editable; requests for a
// plain tool's calls are not (the approval then is of the arguments the model sent).

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own bound for any agent (RunState<TContext, TAgent extends Agent<any, any>>)
type AnyAgent = Agent<any, any>;

const TASKBAY_TOOLS = new WeakSet<object>();
/** The verified approvals of a run's calls, by call id, for its taskbayTools (the run's RunContext is the key). */
const APPROVED = new WeakMap<RunContext<unknown>, Map<string, ToolCallDecision>>();

/**
 * `tool(options)` that asks Taskbay: always `needsApproval`, and its `execute` runs only with a
 * Taskbay approval verified for that very call (applied by this module), with the approved
 * arguments, once. A call approved any other way (state.approve alone) gets an error result and
 * does not run.
 */
export function taskbayTool<TParameters extends ToolInputParameters = undefined, Context = UnknownContext, Result = string>(
  options: ToolOptions<TParameters, Context>,
): FunctionTool<Context, TParameters, Result> {
  const opts = options as ToolOptions<TParameters, Context> & { name?: string };
  // The user's tool without approval: parses and validates the approved arguments and runs execute.
  const inner = tool({ ...(opts as object), needsApproval: false } as never) as unknown as FunctionTool<Context, TParameters, Result>;
  const outer = tool({
    ...(opts as object),
    needsApproval: true,
    execute: async (_input: unknown, runContext?: RunContext<Context>, details?: { toolCall?: { callId?: string } }) => {
      const callId = details?.toolCall?.callId;
      const approved = runContext && callId ? APPROVED.get(runContext as RunContext<unknown>) : undefined;
      const decision = callId ? approved?.get(callId) : undefined;
      if (!decision?.approved) {
        throw new TaskbayAgentError('VERIFICATION_FAILED', `${inner.name}: no verified Taskbay approval for call ${callId ?? '(no call id)'}; not run`);
      }
      approved!.delete(callId!);
      return inner.invoke(runContext!, JSON.stringify(decision.arguments), details as never);
    },
  } as never) as unknown as FunctionTool<Context, TParameters, Result>;
  TASKBAY_TOOLS.add(outer);
  return outer;
}

/** Whether a tool was made by taskbayTool. */
export function isTaskbayTool(t: unknown): boolean {
  return typeof t === 'object' && t !== null && TASKBAY_TOOLS.has(t);
}

export interface StoredApproval {
  callId: string;
  toolName: string;
  approvalId: string;
  editable: boolean;
  /** The digest the request was opened with. */
  digest: string;
}

/** What openToolApprovals answers: JSON, to store until the decisions arrive. */
export interface PendingToolApprovals {
  /** RunState.toString() of the interrupted run. */
  state: string;
  approvals: StoredApproval[];
}

export interface AppliedToolApprovals<TContext = unknown, TAgent extends AnyAgent = AnyAgent> {
  /** Run it: `await run(agent, state)`. */
  state: RunState<TContext, TAgent>;
  decisions: ToolCallDecision[];
}

interface Interrupted<TContext, TAgent extends AnyAgent> {
  state: RunState<TContext, TAgent>;
  interruptions: RunToolApprovalItem[];
}

function callOf(item: RunToolApprovalItem): ToolCall & { editable: boolean } {
  const raw = item.rawItem as { type: string; callId?: string; id?: string };
  const callId = raw.callId ?? raw.id;
  const name = item.name;
  if (!callId || !name) throw new TaskbayAgentError('INVALID_APPROVED_ACTION', `an interruption without a call id or tool name (${raw.type})`);
  let args: unknown = item.arguments ?? null;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      // Not JSON: the reviewer sees the text the model sent.
    }
  }
  const definition = (item.agent?.tools as { name?: string }[] | undefined)?.find((t) => t.name === name);
  return { id: callId, name, arguments: args, editable: raw.type === 'function_call' && isTaskbayTool(definition) };
}

/** Opens a Taskbay request for every interruption of `result` and returns them with the serialised state (nothing waits). */
export async function openToolApprovals<TContext, TAgent extends AnyAgent>(
  result: Interrupted<TContext, TAgent>,
  options: ToolApprovalOptions,
): Promise<PendingToolApprovals> {
  const approvals = await allOrNothing(result.interruptions, options.signal, async (item, signal) => {
    const call = callOf(item);
    const opened = await openApproval({ ...options, ...toolCallRequest(call, options, call.editable), signal });
    options.onRequested?.({ approvalId: opened.approvalId, call });
    return { callId: call.id, toolName: call.name, approvalId: opened.approvalId, editable: call.editable, digest: opened.digest };
  });
  return { state: result.state.toString(), approvals };
}

/**
 * Resumes a run stored by openToolApprovals once Taskbay has decided: rebuilds the state
 * (RunState.fromString with the same agent), reads and verifies each decision and applies it.
 * Answers null while a request is still PENDING (`wait: true` waits instead).
 */
export async function resumeToolApprovals<TContext, TAgent extends AnyAgent>(
  agent: TAgent,
  stored: PendingToolApprovals | string,
  options: ToolApprovalOptions & { wait?: boolean },
): Promise<AppliedToolApprovals<TContext, TAgent> | null> {
  const pending = typeof stored === 'string' ? (JSON.parse(stored) as PendingToolApprovals) : stored;
  const state = await RunState.fromString<TContext, TAgent>(agent, pending.state);
  const decisions: ToolCallDecision[] = [];
  const items = state.getInterruptions();
  for (const a of pending.approvals) {
    const expect = { ...options, approvalId: a.approvalId, externalId: a.callId, editable: a.editable, requestedDigest: a.digest };
    const outcome = options.wait ? await waitForApproval(expect) : await readApproval(expect);
    if (outcome.status === 'PENDING') return null;
    const item = items.find((i) => callOf(i).id === a.callId);
    if (!item) throw new TaskbayAgentError('INVALID_APPROVED_ACTION', `the stored run has no interruption for call ${a.callId}`, { approvalId: a.approvalId });
    decisions.push(decisionOf(callOf(item), outcome));
  }
  apply(state, items, decisions);
  return { state, decisions };
}

/** In one process: asks Taskbay about every interruption, waits for the decisions and applies them to result.state. */
export async function approveToolCalls<TContext, TAgent extends AnyAgent>(
  result: Interrupted<TContext, TAgent>,
  options: ToolApprovalOptions,
): Promise<AppliedToolApprovals<TContext, TAgent>> {
  const pending = await openToolApprovals(result, options);
  const items = result.state.getInterruptions();
  const decisions = await allOrNothing(pending.approvals, options.signal, async (a, signal) => {
    const outcome = await waitForApproval({
      ...options,
      approvalId: a.approvalId,
      externalId: a.callId,
      editable: a.editable,
      requestedDigest: a.digest,
      signal,
    });
    const item = items.find((i) => callOf(i).id === a.callId)!;
    return decisionOf(callOf(item), outcome);
  });
  apply(result.state, items, decisions);
  return { state: result.state, decisions };
}

function apply<TContext, TAgent extends AnyAgent>(state: RunState<TContext, TAgent>, items: RunToolApprovalItem[], decisions: ToolCallDecision[]) {
  const context = state._context as RunContext<unknown>;
  const approved = APPROVED.get(context) ?? new Map<string, ToolCallDecision>();
  APPROVED.set(context, approved);
  for (const d of decisions) {
    const item = items.find((i) => callOf(i).id === d.toolCallId)!;
    if (d.approved) {
      approved.set(d.toolCallId, d);
      state.approve(item);
    } else {
      state.reject(item, { message: d.reason });
    }
  }
}
