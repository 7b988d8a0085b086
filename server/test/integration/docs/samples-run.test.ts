import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_EVIDENCE_EXTENSION, TASKBAY_EXTENSIONS } from '../../../src/a2a/extensions.js';
import { validateAgentCard } from '../../../src/a2a/card.js';
import { findApprovalRequest } from '../../../src/approvals/request-part.js';
import { validateApprovalContract } from '../../../src/contract/validate.js';
import { parseA2uiAction, parseA2uiEnvelopes } from '../../../src/forms/a2ui.js';
import { coerceFormReply, parseFormDefinition } from '../../../src/forms/form-subset.js';
import { sendParams } from '../../../src/tasks/service.js';
import { codeOf, eventually, OPS, startTestInstance, type TestInstance, ok } from '../../support/harness.js';
import { REPO_ROOT } from '../../support/repo-root.js';
import { sampleJson, shapeOf } from '../../support/doc-samples.js';

// The samples of docs/AGENT-AUTHORS.md and docs/EXPORT.md (docs/samples/), run: each JSON sample
// goes through the reader the server itself uses, and deploy-agent.mjs and export-approval.mjs run
// as child processes against a real Taskbay on loopback. (docs-samples.test.ts checks that each
// page shows exactly these files.)

let t: TestInstance;
let agent: ChildProcess;
let cardUrl = '';
let agentId = '';

const START = `mutation($agentId: ID!, $text: String, $skillId: String, $formValues: JSON) {
  startTask(input: { agentId: $agentId, text: $text, skillId: $skillId, formValues: $formValues }) { id state remoteTaskId } }`;
const TASK = `query($id: ID!) { task(id: $id) { state messages { messageId role parts metadata form a2ui } } }`;
const PENDING = `query($taskId: ID!) { approvals(taskId: $taskId, status: [PENDING]) { edges { node { id revision digest title risk action } } } }`;

async function start(vars: Record<string, unknown>) {
  return ok(await t.gql(START, { agentId, ...vars })).startTask as { id: string; state: string; remoteTaskId: string };
}
async function messages(taskId: string) {
  return ok(await t.gql(TASK, { id: taskId })).task.messages as any[];
}
async function lastAgentMessage(taskId: string) {
  return (await messages(taskId)).filter((m) => m.role === 'AGENT').at(-1);
}
async function pending(taskId: string) {
  const edges = ok(await t.gql(PENDING, { taskId })).approvals.edges;
  expect(edges).toHaveLength(1);
  return edges[0].node as { id: string; revision: number; digest: string; title: string; risk: string; action: any };
}
/** The agent's text once the task reached `state` (the delivery job runs in the background). */
async function finalText(taskId: string, state = 'COMPLETED'): Promise<string> {
  await eventually(async () => ok(await t.gql(TASK, { id: taskId })).task.state === state);
  return (await lastAgentMessage(taskId)).parts[0].text;
}

/**
 * A sample script as a child process, awaited without blocking: the Taskbay it calls runs in this
 * process (spawnSync would stop it from answering).
 */
