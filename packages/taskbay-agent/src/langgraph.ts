import { Command, INTERRUPT, type Interrupt, interrupt, isInterrupted } from '@langchain/langgraph';
import { type ApprovalOutcome, requestApproval, type SignedApproval, verifySigned } from './approval.js';
import type { TaskbayConnection } from './connection.js';
import { ApprovalVerificationError, TaskbayAgentError } from './errors.js';
import { allOrNothing, approvedArguments, decisionOf, reasonOf, type ToolApprovalOptions, type ToolCallDescription, toolCallRequest } from './tool-call.js';

// LangGraph JS (`@langchain/langgraph`): a node calls approveToolCall(call, options), which
// interrupt()s the graph with the tool call; whoever runs the graph (the host) gets the run back
// with `__interrupt__`, and resumeWithTaskbay(output, options) asks Taskbay, waits, verifies, and
// answers with the Command({ resume }) to invoke the graph with. The resume carries the status,
// the request id, the digest, the approved arguments and the signed approval; approveToolCall,
// run again from the top of the node, verifies the signed approval itself before it answers
// approved, so a forged Command({ resume }) never makes a tool run. Reviewers may edit: the node
// gets the approved data.arguments.
//
// LangGraph runs the node again from the top on resume: put the tool's side effect after
// approveToolCall, never before. A checkpointer and a thread_id are required, as for any interrupt.

export const TASKBAY_TOOL_CALL = 'taskbay.tool_call';
export const TASKBAY_DECISION = 'taskbay.decision';

/** The value a node interrupts with (what `__interrupt__[i].value` holds). */
export interface TaskbayToolCallInterrupt extends ToolCallDescription {
  type: typeof TASKBAY_TOOL_CALL;
  toolCall: { id: string; name: string; args: unknown };
  /** The externalId of the request (default the tool call id). */
  externalId: string;
  editable: boolean;
}

/** The resume value resumeWithTaskbay sends back (JSON: it is checkpointed). */
export interface TaskbayDecisionResume {
  type: typeof TASKBAY_DECISION;
  status: ApprovalOutcome['status'];
  approvalId: string;
  revision: number;
  digest: string;
  /** The approved arguments (the reviewer's edit when they edited); the requested ones otherwise. */
  arguments: unknown;
  edited: boolean;
  comment: string | null;
  decidedBy: { id: string; name: string; email: string } | null;
  /** Present for APPROVED only; the node verifies it. */
  signedApproval: SignedApproval | null;
}

/** What approveToolCall answers in the node. */
export interface NodeToolDecision {
  approved: boolean;
  status: ApprovalOutcome['status'];
  /** Run the tool with these (verified, possibly edited) when approved. */
  arguments: unknown;
  edited: boolean;
  reason: string;
  approvalId: string;
  digest: string;
}

export interface ApproveToolCallOptions extends Pick<TaskbayConnection, 'url' | 'issuer' | 'jwksUrl' | 'fetch'>, ToolCallDescription {
  /** false: reviewers approve or reject, no edits. Default true. */
  editable?: boolean;
  /** The request's externalId (default the tool call's id). Make it unique per thread (e.g. `${threadId}:${call.id}`) if call ids repeat across threads. */
  externalId?: string;
}

/** Canonical JSON (keys sorted at every level), to compare arguments. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * In a node: interrupts the graph with a tool call for Taskbay, and once resumed answers the
 * decision. Approved only when the resume's signed approval verifies against Taskbay's keys, for
 * this call (externalId) and this tool; throws ApprovalVerificationError otherwise.
 */
