import type { ModelMessage, ToolApprovalResponse } from 'ai';
import { allOrNothing, requestToolApproval, type ToolApprovalOptions, type ToolCallDecision } from './tool-call.js';

// Vercel AI SDK v6 (`ai@6`): a tool with `needsApproval` makes generateText / streamText stop with
// a `tool-approval-request` part in the assistant message. resolveToolApprovals puts each such
// call to Taskbay, waits for the decisions, and answers with the messages to call the model
// again with: a `role: 'tool'` message of `tool-approval-response` parts (approved: the SDK runs
// the tool; denied: the model gets `execution-denied` with the reviewer's reason).
//
// Edits: ToolApprovalResponse has no field for other arguments, and the SDK runs an approved call
// with the `input` of its `tool-call` part in the messages (after validating it against the
// tool's inputSchema again). So an edited approval rewrites that part's input to the approved
// data.arguments, in a copy of the messages. A call the SDK cannot carry an edit for is asked as
// not editable: with experimental_toolApprovalSecret (the request part has a signature over the
// input), with an inputSchema that transforms its input (the part has inputSchemaInput), and a
// provider-executed call.

type Part = { type: string; [k: string]: unknown };

interface PendingRequest {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  editable: boolean;
  providerExecuted: boolean;
}

function partsOf(m: ModelMessage): Part[] {
  return typeof m.content === 'string' ? [] : (m.content as Part[]);
}

/** The tool-approval-request parts of the messages that no tool-approval-response (or tool-result) answers yet. */
export function pendingToolApprovals(messages: readonly ModelMessage[]): PendingRequest[] {
  const answered = new Set<string>();
  const resulted = new Set<string>();
  const calls = new Map<string, Part>();
  const requests: Part[] = [];
  for (const m of messages) {
    for (const p of partsOf(m)) {
      if (m.role === 'assistant' && p.type === 'tool-call') calls.set(p.toolCallId as string, p);
      else if (m.role === 'assistant' && p.type === 'tool-approval-request') requests.push(p);
      else if (p.type === 'tool-approval-response') answered.add(p.approvalId as string);
      else if (p.type === 'tool-result') resulted.add(p.toolCallId as string);
    }
  }
  const pending: PendingRequest[] = [];
  for (const r of requests) {
    const approvalId = r.approvalId as string;
    const toolCallId = r.toolCallId as string;
    if (answered.has(approvalId) || resulted.has(toolCallId)) continue;
    const call = calls.get(toolCallId);
    if (!call) continue; // the SDK refuses it (ToolCallNotFoundForApprovalError); nothing to ask
    const providerExecuted = call.providerExecuted === true;
    pending.push({
      approvalId,
      toolCallId,
      toolName: call.toolName as string,
      input: call.input,
      editable: r.signature === undefined && !Object.hasOwn(r, 'inputSchemaInput') && !providerExecuted,
      providerExecuted,
    });
  }
  return pending;
}

export interface ResolvedToolApprovals {
  /** The messages to call generateText / streamText with next: edits applied, the approval responses last. */
  messages: ModelMessage[];
  /** One per tool call asked about, in the order of the requests. Empty: nothing was waiting for approval. */
  decisions: ToolCallDecision[];
}

/**
 * Asks Taskbay about every tool call of `messages` waiting for approval (the conversation with
 * the last result's response.messages appended) and answers with the messages to continue with.
 * All requests are open at once; the first failure (an approval that does not verify, Taskbay
 * refusing) cancels the rest and throws, so no call is answered.
 */
export async function resolveToolApprovals(messages: readonly ModelMessage[], options: ToolApprovalOptions): Promise<ResolvedToolApprovals> {
  const pending = pendingToolApprovals(messages);
  if (!pending.length) return { messages: [...messages], decisions: [] };
  const decisions = await allOrNothing(pending, options.signal, (p, signal) =>
    requestToolApproval({ id: p.toolCallId, name: p.toolName, arguments: p.input }, { ...options, editable: p.editable, signal }),
  );
  const edits = new Map<string, unknown>();
  for (const d of decisions) if (d.approved && d.edited) edits.set(d.toolCallId, d.arguments);
  const next = messages.map((m) => {
    if (m.role !== 'assistant' || typeof m.content === 'string' || !m.content.some((p) => p.type === 'tool-call' && edits.has(p.toolCallId))) return m;
    return { ...m, content: m.content.map((p) => (p.type === 'tool-call' && edits.has(p.toolCallId) ? { ...p, input: edits.get(p.toolCallId) } : p)) };
  });
  const responses: ToolApprovalResponse[] = pending.map((p, i) => ({
    type: 'tool-approval-response',
    approvalId: p.approvalId,
    approved: decisions[i]!.approved,
    reason: decisions[i]!.reason,
    ...(p.providerExecuted ? { providerExecuted: true } : {}),
  }));
  next.push({ role: 'tool', content: responses });
  return { messages: next, decisions };
}
