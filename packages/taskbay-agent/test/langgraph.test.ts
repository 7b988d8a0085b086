import { Annotation, Command, END, isInterrupted, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalVerificationError } from '../src/index.js';
import { approveToolCall, resumeWithTaskbay, TASKBAY_DECISION } from '../src/langgraph.js';
import { decided, forgeSignature, inboxRequest, reviewer, signedApprovalsOf, startTaskbay, type Taskbay, tamperingFetch } from './support.js';

// The LangGraph adapter end to end, no LLM: a graph whose node asks approveToolCall before it runs
// its tool; the host gets the interrupt, resumeWithTaskbay asks a real Taskbay, the reviewer
// decides, and the Command it answers resumes the graph. The node verifies the signed approval
// itself, so a forged Command({ resume }) runs nothing.

let tb: Taskbay;

beforeAll(async () => {
  tb = await startTaskbay();
});

afterAll(async () => {
  await tb?.t.stop();
});

const EMAIL = { to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' };
type Call = { id: string; name: string; args: typeof EMAIL };

/** The graph: one node that asks Taskbay, then sends (recorded in `sent`) or reports the refusal. */
function mailGraph(sent: unknown[]) {
  const State = Annotation.Root({ call: Annotation<Call>(), result: Annotation<string | undefined>() });
  return new StateGraph(State)
    .addNode('send_email', async (state) => {
      const decision = await approveToolCall(state.call, { url: tb.agent.url });
      if (!decision.approved) return { result: `not sent: ${decision.reason}` };
      sent.push(decision.arguments);
      return { result: `sent to ${(decision.arguments as typeof EMAIL).to}` };
    })
    .addEdge(START, 'send_email')
    .addEdge('send_email', END)
    .compile({ checkpointer: new MemorySaver() });
}

/** Starts the graph on a thread: it stops at the node's interrupt. */
async function interrupted(callId: string, sent: unknown[]) {
  const graph = mailGraph(sent);
  const config = { configurable: { thread_id: `thread-${callId}` } };
  const output = await graph.invoke({ call: { id: callId, name: 'send_email', args: EMAIL } }, config);
  expect(isInterrupted(output)).toBe(true);
  return { graph, config, output };
}

describe('@taskbay/agent/langgraph: interrupt() → Taskbay → Command({ resume })', () => {
  it('approve: the node runs the tool once, with the call’s arguments', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-approve', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-approve');
    expect(seen.action.data).toEqual({ toolName: 'send_email', arguments: EMAIL });
    await reviewer.approve(tb, seen);
    const command = await resuming;
    expect(command.resume).toMatchObject({ type: TASKBAY_DECISION, status: 'APPROVED', approvalId: seen.id, digest: seen.digest, arguments: EMAIL });
    const final = await graph.invoke(command, config);
    expect(final.result).toBe('sent to ops@example.com');
    expect(sent).toEqual([seen.action.data!.arguments]);
  });

  it('edit then approve: the resume carries the new digest and arguments; the node runs the tool once with them', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-edit', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-edit');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached.' });
    const command = await resuming;
    const held = await decided(tb, seen.id);
    expect(command.resume).toMatchObject({ status: 'APPROVED', revision: 2, digest: held.digest, edited: true, arguments: held.action.data.arguments });
    await graph.invoke(command, config);
    expect(sent).toEqual([held.action.data.arguments]);
  });

  it('reject: the node gets the reviewer’s reason and never runs the tool', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-reject', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-reject');
    await reviewer.reject(tb, seen, 'wrong recipient');
    const final = await graph.invoke(await resuming, config);
    expect(final.result).toMatch(/^not sent: Rejected in Taskbay by .*: wrong recipient$/);
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
    expect((await graph.getState(config)).next).toEqual(['send_email']);
    expect(sent).toEqual([]);
  });

  it('a forged Command({ resume }) is refused by the node itself: an approval without a signature, or with other arguments than signed', async () => {
    const sent: unknown[] = [];
    const { graph, config, output } = await interrupted('lg-resume', sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    const seen = await inboxRequest(tb, 'lg-resume');
    await reviewer.approve(tb, seen);
    const genuine = (await resuming).resume as any;

    const unsigned = new Command({ resume: { ...genuine, signedApproval: null } });
    await expect(graph.invoke(unsigned, config)).rejects.toBeInstanceOf(ApprovalVerificationError);
    const redirected = { to: 'attacker@example.com', subject: 'x', body: 'x' };
    const altered = new Command({
      resume: { ...genuine, arguments: redirected, signedApproval: { ...genuine.signedApproval, action: { ...genuine.signedApproval.action, data: { toolName: 'send_email', arguments: redirected } } } },
    });
    await expect(graph.invoke(altered, config)).rejects.toBeInstanceOf(ApprovalVerificationError);
    expect(sent).toEqual([]);
    // The genuine one still resumes it.
    await graph.invoke(new Command({ resume: genuine }), config);
    expect(sent).toEqual([seen.action.data!.arguments]);
  });
});