function runNode(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** The values in the agent's "Noted {…} for skill X." (Postgres jsonb does not keep key order). */
function noted(text: string): { values: unknown; skill: string } {
  const m = /^Noted (\{.*\}) for skill (\S+)\.$/.exec(text);
  expect(m, text).not.toBeNull();
  return { values: JSON.parse(m![1]!), skill: m![2]! };
}

beforeAll(async () => {
  t = await startTestInstance();
  agent = spawn(process.execPath, [`${REPO_ROOT}docs/samples/deploy-agent.mjs`], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  agent.stdout!.on('data', (b) => (out += b));
  agent.stderr!.on('data', (b) => (out += b));
  cardUrl = await eventually(async () => {
    if (agent.exitCode !== null) throw new Error(`deploy-agent.mjs exited: ${out}`);
    return /^card: (\S+)$/m.exec(out)?.[1];
  });
  agentId = ok(await t.gql(OPS.register, { url: cardUrl })).registerAgent.id;
}, 60_000);

afterAll(async () => {
  agent?.kill();
  await t?.stop();
});

describe('JSON samples, read by the code the server uses', () => {
  it('agent-card.json is a valid card advertising the four extensions, with a start form in the subset', () => {
    const card = validateAgentCard(sampleJson('agent-card.json'));
    // The execution-evidence extension has its own sample card (evidence-agent-card.json).
    const four = TASKBAY_EXTENSIONS.filter((uri) => uri !== EXECUTION_EVIDENCE_EXTENSION);
    expect(four).toHaveLength(4);
    expect(card.capabilities.extensions!.map((e) => e.uri).sort()).toEqual([...four].sort());
    const startForm = card.capabilities.extensions!.find((e) => e.params?.startForm)!.params!.startForm;
    expect(parseFormDefinition(startForm)).toMatchObject({ ok: true });
  });

  it('the approval request parts open a request, read as written', () => {
    for (const name of ['approval-request-part.json', 'approval-request-send-data.json']) {
      const part = sampleJson(name);
      const found = findApprovalRequest([part]);
      expect(found, name).not.toBeNull();
      expect(found!.request).toMatchObject({ title: part.data.title, risk: part.data.risk, action: part.data.action });
    }
  });

  it('form-part.json is in the subset, and form-reply-part.json is what a reply to it becomes', () => {
    const form = parseFormDefinition(sampleJson('form-part.json').data);
    expect(form.ok).toBe(true);
    if (!form.ok) return;
    const reply = sampleJson('form-reply-part.json');
    expect(reply.mediaType).toBe('application/json');
    // What the console submits (strings typed into fields) is coerced to exactly the sample.
    const typed = { environment: 'production', replicas: '3', dryRun: true, extra: 'dropped' };
    expect(coerceFormReply(form.form, typed)).toEqual({ ok: true, values: reply.data });
  });

  it('a2ui-part.json is a surface Taskbay keeps, and a2ui-action-part.json an action it sends', () => {
    const part = sampleJson('a2ui-part.json');
    expect(part.mediaType).toBe('application/a2ui+json');
    expect(parseA2uiEnvelopes(part.data)).toEqual(part.data);
    const action = sampleJson('a2ui-action-part.json');
    expect(action.data.version).toBe('v0.9');
    expect(parseA2uiAction(action.data.action)).toEqual({ ok: true, action: action.data.action });
  });

  it('skill-routed-send.json is what Taskbay sends for a task started for one skill', () => {
    const card = validateAgentCard(sampleJson('agent-card.json'));
    const shown = sampleJson('skill-routed-send.json');
    const params = sendParams(card, { ...shown.message, messageId: 'm-1' }, 'deploy');
    expect(params.metadata).toEqual(shown.metadata);
    expect(shapeOf(params.message)).toEqual(shapeOf(shown.message));
  });

  it('approval-export.json validates against agents.approval@1', () => {
    expect(validateApprovalContract(sampleJson('approval-export.json'))).toEqual({ valid: true, errors: [] });
  });
});

describe('deploy-agent.mjs against a real Taskbay', () => {
  it('"deploy": the approval request opens a request; approved, the agent receives approved-message.json and checks the digest; export-approval.mjs prints approval-export.json', async () => {
    const task = await start({ text: 'deploy' });
    expect(task.state).toBe('INPUT_REQUIRED');
    const request = sampleJson('approval-request-part.json').data;
    const a = await pending(task.id);
    expect(a).toMatchObject({ title: request.title, risk: request.risk.toUpperCase(), action: request.action });
    ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
    expect(await finalText(task.id)).toBe(`Done as approved (revision 1, ${a.digest}).`);

    const delivered = (await messages(task.id)).find((m) => m.metadata?.approval);
    const shown = sampleJson('approved-message.json');
    expect(`ROLE_${delivered.role}`).toBe(shown.role);
    expect(delivered.parts).toEqual(shown.parts);
    expect(delivered.metadata.decision).toEqual(shown.metadata.decision);
    expect(shapeOf(delivered.metadata)).toEqual(shapeOf(shown.metadata));

    const uuid = ok(await t.gql(`query($id: ID!) { approval(id: $id) { contract } }`, { id: a.id })).approval.contract.id as string;
    const env = { TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: t.adminToken };
    const run = await runNode([`${REPO_ROOT}docs/samples/export-approval.mjs`, uuid], env);
    expect(run.status, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(validateApprovalContract(record).valid).toBe(true);
    expect(run.stderr).toMatch(/^answered "approve" at \S+Z\n$/);
    const exported = sampleJson('approval-export.json');
    const fixed = (r: any) => ({ ...r, id: 'apr_', run_id: 'tsk_', decided_by: { ...r.decided_by, id: 'usr_' }, decided_at: 'at' });
    expect(fixed(record)).toEqual(fixed(exported));
    expect(record.id).toMatch(/^apr_[0-9a-f]{32}$/);
    expect(record.run_id).toMatch(/^tsk_[0-9a-f]{32}$/);

    const missing = await runNode([`${REPO_ROOT}docs/samples/export-approval.mjs`, `apr_${'0'.repeat(32)}`], env);
    expect([missing.status, missing.stderr]).toEqual([1, '404 NOT_FOUND: approval not found\n']);
  }, 60_000);

  it('"scale": a send_data request; edited then approved, the agent recomputes the edited digest', async () => {
    const task = await start({ text: 'scale' });
    const a = await pending(task.id);
    expect(a.action).toEqual(sampleJson('approval-request-send-data.json').data.action);
    const edited = ok(
      await t.gql(OPS.editAndApprove, { id: a.id, revision: a.revision, digest: a.digest, action: { kind: 'send_data', values: { replicas: 5 } } }),
    ).editAndApprove;
    expect(edited.revision).toBe(2);
    expect(await finalText(task.id)).toBe(`Done as approved (revision 2, ${edited.digest}).`);
  }, 60_000);

  it('"form": the form part is a form the person can answer; the answer reaches the agent as form-reply-part.json', async () => {
    const task = await start({ text: 'form' });
    const m = await lastAgentMessage(task.id);
    expect(m.form).toEqual(sampleJson('form-part.json').data);
    const SUBMIT = `mutation($taskId: ID!, $messageId: String!, $values: JSON!) { submitTaskForm(input: { taskId: $taskId, messageId: $messageId, values: $values }) { id } }`;
    const bad = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'moon', replicas: 3 } });
    expect(codeOf(bad)).toBe('BAD_USER_INPUT');
    ok(await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: sampleJson('form-reply-part.json').data }));
    expect(noted(await finalText(task.id))).toEqual({ values: sampleJson('form-reply-part.json').data, skill: 'any' });
    const sent = (await messages(task.id)).filter((x) => x.role === 'USER').at(-1);
    expect(sent.parts).toEqual([sampleJson('form-reply-part.json')]);
  }, 60_000);

  it('the start form of agent-card.json starts a task with its values', async () => {
    const task = await start({ formValues: { service: 'checkout', environment: 'staging' } });
    expect(noted(await finalText(task.id))).toEqual({ values: { service: 'checkout', environment: 'staging' }, skill: 'any' });
  }, 60_000);

  it('"rollout": the A2UI surface is kept; a button press arrives as a2ui-action-part.json', async () => {
    const task = await start({ text: 'rollout' });
    const m = await lastAgentMessage(task.id);
    expect(m.a2ui).toEqual(sampleJson('a2ui-part.json').data);
    const ACTION = `mutation($taskId: ID!, $messageId: String!, $action: JSON!) { sendA2uiAction(input: { taskId: $taskId, messageId: $messageId, action: $action }) { id } }`;
    ok(await t.gql(ACTION, { taskId: task.id, messageId: m.messageId, action: sampleJson('a2ui-action-part.json').data.action }));
    expect(await finalText(task.id)).toBe('Scheduled for 22:00-23:00.');
    const sent = (await messages(task.id)).filter((x) => x.role === 'USER').at(-1);
    expect(sent.parts).toEqual([sampleJson('a2ui-action-part.json')]);
  }, 60_000);

  it('skill routing: a task for "deploy" carries its route; an unknown skill is refused by Taskbay and by the agent', async () => {
    const task = await start({ text: 'form', skillId: 'deploy' });
    const m = await lastAgentMessage(task.id);
    const SUBMIT = `mutation($taskId: ID!, $messageId: String!, $values: JSON!) { submitTaskForm(input: { taskId: $taskId, messageId: $messageId, values: $values }) { id } }`;
    ok(await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'staging', replicas: 1 } }));
    expect(noted(await finalText(task.id))).toEqual({ values: { environment: 'staging', replicas: 1 }, skill: 'deploy' });

    expect(codeOf(await t.gql(START, { agentId, text: 'form', skillId: 'billing' }))).toBe('BAD_USER_INPUT');
    const a2aUrl = cardUrl.replace(/card\.json$/, 'a2a');
    const rpc = (metadata: unknown, taskId?: string) =>
      fetch(a2aUrl, {
        method: 'POST',
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'form' }], taskId }, metadata },
        }),
      }).then((r) => r.json() as Promise<any>);
    const route = (skillId: string) => ({ 'https://extensions.allsrc.dev/agent-taskbay/skill-routing/v1': { skillId } });
    expect((await rpc(route('billing'))).error).toEqual({ code: -32602, message: 'unsupported skill billing' });
    // A follow-up must keep its task's route.
    expect((await rpc(route('cleanup'), task.remoteTaskId)).error).toEqual({ code: -32602, message: `task ${task.remoteTaskId} belongs to skill deploy` });
  }, 60_000);
});
