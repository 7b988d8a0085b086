import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgUiFixture, type AgUiFixture } from '../../../src/fixture-agent/agui.js';
import { codeOf, eventually, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';

// AG-UI agents (docs/AG-UI.md) over real HTTP: the fixture agent (fixture-agent/agui.ts) streams
// runs that end with the interrupt outcome; each interrupt opens an approval; the decision
// resumes the thread once, with metadata.approval the agent verifies against Taskbay's JWKS.

let t: TestInstance;
let agent: AgUiFixture;
const agents = new Map<string, string>();

const REGISTER = `mutation($url: String!, $name: String!) { registerAgUiAgent(input: { endpointUrl: $url, name: $name }) { id kind endpointUrl cardUrl name } }`;
const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { ${OPS.approvalFields} } } } }`;
const APPROVAL = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} } }`;
const TASK = `query($id: ID!) { task(id: $id) { state remoteTaskId messages { role parts messageId } aguiRuns { runId status error resumeStatus resumeError } } }`;

async function agentFor(scenario: 'approval' | 'form' | 'multi' | 'hostile-json' | 'hostile-big' | 'hostile-unknown') {
  let id = agents.get(scenario);
  if (!id) {
    id = ok(await t.gql(REGISTER, { url: agent.url(scenario), name: `AG-UI ${scenario}` })).registerAgUiAgent.id as string;
    agents.set(scenario, id);
  }
  return id;
}

async function start(scenario: 'approval' | 'form' | 'multi') {
  const task = ok(await t.gql(OPS.startTask, { agentId: await agentFor(scenario), text: 'Please send the Q3 report.' })).startTask;
  const approvals = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges.map((e: any) => e.node);
  return { task, approvals };
}

const taskOf = async (id: string) => ok(await t.gql(TASK, { id })).task;
const resumesOf = (threadId: string) => agent.resumes.filter((r) => r.threadId === threadId);

async function completed(taskId: string) {
  return eventually(async () => {
    const task = await taskOf(taskId);
    const settled = task.aguiRuns.every((r: any) => r.resumeStatus !== 'QUEUED');
    return (task.state === 'COMPLETED' || task.state === 'FAILED') && settled ? task : null;
  }, 20_000);
}

