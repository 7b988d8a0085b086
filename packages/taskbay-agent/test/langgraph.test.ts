import { type AIMessage, AIMessageChunk, HumanMessage, type ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { Command, END, isInterrupted, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalVerificationError } from '../src/index.js';
import { approveToolCall, resumeWithTaskbay, TASKBAY_DECISION, taskbayInterrupts } from '../src/langgraph.js';
import { decided, forgeSignature, inboxRequest, reviewer, signedApprovalsOf, startTaskbay, type Taskbay, tamperingFetch } from './support.js';

// The LangGraph adapter end to end with LangChain's own test chat model: FakeStreamingChatModel
// (@langchain/core/utils/testing, the one fake that emits tool calls) answers with a send_email
// tool call; LangGraph's prebuilt ToolNode runs the tool, which asks approveToolCall before its
// side effect. The host gets the interrupt, resumeWithTaskbay asks a real Taskbay, the reviewer
// decides, and the Command it answers resumes the graph. The tool verifies the signed approval
// itself, so a forged Command({ resume }) runs nothing.

let tb: Taskbay;

beforeAll(async () => {
  tb = await startTaskbay();
});

afterAll(async () => {
  await tb?.t.stop();
});

const EMAIL = { to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' };

/** The model's turn: one send_email tool call with this id (the id Taskbay gets as externalId). */
const modelCall = (callId: string) => ({ id: callId, name: 'send_email', args: EMAIL, type: 'tool_call' as const });

/**
 * The agent: the test model bound to send_email, routed by toolsCondition to a ToolNode whose
 * tool asks Taskbay, then sends (recorded in `sent`) or answers the refusal.
 */
function mailGraph(callId: string, sent: unknown[]) {
  const sendEmail = tool(
    async (_args, config) => {
      const call = config.toolCall;
      if (!call?.id) throw new Error('the tool was called without its tool call');
      // The tool runs again from the top when resumed: nothing with side effects before this line.
      const decision = await approveToolCall({ id: call.id, name: call.name, args: call.args }, { url: tb.agent.url });
      if (!decision.approved) return `not sent: ${decision.reason}`;
      sent.push(decision.arguments);
      return `sent to ${(decision.arguments as typeof EMAIL).to}`;
    },
    { name: 'send_email', description: 'Send an email', schema: z.object({ to: z.string(), subject: z.string(), body: z.string() }) },
  );
  const model = new FakeStreamingChatModel({ chunks: [new AIMessageChunk({ content: '', tool_calls: [modelCall(callId)] })] }).bindTools([sendEmail]);
  return (
    new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      // handleToolErrors off: a refused resume must fail the run, not become a message to the model.
      .addNode('tools', new ToolNode([sendEmail], { handleToolErrors: false }))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      // The fake model answers the same tool call on every turn, so the run ends after the tool rather than looping back to it.
      .addEdge('tools', END)
      .compile({ checkpointer: new MemorySaver() })
  );
}

/** Starts the agent on a thread: the model calls send_email and the run stops at the tool's interrupt. */
async function interrupted(callId: string, sent: unknown[]) {
  const graph = mailGraph(callId, sent);
  const config = { configurable: { thread_id: `thread-${callId}` } };
  const output = await graph.invoke({ messages: [new HumanMessage('Send the Q3 report to ops.')] }, config);
  expect(isInterrupted(output)).toBe(true);
  // The interrupt holds the call the model made, not one the test wrote into the state.
  expect(taskbayInterrupts(output).map((i) => i.value!.toolCall)).toEqual([{ id: callId, name: 'send_email', args: EMAIL }]);
  return { graph, config, output };
}

/** The tool's answer in the final messages: the ToolMessage for the model's call. */
function toolAnswer(messages: unknown[], callId: string): string {
  const [ai, answer] = messages.slice(-2) as [AIMessage, ToolMessage];
  expect(ai.tool_calls?.map((c) => c.id)).toEqual([callId]);
  expect(answer.tool_call_id).toBe(callId);
  return String(answer.content);
}

describe('@taskbay/agent/langgraph: interrupt() → Taskbay → Command({ resume })', () => {
  it('approve: the tool runs once, with the arguments the model called it with', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-approve', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-approve');
    expect(seen.action.data).toEqual({ toolName: 'send_email', arguments: EMAIL });
    await reviewer.approve(tb, seen);
    const command = await resuming;
    expect(command.resume).toMatchObject({ type: TASKBAY_DECISION, status: 'APPROVED', approvalId: seen.id, digest: seen.digest, arguments: EMAIL });
    const final = await graph.invoke(command, config);
    expect(toolAnswer(final.messages, 'lg-approve')).toBe('sent to ops@example.com');
    expect(sent).toEqual([seen.action.data!.arguments]);
  });

  it('edit then approve: the resume carries the new digest and arguments; the tool runs once with them', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-edit', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-edit');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached.' });
    const command = await resuming;
    const held = await decided(tb, seen.id);
    expect(command.resume).toMatchObject({ status: 'APPROVED', revision: 2, digest: held.digest, edited: true, arguments: held.action.data.arguments });
    const final = await graph.invoke(command, config);
    expect(toolAnswer(final.messages, 'lg-edit')).toBe('sent to finance@example.com');
    expect(sent).toEqual([held.action.data.arguments]);
  });

  it('reject: the tool answers the reviewer’s reason and never sends', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-reject', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-reject');
    await reviewer.reject(tb, seen, 'wrong recipient');
    const final = await graph.invoke(await resuming, config);
    expect(toolAnswer(final.messages, 'lg-reject')).toMatch(/^not sent: Rejected in Taskbay by .*: wrong recipient$/);
    expect(sent).toEqual([]);
  });

  it('a forged signature on the way to the host: resumeWithTaskbay throws, the graph stays interrupted, nothing runs', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-forged', sent);
    const forged = tamperingFetch((a) => {
      for (const s of signedApprovalsOf(a)) s.signature = forgeSignature(s.signature);
    });
    const resuming = resumeWithTaskbay(output, { ...tb.agent, fetch: forged }).catch((e) => e);
    const seen = await inboxRequest(tb, 'lg-forged');
    await reviewer.approve(tb, seen);
    expect(await resuming).toBeInstanceOf(ApprovalVerificationError);
    expect((await graph.getState(config)).next).toEqual(['tools']);
    expect(sent).toEqual([]);
  });

  /** A genuine resume for a fresh thread (the reviewer approved it), and the graph at its interrupt. */
  async function genuineResume(callId: string, sent: unknown[]) {
    const { graph, config, output } = await interrupted(callId, sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    await reviewer.approve(tb, await inboxRequest(tb, callId));
    return { graph, config, genuine: (await resuming).resume as any };
  }
  // A resume only, as resumeWithTaskbay makes it (no update, no goto).
  const resumeWith = (resume: unknown) => new Command<unknown, Record<string, never>, never>({ resume });

  it('a forged Command({ resume }) saying APPROVED without a signature is refused by the tool itself: nothing runs', async () => {
    const sent: unknown[] = [];
    const { graph, config, genuine } = await genuineResume('lg-unsigned', sent);
    await expect(graph.invoke(resumeWith({ ...genuine, signedApproval: null }), config)).rejects.toBeInstanceOf(ApprovalVerificationError);
    expect(sent).toEqual([]);
  });

  it('a forged Command({ resume }) with other arguments than Taskbay signed is refused by the tool itself: nothing runs', async () => {
    const sent: unknown[] = [];
    const { graph, config, genuine } = await genuineResume('lg-altered', sent);
    const redirected = { to: 'attacker@example.com', subject: 'x', body: 'x' };
    const altered = resumeWith({
      ...genuine,
      arguments: redirected,
      signedApproval: { ...genuine.signedApproval, action: { ...genuine.signedApproval.action, data: { toolName: 'send_email', arguments: redirected } } },
    });
    const refused = await graph.invoke(altered, config).catch((e) => e);
    expect(refused).toBeInstanceOf(ApprovalVerificationError);
    expect(refused.reason).toMatch(/digest/);
    expect(sent).toEqual([]);
  });
});
