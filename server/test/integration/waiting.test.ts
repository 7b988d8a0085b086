import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type Variant } from '../../src/fixture-agent/agent.js';
import { OPS, agentRegistry, codeOf, createMember, startTestInstance, type TestInstance } from '../support/harness.js';

// Issue 9, item 7: tasks waiting for a person that cannot become an approval are listed with the
// reason (a form, an A2UI surface, an ignored extension part and why, a message), and listing them
// opens nothing (seed 000 step 3: an ignored request stays ordinary content).

let t: TestInstance;
let fixture: FixtureAgent;
const agentId = agentRegistry(() => t);

beforeAll(async () => {
  fixture = await startFixtureAgent();
  t = await startTestInstance({ worker: false });
});
afterAll(async () => {
  await t?.stop();
  await fixture?.close();
});

const WAITING = `{ tasksWaitingForInput { reason detail messageId since task { id state } } }`;

async function start(variant: Variant, text: string): Promise<string> {
  const r = await t.gql(OPS.startTask, { agentId: await agentId(fixture.cardUrl(variant)), text });
  expect(r.errors).toBeUndefined();
  return r.data.startTask.id;
}

describe('tasksWaitingForInput', () => {
  it('lists waiting tasks with the reason, leaves out those whose message opened an approval, and opens nothing', async () => {
    const cases: [Variant, string, string, RegExp][] = [
      ['form', 'deploy', 'FORM', /^Asks for a form: “Deploy request”\.$/],
      ['a2ui', 'hello', 'A2UI', /A2UI surface/],
      ['plain', 'approve', 'IGNORED_PART', /Approval request ignored: the agent's card does not advertise the approval-request extension\./],
      ['invalid', 'approve', 'IGNORED_PART', /Approval request ignored: title must be 1 to 200 characters\. Approval request ignored: action\.text must be 1 to 20000 characters\./],
      ['unknown', 'approve', 'IGNORED_PART', /Approval request ignored: action\.kind must be "send_message" or "send_data", got "run_tool"/],
      ['invalid', 'form', 'IGNORED_PART', /Form ignored: schema\.properties\.target: nested objects are not supported/],
      ['plain', 'surface', 'IGNORED_PART', /A2UI surface ignored: the agent's card does not advertise the A2UI extension/],
      ['showcase', 'hello', 'MESSAGE', /^Asks: You said: hello\. Say approve to get an approval request\.$/],
    ];
    const ids: string[] = [];
    for (const [variant, text] of cases) ids.push(await start(variant, text));
    const approvalTask = await start('showcase', 'approve'); // became an approval: not listed
    const completed = await start('showcase', 'form');
    const form = await t.gql(`query($id: ID!) { task(id: $id) { messages { messageId form } } }`, { id: completed });
    const asked = form.data.task.messages.find((m: { form: unknown }) => m.form).messageId;
    expect(
      (await t.gql(`mutation($i: SubmitTaskFormInput!) { submitTaskForm(input: $i) { state } }`, { i: { taskId: completed, messageId: asked, values: { environment: 'staging', replicas: 2 } } })).data
        .submitTaskForm.state,
    ).toBe('COMPLETED'); // no longer waiting: not listed

    const r = await t.gql(WAITING);
    expect(r.errors).toBeUndefined();
    const byTask = new Map(r.data.tasksWaitingForInput.map((w: { task: { id: string } }) => [w.task.id, w]));
    expect(byTask.has(approvalTask)).toBe(false);
    expect(byTask.has(completed)).toBe(false);
    cases.forEach(([variant, text, reason, detail], i) => {
      const w = byTask.get(ids[i]!) as { reason: string; detail: string; task: { state: string }; messageId: string } | undefined;
      expect(w, `${variant} ${text}`).toBeDefined();
      expect(w!.reason, `${variant} ${text}`).toBe(reason);
      expect(w!.detail, `${variant} ${text}`).toMatch(detail);
      expect(w!.task.state).toBe('INPUT_REQUIRED');
    });
    expect(r.data.tasksWaitingForInput.map((w: { task: { id: string } }) => w.task.id)).toEqual([...ids].reverse().filter((id) => byTask.has(id)));

    // Listing opened nothing: the ignored requests stay ordinary content.
    const approvals = await t.gql(`{ approvals(first: 100) { edges { node { task { id } } } } }`);
    const withApproval = new Set(approvals.data.approvals.edges.map((e: { node: { task: { id: string } } }) => e.node.task.id));
    for (const id of ids) expect(withApproval.has(id)).toBe(false);
  });

  it('shows a member only the tasks of agents they hold a grant on', async () => {
    const member = await createMember(t);
    const none = await t.gql(WAITING, {}, member.token);
    expect(none.data.tasksWaitingForInput).toEqual([]);
    const form = await agentId(fixture.cardUrl('form'));
    expect((await t.gql(OPS.grant, { userId: member.id, agentId: form, permission: 'VIEW' })).errors).toBeUndefined();
    const seen = (await t.gql(WAITING, {}, member.token)).data.tasksWaitingForInput;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((w: { reason: string }) => w.reason === 'FORM')).toBe(true);
  });

  it('refuses a page size out of range', async () => {
    expect(codeOf(await t.gql(`{ tasksWaitingForInput(first: 0) { reason } }`))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(`{ tasksWaitingForInput(first: 101) { reason } }`))).toBe('BAD_USER_INPUT');
  });
});
