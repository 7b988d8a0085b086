import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPE } from '../../../src/a2a/extensions.js';
import { DEPLOY_REQUEST_FORM, INVALID_FORM, NEW_DEPLOYMENT_START_FORM, a2uiSurface, type Variant } from '../../../src/fixture-agent/content.js';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { OPS, codeOf, type TestInstance, agentRegistry } from '../../support/harness.js';
import { startWithFixtureAgent, stopAll } from '../../support/fixture-agent.js';

// Seed 003 end to end: structured forms ("Ask for a form"), start forms ("Offer a start-of-task
// form") and A2UI actions ("Show an A2UI surface"), against real Postgres and the fixture agent.

let t: TestInstance;
let fixture: FixtureAgent;

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent({ worker: false }));
});
afterAll(() => stopAll(t, fixture));

const registered = agentRegistry(() => t);
const agentId = (variant: Variant) => registered(fixture.cardUrl(variant));

const TASK = `query($id: ID!) { task(id: $id) { id state messages { stepSeq messageId role parts form formPartIndex a2ui a2uiPartIndex } } }`;
const START = `mutation($agentId: ID!, $text: String, $formValues: JSON) {
  startTask(input: { agentId: $agentId, text: $text, formValues: $formValues }) { id state remoteTaskId } }`;
const SEND = `mutation($taskId: ID!, $text: String) { sendTaskMessage(input: { taskId: $taskId, text: $text }) { id state } }`;
const SUBMIT = `mutation($taskId: ID!, $messageId: String!, $values: JSON!) {
  submitTaskForm(input: { taskId: $taskId, messageId: $messageId, values: $values }) { id state } }`;
const ACTION = `mutation($taskId: ID!, $messageId: String!, $action: JSON!) {
  sendA2uiAction(input: { taskId: $taskId, messageId: $messageId, action: $action }) { id state } }`;

async function start(variant: Variant, text: string) {
  const r = await t.gql(START, { agentId: await agentId(variant), text });
  expect(r.errors).toBeUndefined();
  return r.data.startTask as { id: string; state: string; remoteTaskId: string };
}
async function messages(taskId: string) {
  const r = await t.gql(TASK, { id: taskId });
  expect(r.errors).toBeUndefined();
  return r.data.task.messages as {
    stepSeq: number;
    messageId: string;
    role: string;
    parts: any[];
    form: any;
    formPartIndex: number | null;
    a2ui: any;
    a2uiPartIndex: number | null;
  }[];
}
const lastAgent = async (taskId: string) => (await messages(taskId)).filter((m) => m.role === 'AGENT').at(-1)!;
const receivedOn = (remoteTaskId: string) => fixture.received.filter((r) => r.taskId === remoteTaskId && !r.duplicate);

