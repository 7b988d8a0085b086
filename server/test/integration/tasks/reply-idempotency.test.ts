import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Variant } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import type { ReceivedMessage } from '../../../src/fixture-agent/tasks.js';
import { MESSAGE_LIMITS } from '../../../src/limits.js';
import { agentRegistry, codeOf, gqlOverHttp, startTestInstance, type HttpAnswer, type TestInstance } from '../../support/harness.js';

// Seed 003, "What the console supplies: ... idempotent delivery of the answer" (CONFORMANCE.md
// 003-supplies). An answer to a form or an A2UI surface reaches the agent once, however often
// and however concurrently it is submitted; free text does when sent with an idempotencyKey.
// Every mutation goes over real HTTP; what counts is what the fixture agent received.

let t: TestInstance;
let fixture: FixtureAgent;

/** Remote task ids whose next answer the agent holds (after processing it) until released. */
const holds = new Map<string, { entered: () => void; gate: Promise<void> }>();

beforeAll(async () => {
  fixture = await startFixtureAgent({
    beforeReply: async (m: ReceivedMessage) => {
      const h = holds.get(m.taskId);
      if (!h) return;
      holds.delete(m.taskId);
      h.entered();
      await h.gate;
    },
  });
  t = await startTestInstance({ worker: false });
});
afterAll(async () => {
  await t?.stop();
  await fixture?.close();
});

const registered = agentRegistry(() => t);
const TASK = `query($id: ID!) { task(id: $id) { id state messages { stepSeq messageId role parts } } }`;
const START = `mutation($agentId: ID!, $text: String) { startTask(input: { agentId: $agentId, text: $text }) { id state remoteTaskId } }`;
const SUBMIT = `mutation($taskId: ID!, $messageId: String!, $values: JSON!) {
  submitTaskForm(input: { taskId: $taskId, messageId: $messageId, values: $values }) { id state } }`;
const ACTION = `mutation($taskId: ID!, $messageId: String!, $action: JSON!) {
  sendA2uiAction(input: { taskId: $taskId, messageId: $messageId, action: $action }) { id state } }`;
const SEND = `mutation($taskId: ID!, $text: String, $key: String) {
  sendTaskMessage(input: { taskId: $taskId, text: $text, idempotencyKey: $key }) { id state } }`;

const STAGING = { environment: 'staging', replicas: 2 };
const PRODUCTION = { environment: 'production', replicas: 3 };

async function start(variant: Variant, text: string) {
  const r = await gqlOverHttp(t, START, { agentId: await registered(fixture.cardUrl(variant)), text });
  expect(r.body.errors).toBeUndefined();
  return r.body.data.startTask as { id: string; state: string; remoteTaskId: string };
}
async function transcript(taskId: string) {
  const r = await t.gql(TASK, { id: taskId });
  expect(r.errors).toBeUndefined();
  return r.data.task as { state: string; messages: { stepSeq: number; messageId: string; role: string; parts: any[] }[] };
}
const waitingOn = async (taskId: string) => (await transcript(taskId)).messages.filter((m) => m.role === 'AGENT').at(-1)!.messageId;
/** Every SendMessage the agent received on the task (retries of a known messageId included). */
const receivedOn = (remoteTaskId: string) => fixture.received.filter((r) => r.taskId === remoteTaskId);
/** Every SendMessage call that reached the variant, answered or refused. */
const sendCalls = (variant: Variant) => fixture.calls.filter((c) => c.variant === variant && c.method === 'SendMessage').length;
const reasonOf = (a: HttpAnswer) => a.body.errors?.[0]?.extensions?.reason;

function hold(remoteTaskId: string) {
  let entered!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((r) => (entered = r));
  holds.set(remoteTaskId, { entered, gate: new Promise<void>((r) => (release = r)) });
  return { arrived, release };
}