beforeAll(async () => {
  agent = await startAgUiFixture();
  t = await startTestInstance({ env: { TASKBAY_DELIVERY_MAX_ATTEMPTS: '3' } });
  agent.trust(t.config.publicUrl, `${t.instance.url}/.well-known/jwks.json`);
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('registering an AG-UI agent', () => {
  it('by its endpoint: kind AG_UI, no card', async () => {
    const a = ok(await t.gql(REGISTER, { url: agent.url('approval'), name: 'Mailer' })).registerAgUiAgent;
    agents.set('approval', a.id);
    expect(a).toMatchObject({ kind: 'AG_UI', endpointUrl: agent.url('approval'), cardUrl: null, name: 'Mailer' });
    const again = await t.gql(REGISTER, { url: agent.url('approval'), name: 'Mailer 2' });
    expect(codeOf(again)).toBe('BAD_USER_INPUT');
    expect(again.errors![0]!.message).toMatch(/already registered/);
    // The existing agent's id, as the API gives it: the client goes on with that agent.
    expect(again.errors![0]!.extensions!.agentId).toBe(a.id);
    expect(ok(await t.gql(`query($id: ID!) { agent(id: $id) { name endpointUrl } }`, { id: again.errors![0]!.extensions!.agentId })).agent).toEqual({
      name: 'Mailer',
      endpointUrl: agent.url('approval'),
    });
  });

  it('concurrent registrations of one endpoint: one agent; each of the others is told its id', async () => {
    const url = `${agent.url('approval')}?copy=race`;
    const results = await Promise.all([1, 2, 3].map((i) => t.gql(REGISTER, { url, name: `Race ${i}` })));
    const won = results.filter((r) => !r.errors).map((r) => r.data!.registerAgUiAgent.id);
    expect(won).toHaveLength(1);
    const lost = results.filter((r) => r.errors);
    expect(lost.map(codeOf)).toEqual(['BAD_USER_INPUT', 'BAD_USER_INPUT']);
    for (const r of lost) expect(r.errors![0]!.extensions!.agentId).toBe(won[0]);
  });

  it('refuses a URL the agent network policy refuses', async () => {
    const r = await t.gql(REGISTER, { url: 'http://169.254.169.254/latest', name: 'metadata' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toMatch(/policy/);
  });
});

describe('run -> interrupt -> approval -> resume', () => {
  it('a tool-call interrupt opens one approval with its digest; approving resumes the thread once and the run completes', async () => {
    const { task, approvals } = await start('approval');
    expect(task.state).toBe('INPUT_REQUIRED');
    expect(approvals).toHaveLength(1);
    const a = approvals[0];
    expect(a).toMatchObject({ status: 'PENDING', source: 'AGENT', revision: 1 });
    expect(a.action.kind).toBe('send_message');
    expect(a.action.text).toBe('Send the Q3 report to ops@example.com?');
    expect(a.action.data).toMatchObject({ reason: 'tool_call', toolName: 'sendEmail', arguments: { to: 'ops@example.com', subject: 'Q3 report' } });
    expect(a.action.data.responseSchema.required).toEqual(['approved']);
    expect(a.digest).toBe(sha256(canon({ kind: 'send_message', text: a.action.text, data: a.action.data })));
    // The transcript: the person's message, the assistant's text and its tool call with arguments.
    const before = await taskOf(task.id);
    expect(before.messages.map((m: any) => m.role)).toEqual(['USER', 'AGENT']);
    expect(before.messages[1].parts[1].data).toMatchObject({ name: 'sendEmail', arguments: { to: 'ops@example.com' } });
    expect(before.aguiRuns).toEqual([expect.objectContaining({ status: 'INTERRUPTED', resumeStatus: null })]);

    ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
    const after = await completed(task.id);
    expect(after.state).toBe('COMPLETED');
    expect(after.messages.at(-1).parts[0].text).toBe('Done: emailed ops@example.com.');
    const resumes = resumesOf(task.remoteTaskId);
    expect(resumes).toHaveLength(1);
    expect(resumes[0]!.verdicts).toEqual(['verified']);
    expect(resumes[0]!.entries[0]).toMatchObject({ status: 'resolved', payload: { approved: true } });
    const signed = resumes[0]!.entries[0]!.metadata!.approval;
    expect(signed).toMatchObject({ revision: 1, revisionDigest: a.digest });
    const done = ok(await t.gql(APPROVAL, { id: a.id })).approval;
    expect(done.execution).toMatchObject({ status: 'DELIVERED', observedTaskState: 'COMPLETED' });
    expect(signed.decisionId).toBe(done.decisions[0].id);
  });
});

describe('the decisions and what each resumes', () => {
  it('reject resumes with a cancelled entry, unsigned; the agent executes nothing', async () => {
    const { task, approvals } = await start('approval');
    const a = approvals[0];
    ok(await t.gql(OPS.reject, { id: a.id, revision: a.revision, digest: a.digest, comment: 'not today' }));
    const after = await completed(task.id);
    expect(after.messages.at(-1).parts[0].text).toBe('Done: did not email ops@example.com.');
    const [resume] = resumesOf(task.remoteTaskId);
    expect(resume!.entries).toEqual([
      {
        interruptId: a.action.data.interruptId,
        status: 'cancelled',
        metadata: { approval: { requestId: rawId(a.id), decisionId: expect.any(String), outcome: 'REJECT', status: 'REJECTED' } },
      },
    ]);
    expect(JSON.stringify(resume!.entries)).not.toContain('signature');
    expect(ok(await t.gql(APPROVAL, { id: a.id })).approval.execution.status).toBe('DELIVERED');
  });

  it('edit then approve resumes with the edited arguments as editedArgs, at revision 2, and the agent verifies it', async () => {
    const { task, approvals } = await start('approval');
    const a = approvals[0];
    const data = { ...a.action.data, arguments: { ...a.action.data.arguments, to: 'cfo@example.com' } };
    const edited = ok(
      await t.gql(OPS.editAndApprove, { id: a.id, revision: a.revision, digest: a.digest, action: { text: a.action.text, data } }),
    ).editAndApprove;
    expect(edited.revision).toBe(2);
    const after = await completed(task.id);
    expect(after.messages.at(-1).parts[0].text).toBe('Done: emailed cfo@example.com.');
    const [resume] = resumesOf(task.remoteTaskId);
    expect(resume!.verdicts).toEqual(['verified']);
    expect(resume!.entries[0]!.payload).toEqual({ approved: true, editedArgs: data.arguments });
    expect(resume!.entries[0]!.metadata!.approval).toMatchObject({ revision: 2, revisionDigest: edited.digest });
    // The tool result is against the original tool call id (AG-UI: no new ToolCallStart on resume).
    const result = after.messages.find((m: any) => m.parts[0]?.data?.toolCallId && m.parts[0].data.content);
    expect(result.parts[0].data.toolCallId).toBe(a.action.data.toolCallId);
  });

  it('a form interrupt (response schema) is a send_data request; the edited values are the resume payload', async () => {
    const { task, approvals } = await start('form');
    expect(approvals).toHaveLength(1);
    const a = approvals[0];
    expect(a.action).toMatchObject({ kind: 'send_data', values: { quarter: 'Q1', year: 2026, revenue: 0 } });
    expect(Object.keys(a.action.form.schema.properties).sort()).toEqual(['quarter', 'revenue', 'year']);
    const values = { quarter: 'Q3', year: 2026, revenue: 4200000 };
    ok(await t.gql(OPS.editAndApprove, { id: a.id, revision: a.revision, digest: a.digest, action: { values } }));
    const after = await completed(task.id);
    expect(after.messages.at(-1).parts[0].text).toBe('Done: filed Q3 2026 with revenue 4200000.');
    const [resume] = resumesOf(task.remoteTaskId);
    expect(resume!.entries[0]).toMatchObject({ status: 'resolved', payload: values });
    expect(resume!.verdicts).toEqual(['verified']);
  });

  it('several interrupts: one approval each, all live; the resume waits for the last decision and answers all of them in one run', async () => {
    const { task, approvals } = await start('multi');
    expect(approvals).toHaveLength(3);
    expect(approvals.every((a: any) => a.status === 'PENDING')).toBe(true);
    const [x, y, z] = [...approvals].sort((p: any, q: any) => p.action.data.arguments.to.localeCompare(q.action.data.arguments.to));
    ok(await t.gql(OPS.approve, { id: x.id, revision: x.revision, digest: x.digest }));
    ok(await t.gql(OPS.reject, { id: y.id, revision: y.revision, digest: y.digest }));
    // Two of three answered: nothing is sent (AG-UI: a resume answers every open interrupt).
    expect((await taskOf(task.id)).aguiRuns[0].resumeStatus).toBeNull();
    expect(resumesOf(task.remoteTaskId)).toHaveLength(0);
    ok(await t.gql(OPS.approve, { id: z.id, revision: z.revision, digest: z.digest }));
    const after = await completed(task.id);
    expect(after.messages.at(-1).parts[0].text).toBe('Done: emailed x@example.com; did not email y@example.com; emailed z@example.com.');
    const resumes = resumesOf(task.remoteTaskId);
    expect(resumes).toHaveLength(1);
    expect(resumes[0]!.entries.map((e) => e.status).sort()).toEqual(['cancelled', 'resolved', 'resolved']);
    expect(resumes[0]!.verdicts.filter((v) => v === 'verified')).toHaveLength(2);
    for (const a of [x, y, z]) expect(ok(await t.gql(APPROVAL, { id: a.id })).approval.execution.status).toBe('DELIVERED');
  });

  it('the last two decisions of a run at once: exactly one resume', async () => {
    const { task, approvals } = await start('multi');
    const [x, y, z] = approvals;
    ok(await t.gql(OPS.approve, { id: x.id, revision: x.revision, digest: x.digest }));
    const both = await Promise.all([y, z].map((a: any) => t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest })));
    for (const r of both) ok(r);
    const after = await completed(task.id);
    expect(after.state).toBe('COMPLETED');
    expect(resumesOf(task.remoteTaskId)).toHaveLength(1);
    expect(agent.inputs.filter((i) => i.threadId === task.remoteTaskId && i.resume)).toHaveLength(1);
  });

  it('a person cannot start another run on a thread whose interrupts are open', async () => {
    const { task } = await start('approval');
    const r = await t.gql(`mutation($id: ID!) { sendTaskMessage(input: { taskId: $id, text: "hello?" }) { id } }`, { id: task.id });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toMatch(/interrupts/);
  });
});

describe('expiry', () => {
  it('the last open request of a run expiring answers it cancelled and sends the resume', async () => {
    const { task, approvals } = await start('multi');
    const [first, second, third] = approvals;
    ok(await t.gql(OPS.approve, { id: first.id, revision: first.revision, digest: first.digest }));
    ok(await t.gql(OPS.approve, { id: second.id, revision: second.revision, digest: second.digest }));
    await t.sql(`update approval set expires_at = now() - interval '1 second' where id = $1`, [rawId(third.id)]);
    const { expireDue } = await import('../../../src/approvals/expiry.js');
    expect(await expireDue(t.instance.orm.em.fork())).toBe(1);
    const after = await completed(task.id);
    expect(after.state).toBe('COMPLETED');
    const [resume] = resumesOf(task.remoteTaskId);
    expect(resume!.entries.map((e) => e.status).sort()).toEqual(['cancelled', 'resolved', 'resolved']);
    expect(resume!.entries.find((e) => e.status === 'cancelled')!.metadata!.approval).toMatchObject({ status: 'EXPIRED', decisionId: null });
  });
});

describe('exactly once', () => {
  it('an agent outage: the resume is retried with the same runId and reaches the agent once; replaying the job sends nothing', async () => {
    const { task, approvals } = await start('approval');
    const a = approvals[0];
    agent.failNext(1);
    ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
    const after = await completed(task.id);
    expect(after.state).toBe('COMPLETED');
    const run = after.aguiRuns[0];
    expect(run).toMatchObject({ resumeStatus: 'DELIVERED' });
    const [row] = await t.sql(`select resume_attempts, resume_run_id, id from agui_run where task_id = $1 and resumes_id is null`, [rawId(task.id)]);
    expect(row.resume_attempts).toBe(2);
    expect(resumesOf(task.remoteTaskId)).toHaveLength(1);
    const sent = agent.inputs.filter((i) => i.threadId === task.remoteTaskId && i.resume);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.runId).toBe(row.resume_run_id);
    // A job that runs again (a crash after the agent answered): the recorded run says it happened.
    await t.sql(`update agui_run set resume_status = 'QUEUED' where id = $1`, [row.id]);
    const { resumeRun } = await import('../../../src/agui/resume.js');
    await resumeRun(t.instance.orm.em.fork(), t.instance.deps, row.id, 1, 3);
    expect(agent.inputs.filter((i) => i.threadId === task.remoteTaskId && i.resume)).toHaveLength(1);
    const [again] = await t.sql(`select resume_status from agui_run where id = $1`, [row.id]);
    expect(again.resume_status).toBe('DELIVERED');
  });
});

describe('hostile event streams', () => {
  for (const [scenario, error] of [
    ['hostile-json', /event 2 is not JSON/],
    ['hostile-big', /event 2 is larger than 262144 bytes/],
    ['hostile-unknown', /event 2 is not a valid AG-UI event: its type "SURPRISE" is not an AG-UI event type/],
  ] as const) {
    it(`${scenario}: the run fails with a clear recorded error, opens nothing, and the agent's last error says why`, async () => {
      const task = ok(await t.gql(OPS.startTask, { agentId: await agentFor(scenario), text: 'go' })).startTask;
      const stored = await taskOf(task.id);
      expect(stored.state).toBe('FAILED');
      expect(stored.aguiRuns).toEqual([expect.objectContaining({ status: 'ERROR', error: expect.stringMatching(error) })]);
      expect(ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges).toHaveLength(0);
      const agentRow = ok(await t.gql(`query($id: ID!) { agent(id: $id) { lastError { kind message } } }`, { id: await agentFor(scenario) })).agent;
      expect(agentRow.lastError).toMatchObject({ kind: 'invalid_answer', message: expect.stringMatching(error) });
    });
  }

  it('an agent that refuses the run: BAD_USER_INPUT (AGENT_ERROR) and no task is stored', async () => {
    agent.failNext(1);
    const r = await t.gql(OPS.startTask, { agentId: await agentFor('approval'), text: 'go' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.extensions).toMatchObject({ reason: 'AGENT_ERROR', failure: 'http_status' });
  });
});