export async function approveToolCall(call: { id: string; name: string; args: unknown }, options: ApproveToolCallOptions): Promise<NodeToolDecision> {
  const externalId = options.externalId ?? call.id;
  const editable = options.editable ?? true;
  const value: TaskbayToolCallInterrupt = {
    type: TASKBAY_TOOL_CALL,
    toolCall: { id: call.id, name: call.name, args: call.args ?? null },
    externalId,
    editable,
    ...(options.title !== undefined ? { title: options.title } : {}),
    ...(options.summary !== undefined ? { summary: options.summary } : {}),
    ...(options.risk !== undefined ? { risk: options.risk } : {}),
  };
  const resume = interrupt<TaskbayToolCallInterrupt, unknown>(value) as Partial<TaskbayDecisionResume> | undefined;
  if (!resume || resume.type !== TASKBAY_DECISION || typeof resume.approvalId !== 'string' || typeof resume.status !== 'string') {
    throw new ApprovalVerificationError('the graph was resumed without a Taskbay decision');
  }
  const base = { approvalId: resume.approvalId, digest: String(resume.digest ?? ''), edited: false };
  if (resume.status !== 'APPROVED') {
    const reason = reasonOf({ ...(resume as TaskbayDecisionResume), edited: false } as unknown as ApprovalOutcome);
    return { ...base, approved: false, status: resume.status, arguments: call.args, reason };
  }
  if (!resume.signedApproval) throw new ApprovalVerificationError('the approval carries no signed approval', { approvalId: resume.approvalId });
  const verified = await verifySigned(options, resume.signedApproval, { approvalId: resume.approvalId, externalId, editable: true });
  const args = approvedArguments(verified.action, call.name, resume.approvalId);
  const edited = canonical(args) !== canonical(call.args ?? null);
  if (edited && !editable)
    throw new ApprovalVerificationError('the request was not editable, but the approved arguments differ from the call', { approvalId: resume.approvalId });
  return {
    approved: true,
    status: 'APPROVED',
    arguments: args,
    edited,
    reason: reasonOf({ ...(resume as TaskbayDecisionResume), edited } as unknown as ApprovalOutcome),
    approvalId: resume.approvalId,
    digest: verified.claims.revisionDigest,
  };
}

function isTaskbayInterrupt(i: Interrupt): i is Interrupt<TaskbayToolCallInterrupt> {
  return (i.value as { type?: unknown } | undefined)?.type === TASKBAY_TOOL_CALL;
}

/** The Taskbay tool calls an invoke() output is interrupted on (none when it is not interrupted). */
export function taskbayInterrupts(output: unknown): Interrupt<TaskbayToolCallInterrupt>[] {
  return isInterrupted(output) ? (output[INTERRUPT] as Interrupt[]).filter(isTaskbayInterrupt) : [];
}

/**
 * Host side: for an invoke() output interrupted by approveToolCall, asks Taskbay about each
 * call (all at once), waits, verifies, and answers the Command to invoke the graph with
 * (`graph.invoke(command, config)`). Throws when the output has interrupts of its own kind too:
 * they need answers this cannot give.
 */
/** The Command resumeWithTaskbay answers: a resume only (no update, no goto), so it fits any graph's invoke. */
export type TaskbayResumeCommand = Command<TaskbayDecisionResume | Record<string, TaskbayDecisionResume>, Record<string, never>, never>;

export async function resumeWithTaskbay(output: unknown, options: ToolApprovalOptions): Promise<TaskbayResumeCommand> {
  if (!isInterrupted(output)) throw new TaskbayAgentError('INVALID_APPROVED_ACTION', 'the graph output is not interrupted');
  const all = output[INTERRUPT] as Interrupt[];
  const ours = all.filter(isTaskbayInterrupt);
  if (ours.length !== all.length) throw new TaskbayAgentError('INVALID_APPROVED_ACTION', `${all.length - ours.length} interrupt(s) are not Taskbay tool calls`);
  const values = await allOrNothing(ours, options.signal, async (i, signal) => {
    const v = i.value!;
    const call = { id: v.externalId, name: v.toolCall.name, arguments: v.toolCall.args };
    const describe = () => ({
      ...options.describe?.(call),
      ...(v.title ? { title: v.title } : {}),
      ...(v.summary ? { summary: v.summary } : {}),
      ...(v.risk ? { risk: v.risk } : {}),
    });
    const outcome = await requestApproval({
      ...options,
      ...toolCallRequest(call, { ...options, describe }, v.editable),
      signal,
      onRequested: (r) => options.onRequested?.({ approvalId: r.approvalId, call }),
    });
    const d = decisionOf(call, outcome);
    const resume: TaskbayDecisionResume = {
      type: TASKBAY_DECISION,
      status: outcome.status,
      approvalId: outcome.approvalId,
      revision: outcome.revision,
      digest: outcome.digest,
      arguments: d.arguments,
      edited: outcome.edited,
      comment: outcome.comment,
      decidedBy: outcome.decidedBy,
      signedApproval: outcome.signedApproval,
    };
    return resume;
  });
  const resume = ours.length === 1 ? values[0]! : Object.fromEntries(ours.map((i, k) => [i.id!, values[k]!]));
  return new Command<TaskbayDecisionResume | Record<string, TaskbayDecisionResume>, Record<string, never>, never>({ resume });
}
