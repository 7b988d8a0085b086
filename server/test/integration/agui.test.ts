import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgUiFixture, type AgUiFixture } from '../../src/fixture-agent/agui.js';
import { codeOf, eventually, OPS, startTestInstance, type GqlResult, type TestInstance } from '../support/harness.js';
import { canon, sha256 } from '../support/independent-digest.js';

// AG-UI agents (docs/AG-UI.md) over real HTTP: the fixture agent (fixture-agent/agui.ts) streams
// runs that end with the interrupt outcome; each interrupt opens an approval; the decision
// resumes the thread once, with metadata.approval the agent verifies against Taskbay's JWKS.

let t: TestInstance;
let agent: AgUiFixture;
const agents = new Map<string, string>();

function rawId(globalId: string): string {
  const s = Buffer.from(globalId, 'base64').toString('utf8');
  return s.slice(s.indexOf(':') + 1);
}

function ok<T = any>(r: GqlResult<T>): T {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data as T;
}

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
    return task.state === 'COMPLETED' || task.state === 'FAILED' ? task : null;
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
    expect(signed.decisionId).toBe(rawId(done.decisions[0].id));
  });
});