describe('structured forms', () => {
  it('"a valid form is exposed on the task\'s message for the console to render": the Deploy request form of the form variant', async () => {
    const task = await start('form', 'deploy please');
    expect(task.state).toBe('INPUT_REQUIRED');
    const m = await lastAgent(task.id);
    expect(m.form).toEqual(DEPLOY_REQUEST_FORM);
    // The part itself stays stored as the agent sent it.
    expect(m.parts).toEqual([{ text: 'Where should I deploy?' }, { data: DEPLOY_REQUEST_FORM, mediaType: MEDIA_TYPE.form }]);
  });

  it('"The reply is a normal send on the same task, with one application/json data part holding only the declared keys, coerced to the declared types"', async () => {
    const task = await start('form', 'deploy please');
    const m = await lastAgent(task.id);
    const r = await t.gql(SUBMIT, {
      taskId: task.id,
      messageId: m.messageId,
      values: { environment: 'production', replicas: '3', dryRun: 'true', note: 'ship it', undeclared: 'dropped', constructor: 'x' },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data.submitTaskForm.state).toBe('COMPLETED');
    const sent = receivedOn(task.remoteTaskId);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.message.parts).toEqual([
      { data: { environment: 'production', replicas: 3, dryRun: true, note: 'ship it' }, mediaType: 'application/json' },
    ]);
    expect(sent[1]!.message.taskId).toBe(task.remoteTaskId);
    // The fixture validated again and completed with the coerced values.
    expect((await lastAgent(task.id)).parts[0].text).toBe('Deploy requested: the service to production with 3 replicas (dry run).');
  });

  it('"The console validates before sending": invalid values are refused per field and nothing reaches the agent', async () => {
    const task = await start('form', 'deploy please');
    const m = await lastAgent(task.id);
    const before = fixture.received.length;
    const r = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'moon', replicas: '11' } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(Object.keys(r.errors![0]!.extensions!.fieldErrors as object).sort()).toEqual(['environment', 'replicas']);
    const missing = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { replicas: 2 } });
    expect(codeOf(missing)).toBe('BAD_USER_INPUT');
    expect(missing.errors![0]!.extensions!.fieldErrors).toHaveProperty('environment');
    expect(fixture.received.length).toBe(before);
    expect((await messages(task.id)).length).toBe(2);
  });

  it('"The person can only use the form while the task is still waiting": refused once the task completed, and on a form the task no longer waits on', async () => {
    const task = await start('form', 'deploy please');
    const m = await lastAgent(task.id);
    const ok = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'staging', replicas: 2 } });
    expect(ok.data.submitTaskForm.state).toBe('COMPLETED');
    const before = fixture.received.length;
    // Other values for the answered form (the same values again: tasks/reply-idempotency.test.ts).
    const again = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'production', replicas: 2 } });
    expect(codeOf(again)).toBe('BAD_USER_INPUT');
    expect(again.errors![0]!.extensions!.reason).toBe('ALREADY_ANSWERED');

    // Showcase: a form, then the composer ("The composer stays available next to the form") moves on.
    const show = await start('showcase', 'form');
    const formMessage = await lastAgent(show.id);
    expect(formMessage.form).toEqual(DEPLOY_REQUEST_FORM);
    const moved = await t.gql(SEND, { taskId: show.id, text: 'something else' });
    expect(moved.data.sendTaskMessage.state).toBe('INPUT_REQUIRED');
    const stale = await t.gql(SUBMIT, { taskId: show.id, messageId: formMessage.messageId, values: { environment: 'staging', replicas: 2 } });
    expect(stale.errors![0]!.extensions!.reason).toBe('NOT_WAITING');
    expect(fixture.received.length).toBe(before + 2); // the showcase start and the composer send only
  });

  it('"A nested object, an unknown type, or more than 30 properties rejects the whole form, and the part is shown as ordinary data"', async () => {
    const task = await start('invalid', 'form');
    expect(task.state).toBe('INPUT_REQUIRED');
    const m = await lastAgent(task.id);
    expect(m.form).toBeNull();
    expect(m.parts[1].mediaType).toBe(MEDIA_TYPE.form);
    expect(m.parts[1].data.schema.properties.target.type).toBe('object');
    const r = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'staging' } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(receivedOn(task.remoteTaskId)).toHaveLength(1);
  });

  it('"If the card does not list it, the console treats the content as ordinary data": plain sends the form without advertising it', async () => {
    const task = await start('plain', 'form');
    const m = await lastAgent(task.id);
    expect(m.parts[1]).toEqual({ data: DEPLOY_REQUEST_FORM, mediaType: MEDIA_TYPE.form });
    expect(m.form).toBeNull();
    const r = await t.gql(SUBMIT, { taskId: task.id, messageId: m.messageId, values: { environment: 'staging', replicas: 2 } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
  });
});

