import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { A2UI_EXTENSION, MEDIA_TYPE } from '../../../src/a2a/extensions.js';
import type { AgentCard } from '../../../src/a2a/types.js';
import { A2UI_LIMITS, JSON_DEPTH_MAX } from '../../../src/limits.js';
import { ignoredParts } from '../../../src/approvals/waiting.js';
import type { Variant } from '../../../src/fixture-agent/content.js';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { OPS, agentRegistry, codeOf, createMember, type TestInstance } from '../../support/harness.js';
import { startWithFixtureAgent, stopAll } from '../../support/fixture-agent.js';

// Issue 9, item 7: tasks waiting for a person that cannot become an approval are listed with the
// reason (a form, an A2UI surface, an ignored extension part and why, a message), and listing them
// opens nothing (seed 000 step 3: an ignored request stays ordinary content).

let t: TestInstance;
let fixture: FixtureAgent;
const agentId = agentRegistry(() => t);

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent({ worker: false }));
});
afterAll(() => stopAll(t, fixture));

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
      [
        'invalid',
        'approve',
        'IGNORED_PART',
        /Approval request ignored: title must be 1 to 200 characters\. Approval request ignored: action\.text must be 1 to 20000 characters\./,
      ],
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
      (
        await t.gql(`mutation($i: SubmitTaskFormInput!) { submitTaskForm(input: $i) { state } }`, {
          i: { taskId: completed, messageId: asked, values: { environment: 'staging', replicas: 2 } },
        })
      ).data.submitTaskForm.state,
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

// Issue 15, item 13: limits the seed does not state are kept but never silent; agent data is kept exactly.
describe('data the seed sets no limit on', () => {
  const scripted = (parts: unknown[]) => ({ reply: { state: 'TASK_STATE_INPUT_REQUIRED', parts } });
  const startScripted = async (parts: unknown[]) => {
    const r = await t.gql(OPS.startTask, { agentId: await agentId(fixture.cardUrl('scripted')), data: scripted(parts) });
    expect(r.errors).toBeUndefined();
    return r.data.startTask as { id: string; remoteTaskId: string };
  };
  const nest = (levels: number) => {
    let v: unknown = 'leaf';
    for (let i = 0; i < levels; i++) v = { a: v };
    return v as Record<string, unknown>;
  };

  it(`a request whose data nests deeper than ${JSON_DEPTH_MAX} levels opens nothing, and the waiting list says why`, async () => {
    // action.data sits two levels below the part's data: nest(JSON_DEPTH_MAX - 1) makes the part's data one level too deep.
    const deep = { title: 'Deep', action: { kind: 'send_message', text: 'x', data: nest(JSON_DEPTH_MAX - 1) } };
    const task = await startScripted([{ text: 'Please approve.' }, { data: deep, mediaType: MEDIA_TYPE.approvalRequest }]);
    const waiting = (await t.gql(WAITING)).data.tasksWaitingForInput.find((w: { task: { id: string } }) => w.task.id === task.id);
    expect(waiting.reason).toBe('IGNORED_PART');
    expect(waiting.detail).toMatch(
      new RegExp(`^Approval request ignored: [a-z.]+(\\[\\d+\\])?\\.parts\\[1\\]\\.data is nested more than ${JSON_DEPTH_MAX} levels deep\\.$`),
    );
    const approvals = await t.sql('select a.id from approval a join task t on t.id = a.task_id where t.remote_task_id = $1', [task.remoteTaskId]);
    expect(approvals).toEqual([]);

    // One level less is within the limit: the request opens an approval with its data exactly.
    const fits = { title: 'Fits', action: { kind: 'send_message', text: 'x', data: nest(JSON_DEPTH_MAX - 2) } };
    const ok = await startScripted([{ data: fits, mediaType: MEDIA_TYPE.approvalRequest }]);
    const [row] = await t.sql('select a.action from approval a join task t on t.id = a.task_id where t.remote_task_id = $1', [ok.remoteTaskId]);
    expect(row.action).toEqual(fits.action);
  });

  it("an own __proto__ key in a request's data is kept as data (the digest is of what the agent sent), never as a prototype", async () => {
    const action = JSON.parse('{"kind":"send_message","text":"x","data":{"__proto__":{"admin":true},"ok":1}}');
    const task = await startScripted([{ data: { title: 'Proto', action }, mediaType: MEDIA_TYPE.approvalRequest }]);
    const [row] = await t.sql('select a.action, a.digest from approval a join task t on t.id = a.task_id where t.remote_task_id = $1', [task.remoteTaskId]);
    expect(row).toBeDefined();
    expect(Object.keys(row.action.data).sort()).toEqual(['__proto__', 'ok']); // jsonb orders keys its own way
    expect(Object.getPrototypeOf(row.action.data)).toBe(Object.prototype);
    // The agent's own digest (RFC 8785 JSON of the action as it sent it) is the one Taskbay records.
    expect(row.digest).toBe(createHash('sha256').update(canonicalize(action)!, 'utf8').digest('hex'));
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

it('an A2UI part over its limits names them', () => {
  const card: AgentCard = { name: 'a', supportedInterfaces: [], capabilities: { extensions: [{ uri: A2UI_EXTENSION }] }, skills: [] };
  const envelope = { version: 'v0.9', createSurface: { surfaceId: 's' } };
  const tooMany = Array.from({ length: A2UI_LIMITS.envelopesMax + 1 }, () => envelope);
  expect(ignoredParts([{ data: tooMany.slice(1), mediaType: MEDIA_TYPE.a2ui }], card)).toEqual([]);
  expect(ignoredParts([{ data: tooMany, mediaType: MEDIA_TYPE.a2ui }], card)).toEqual([
    'A2UI surface ignored: the part is not an array of 1 to 100 A2UI v0.9 envelopes of at most 256 KiB, nested at most 64 levels.',
  ]);
});