describe('a form answer reaches the agent once', () => {
  it('a second submission while the first is at the agent sends nothing and answers the task as it stands', async () => {
    const task = await start('form', 'deploy please');
    const messageId = await waitingOn(task.id);
    const calls = sendCalls('form');
    const held = hold(task.remoteTaskId);
    const first = gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: STAGING });
    await held.arrived;
    const second = await gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: STAGING });
    expect(second.status).toBe(200);
    expect(second.body.errors).toBeUndefined();
    expect(second.body.data.submitTaskForm.state).toBe('INPUT_REQUIRED');
    held.release();
    const answered = await first;
    expect(answered.body.errors).toBeUndefined();
    expect(answered.body.data.submitTaskForm.state).toBe('COMPLETED');
    expect(sendCalls('form')).toBe(calls + 1);
    expect(receivedOn(task.remoteTaskId).map((r) => [r.duplicate, r.message.parts])).toEqual([
      [false, [{ text: 'deploy please' }]],
      [false, [{ data: STAGING, mediaType: 'application/json' }]],
    ]);
  });

  it('ten simultaneous submissions, two sets of values: one reaches the agent; its values answer the task, the others are refused ALREADY_ANSWERED', async () => {
    const task = await start('form', 'deploy please');
    const messageId = await waitingOn(task.id);
    const calls = sendCalls('form');
    const values = Array.from({ length: 10 }, (_, i) => (i % 2 ? PRODUCTION : STAGING));
    const answers = await Promise.all(values.map((v) => gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: v })));
    expect(answers.map((a) => a.status)).toEqual(values.map(() => 200));
    expect(sendCalls('form')).toBe(calls + 1);
    const got = receivedOn(task.remoteTaskId);
    expect(got).toHaveLength(2);
    const sent = got[1]!.message.parts[0]!.data;
    for (const [i, a] of answers.entries()) {
      if (isDeepStrictEqual(values[i], sent)) {
        expect(a.body.errors, JSON.stringify(a.body.errors)).toBeUndefined();
      } else {
        expect(codeOf(a.body)).toBe('BAD_USER_INPUT');
        expect(reasonOf(a)).toBe('ALREADY_ANSWERED');
      }
    }
    const stored = await transcript(task.id);
    expect(stored.state).toBe('COMPLETED');
    expect(stored.messages.filter((m) => m.role === 'USER').map((m) => m.parts)).toEqual([
      [{ text: 'deploy please' }],
      [{ data: sent, mediaType: 'application/json' }],
    ]);
  });

  it('a retry of the same answer after it completed the task returns that result; other values are refused and change nothing', async () => {
    const task = await start('form', 'deploy please');
    const messageId = await waitingOn(task.id);
    const first = await gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: STAGING });
    expect(first.body.errors).toBeUndefined();
    const after = await transcript(task.id);
    const calls = sendCalls('form');

    const retry = await gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: { replicas: '2', environment: 'staging' } });
    expect(retry.body).toEqual(first.body);
    const other = await gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: PRODUCTION });
    expect(codeOf(other.body)).toBe('BAD_USER_INPUT');
    expect(reasonOf(other)).toBe('ALREADY_ANSWERED');
    expect(other.body.errors![0]!.message).toBe('this message was already answered with other values');

    expect(sendCalls('form')).toBe(calls);
    expect(await transcript(task.id)).toEqual(after);
  });

  it('a send the agent refused frees the answer: the retry reaches the agent', async () => {
    const task = await start('form', 'deploy please');
    const messageId = await waitingOn(task.id);
    fixture.failNext('form', 1, 503);
    const failed = await gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: STAGING });
    expect(reasonOf(failed)).toBe('AGENT_ERROR');
    const retry = await gqlOverHttp(t, SUBMIT, { taskId: task.id, messageId, values: PRODUCTION });
    expect(retry.body.errors).toBeUndefined();
    expect(retry.body.data.submitTaskForm.state).toBe('COMPLETED');
    expect(receivedOn(task.remoteTaskId).map((r) => r.message.parts)).toEqual([
      [{ text: 'deploy please' }],
      [{ data: PRODUCTION, mediaType: 'application/json' }],
    ]);
  });
});

describe('an A2UI action reaches the agent once', () => {
  it('the same action again returns the first result and sends nothing; another action is refused', async () => {
    const task = await start('a2ui', 'check');
    const messageId = await waitingOn(task.id);
    const action = { name: 'confirm_deploy', surfaceId: 'deploy-check', context: { environment: 'staging' } };
    const first = await gqlOverHttp(t, ACTION, { taskId: task.id, messageId, action });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.sendA2uiAction.state).toBe('COMPLETED');
    const calls = sendCalls('a2ui');
    expect(await gqlOverHttp(t, ACTION, { taskId: task.id, messageId, action })).toEqual(first);
    const other = await gqlOverHttp(t, ACTION, { taskId: task.id, messageId, action: { ...action, name: 'cancel' } });
    expect(reasonOf(other)).toBe('ALREADY_ANSWERED');
    expect(sendCalls('a2ui')).toBe(calls);
    expect(receivedOn(task.remoteTaskId)).toHaveLength(2);
  });
});

describe('free text with an idempotencyKey', () => {
  it('the same key and text reach the agent once; the key with other text is refused; without a key every send is a message', async () => {
    const task = await start('showcase', 'form');
    const send = (text: string, key?: string) => gqlOverHttp(t, SEND, { taskId: task.id, text, ...(key ? { key } : {}) });
    const answers = await Promise.all([send('more, please', 'k1'), send('more, please', 'k1'), send('more, please', 'k1')]);
    for (const a of answers) expect(a.body.errors, JSON.stringify(a.body.errors)).toBeUndefined();
    const texts = () => receivedOn(task.remoteTaskId).map((r) => r.message.parts[0]!.text);
    expect(texts()).toEqual(['form', 'more, please']);

    const reused = await send('something else', 'k1');
    expect(codeOf(reused.body)).toBe('BAD_USER_INPUT');
    expect(reasonOf(reused)).toBe('IDEMPOTENCY_KEY_REUSED');
    const tooLong = await send('x', 'k'.repeat(MESSAGE_LIMITS.idempotencyKeyMax + 1));
    expect(codeOf(tooLong.body)).toBe('BAD_USER_INPUT');
    expect(texts()).toEqual(['form', 'more, please']);

    expect((await send('again')).body.errors).toBeUndefined();
    expect((await send('again')).body.errors).toBeUndefined();
    expect((await send('more, please', 'k2')).body.errors).toBeUndefined();
    expect(texts()).toEqual(['form', 'more, please', 'again', 'again', 'more, please']);
  });
});