describe('start forms', () => {
  it('"Put a form definition in the extension entry\'s params.startForm": exposed on the agent', async () => {
    const r = await t.gql(`query($id: ID!) { agent(id: $id) { startForm } }`, { id: await agentId('form') });
    expect(r.data.agent.startForm).toEqual(NEW_DEPLOYMENT_START_FORM);
    const none = await t.gql(`query($id: ID!) { agent(id: $id) { startForm } }`, { id: await agentId('approver') });
    expect(none.data.agent.startForm).toBeNull();
  });

  it('"sends the submission as the first message with one application/json data part"', async () => {
    const r = await t.gql(START, { agentId: await agentId('form'), formValues: { service: 'api', environment: 'staging', replicas: '4', bogus: 1 } });
    expect(r.errors).toBeUndefined();
    const task = r.data.startTask;
    const first = receivedOn(task.remoteTaskId);
    expect(first).toHaveLength(1);
    expect(first[0]!.message.parts).toEqual([{ data: { service: 'api', environment: 'staging', replicas: 4 }, mediaType: 'application/json' }]);
    expect(task.state).toBe('COMPLETED');
    expect((await lastAgent(task.id)).parts[0].text).toBe('Deploy requested: api to staging with 4 replicas.');
  });

  it('typed text sent with start-form values reaches the agent as a text part next to the data part (docs/choices.md "text may accompany them")', async () => {
    const typed = '  Deploy the api, please.\nThanks  ';
    const r = await t.gql(START, { agentId: await agentId('form'), text: typed, formValues: { service: 'api', environment: 'staging', replicas: '4' } });
    expect(r.errors).toBeUndefined();
    const first = receivedOn(r.data.startTask.remoteTaskId);
    expect(first).toHaveLength(1);
    expect(first[0]!.message.parts).toEqual([
      { text: typed },
      { data: { service: 'api', environment: 'staging', replicas: 4 }, mediaType: 'application/json' },
    ]);
    // Stored as sent: the transcript shows both parts too.
    const stored = (await messages(r.data.startTask.id)).find((m) => m.role === 'USER')!;
    expect(stored.parts).toEqual(first[0]!.message.parts);
  });

  it('invalid start-form values are refused before anything is sent or stored; an agent without a start form refuses formValues', async () => {
    const before = fixture.received.length;
    const tasks = async () => Number((await t.sql('select count(*)::int as n from task'))[0].n);
    const count = await tasks();
    const bad = await t.gql(START, { agentId: await agentId('form'), formValues: { environment: 'staging' } });
    expect(codeOf(bad)).toBe('BAD_USER_INPUT');
    expect(bad.errors![0]!.extensions!.fieldErrors).toHaveProperty('service');
    const none = await t.gql(START, { agentId: await agentId('approver'), formValues: { service: 'api' } });
    expect(codeOf(none)).toBe('BAD_USER_INPUT');
    expect(fixture.received.length).toBe(before);
    expect(await tasks()).toBe(count);
  });
});

