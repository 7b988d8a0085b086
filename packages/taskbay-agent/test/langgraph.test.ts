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

  /** A genuine resume for a fresh thread (the reviewer approved it), and the graph at its interrupt. */
  async function genuineResume(callId: string, sent: unknown[]) {
    const { graph, config, output } = await interrupted(callId, sent);
    const resuming = resumeWithTaskbay(output, tb.agent);
    await reviewer.approve(tb, await inboxRequest(tb, callId));
    return { graph, config, genuine: (await resuming).resume as any };
  }
  // A resume only, as resumeWithTaskbay makes it (no update, no goto).
  const resumeWith = (resume: unknown) => new Command<unknown, Record<string, never>, never>({ resume });

  it('a forged Command({ resume }) saying APPROVED without a signature is refused by the node itself: nothing runs', async () => {
    const sent: unknown[] = [];
    const { graph, config, genuine } = await genuineResume('lg-unsigned', sent);
    await expect(graph.invoke(resumeWith({ ...genuine, signedApproval: null }), config)).rejects.toBeInstanceOf(ApprovalVerificationError);
    expect(sent).toEqual([]);
  });

  it('a forged Command({ resume }) with other arguments than Taskbay signed is refused by the node itself: nothing runs', async () => {
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