describe('A2UI', () => {
  it('"an application/a2ui+json part (an array of v0.9 envelopes) is stored and exposed for the console", hostile content included as data', async () => {
    for (const [variant, text] of [
      ['a2ui', 'check'],
      ['showcase', 'surface'],
    ] as const) {
      const task = await start(variant, text);
      const m = await lastAgent(task.id);
      expect(m.a2ui).toEqual(a2uiSurface());
      expect(JSON.stringify(m.a2ui)).toContain('<img src=x onerror=');
      expect(JSON.stringify(m.a2ui)).toContain('https://login.example-phish.test/verify');
      expect(m.form).toBeNull();
    }
  });

  it('"A button with an action.event sends back one data part of media type application/a2ui+json containing an action object"', async () => {
    const task = await start('a2ui', 'check');
    const m = await lastAgent(task.id);
    const context = { environment: 'staging', dryRun: true, size: 'small' };
    const r = await t.gql(ACTION, {
      taskId: task.id,
      messageId: m.messageId,
      action: { name: 'confirm_deploy', surfaceId: 'deploy-check', sourceComponentId: 'confirm', timestamp: '2026-11-30T00:00:00.000Z', context, script: 'x' },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data.sendA2uiAction.state).toBe('COMPLETED');
    const sent = receivedOn(task.remoteTaskId)[1]!.message;
    expect(sent.parts).toHaveLength(1);
    expect(sent.parts[0]).toEqual({
      mediaType: MEDIA_TYPE.a2ui,
      data: {
        version: 'v0.9',
        action: { name: 'confirm_deploy', surfaceId: 'deploy-check', sourceComponentId: 'confirm', timestamp: '2026-11-30T00:00:00.000Z', context },
      },
    });
    // "the fixture reads data.action.context"
    expect((await lastAgent(task.id)).parts[0].text).toBe(`Received confirm_deploy with context ${JSON.stringify(context)}.`);
  });

  it('not advertised (plain) or not envelopes (invalid): ordinary data, and no action can be sent on it', async () => {
    for (const variant of ['plain', 'invalid'] as const) {
      const task = await start(variant, 'surface');
      expect(task.state).toBe('INPUT_REQUIRED');
      const m = await lastAgent(task.id);
      expect(m.parts[1].mediaType).toBe(MEDIA_TYPE.a2ui);
      expect(m.a2ui).toBeNull();
      const r = await t.gql(ACTION, { taskId: task.id, messageId: m.messageId, action: { name: 'confirm_deploy', surfaceId: 'deploy-check' } });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(receivedOn(task.remoteTaskId)).toHaveLength(1);
    }
  });

  it('an action without a name or surface is refused, and nothing is sent', async () => {
    const task = await start('a2ui', 'check');
    const m = await lastAgent(task.id);
    const r = await t.gql(ACTION, { taskId: task.id, messageId: m.messageId, action: { context: {} } });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(receivedOn(task.remoteTaskId)).toHaveLength(1);
  });
});

// Docs/CONFORMANCE.md G2: the server names the part it chose, so the console renders that part
// as the form (or surface) and every other part, a second one of the same kind included, as data.
describe('two parts of one kind', () => {
  const scriptedReply = (parts: unknown[]) => ({ reply: { state: 'TASK_STATE_INPUT_REQUIRED', parts } });
  async function startScripted(parts: unknown[]) {
    const r = await t.gql(OPS.startTask, { agentId: await agentId('scripted'), data: scriptedReply(parts) });
    expect(r.errors).toBeUndefined();
    return r.data.startTask as { id: string };
  }
  const otherForm = { ...DEPLOY_REQUEST_FORM, title: 'A second valid form' };

  it('formPartIndex and a2uiPartIndex name the first valid part of each kind; invalid and later parts are not chosen', async () => {
    const task = await startScripted([
      { text: 'Pick one.' },
      { data: INVALID_FORM, mediaType: MEDIA_TYPE.form },
      { data: { createSurface: { surfaceId: 'x' } }, mediaType: MEDIA_TYPE.a2ui },
      { data: DEPLOY_REQUEST_FORM, mediaType: MEDIA_TYPE.form },
      { data: a2uiSurface('first'), mediaType: MEDIA_TYPE.a2ui },
      { data: otherForm, mediaType: MEDIA_TYPE.form },
      { data: a2uiSurface('second'), mediaType: MEDIA_TYPE.a2ui },
    ]);
    const m = await lastAgent(task.id);
    expect(m.form).toEqual(DEPLOY_REQUEST_FORM);
    expect(m.formPartIndex).toBe(3);
    expect(m.a2ui).toEqual(a2uiSurface('first'));
    expect(m.a2uiPartIndex).toBe(4);
    // A person's own message offers nothing: no index either.
    const mine = (await messages(task.id)).find((x) => x.role === 'USER')!;
    expect([mine.form, mine.formPartIndex, mine.a2ui, mine.a2uiPartIndex]).toEqual([null, null, null, null]);
  });

  it('a message with only invalid parts of a kind has no index for it', async () => {
    const task = await startScripted([
      { data: INVALID_FORM, mediaType: MEDIA_TYPE.form },
      { data: { createSurface: { surfaceId: 'x' } }, mediaType: MEDIA_TYPE.a2ui },
    ]);
    const m = await lastAgent(task.id);
    expect([m.form, m.formPartIndex, m.a2ui, m.a2uiPartIndex]).toEqual([null, null, null, null]);
  });
});
