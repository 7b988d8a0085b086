import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPE, SKILL_ROUTING_EXTENSION } from '../../../src/a2a/extensions.js';
import { APPROVAL_REQUEST, APPROVAL_REQUEST_SEND_DATA, DEPLOY_REQUEST_FORM, a2uiSurface, type Variant } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { OPS, codeOf, createMember, startTestInstance, type TestInstance, agentRegistry } from '../../support/harness.js';

// Seed 003 "Walkthrough: the fixture agent": for each variant, what the console stores and
// exposes. "The plain, invalid, rogue and unknown variants are the failure cases: they show what
// happens when an agent sends content it did not advertise or that is invalid." They fall back to
// ordinary data and never fail an observation. Also skill routing, CancelTask and GetTask.

let t: TestInstance;
let fixture: FixtureAgent;
let routed: FixtureAgent;
let rest: FixtureAgent;

beforeAll(async () => {
  fixture = await startFixtureAgent();
  routed = await startFixtureAgent({ skillRouting: true });
  rest = await startFixtureAgent({ httpJson: true });
  t = await startTestInstance({ worker: false });
});
afterAll(async () => {
  await t?.stop();
  await fixture?.close();
  await routed?.close();
  await rest?.close();
});

const agentId = agentRegistry(() => t);

const TASK = `query($id: ID!) { task(id: $id) { state messages { role parts form a2ui } } }`;

interface Case {
  variant: Variant;
  text: string;
  approval: Record<string, unknown> | null;
  form: unknown;
  a2ui: unknown;
}
const CASES: Case[] = [
  { variant: 'showcase', text: 'approve', approval: { title: APPROVAL_REQUEST.title, action: APPROVAL_REQUEST.action }, form: null, a2ui: null },
  { variant: 'showcase', text: 'approve data', approval: { title: APPROVAL_REQUEST_SEND_DATA.title }, form: null, a2ui: null },
  { variant: 'showcase', text: 'form', approval: null, form: DEPLOY_REQUEST_FORM, a2ui: null },
  { variant: 'showcase', text: 'surface', approval: null, form: null, a2ui: a2uiSurface() },
  { variant: 'form', text: 'deploy', approval: null, form: DEPLOY_REQUEST_FORM, a2ui: null },
  { variant: 'approver', text: 'approve', approval: { title: APPROVAL_REQUEST.title }, form: null, a2ui: null },
  { variant: 'a2ui', text: 'hello', approval: null, form: null, a2ui: a2uiSurface() },
  // Failure variants: ordinary data, the observation still succeeds.
  { variant: 'plain', text: 'approve', approval: null, form: null, a2ui: null },
  { variant: 'plain', text: 'form', approval: null, form: null, a2ui: null },
  { variant: 'plain', text: 'surface', approval: null, form: null, a2ui: null },
  { variant: 'invalid', text: 'approve', approval: null, form: null, a2ui: null },
  { variant: 'invalid', text: 'form', approval: null, form: null, a2ui: null },
  { variant: 'invalid', text: 'surface', approval: null, form: null, a2ui: null },
  // Rogue's request is valid; the fields naming reviewers, policy and status are not read.
  {
    variant: 'rogue',
    text: 'approve',
    approval: { title: 'Rotate the production database password', assignee_id: null, status: 'PENDING' },
    form: null,
    a2ui: null,
  },
  { variant: 'unknown', text: 'approve', approval: null, form: null, a2ui: null },
];

describe('every fixture variant: what the console stores and exposes', () => {
  it.each(CASES)('$variant "$text"', async (c) => {
    const r = await t.gql(OPS.startTask, { agentId: await agentId(fixture.cardUrl(c.variant)), text: c.text });
    expect(r.errors).toBeUndefined();
    expect(r.data.startTask.state).toBe('INPUT_REQUIRED');
    const task = (await t.gql(TASK, { id: r.data.startTask.id })).data.task;
    expect(task.messages.map((m: { role: string }) => m.role)).toEqual(['USER', 'AGENT']);
    const agentMessage = task.messages[1];
    // Stored as the agent sent it, part for part.
    expect(agentMessage.parts).toEqual(fixture.getTask(r.data.startTask.remoteTaskId)!.status.message!.parts);
    expect(agentMessage.form).toEqual(c.form);
    expect(agentMessage.a2ui).toEqual(c.a2ui);
    const [local] = await t.sql<{ id: string }>('select id from task where remote_task_id = $1', [r.data.startTask.remoteTaskId]);
    const approvals = await t.sql('select title, status, assignee_id, action from approval where task_id = $1', [local!.id]);
    if (c.approval) {
      expect(approvals).toHaveLength(1);
      expect(approvals[0]).toMatchObject(c.approval);
    } else {
      expect(approvals).toHaveLength(0);
    }
  });

  it('unknown media types stay ordinary data, stored intact', async () => {
    const r = await t.gql(OPS.startTask, { agentId: await agentId(fixture.cardUrl('unknown')), text: 'approve' });
    const task = (await t.gql(TASK, { id: r.data.startTask.id })).data.task;
    expect(task.messages[1].parts.filter((p: { mediaType?: string }) => p.mediaType === 'application/x-unknown+json')).toHaveLength(2);
    expect(task.messages[1].parts.some((p: { mediaType?: string }) => p.mediaType === MEDIA_TYPE.approvalRequest)).toBe(true);
  });
});

describe('the reference answers both methods', () => {
  it('"answers SendMessage and SendStreamingMessage": a card without capabilities.streaming still streams "TASK_STATE_WORKING, then a final status event"', async () => {
    const res = await fetch(fixture.a2aUrl('showcase'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'SendStreamingMessage',
        params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'approve' }] } },
      }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // "one JSON-RPC response per data: line"
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)) as { id: number; result: Record<string, any> });
    expect(events.every((e) => e.id === 7)).toBe(true);
    const states = events.map((e) => e.result.task?.status.state ?? e.result.statusUpdate?.status.state);
    expect(states[0]).toBe('TASK_STATE_WORKING');
    expect(states.at(-1)).toBe('TASK_STATE_INPUT_REQUIRED');
  });
});

describe('"Every reply is an A2A task update: TASK_STATE_WORKING, then a final status event" (SendMessage)', () => {
  // Straight to the agent over JSON-RPC, as any A2A v1.0 client could. Runs of `held` wait in
  // WORKING (its whileWorking hook) until the test lets them go, so the order is observable.
  let held: FixtureAgent;
  let pusher: FixtureAgent;
  let onWorking: (taskId: string) => Promise<void> = async () => {};
  beforeAll(async () => {
    held = await startFixtureAgent({ whileWorking: (taskId) => onWorking(taskId) });
    pusher = await startFixtureAgent({ push: true });
  });
  afterAll(async () => {
    await held?.close();
    await pusher?.close();
  });

  /** The next run waits in WORKING: `reached` resolves with its task id once it waits there. */
  function holdNextRun() {
    let entered!: (taskId: string) => void;
    let release!: () => void;
    const reached = new Promise<string>((resolve) => (entered = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    onWorking = async (taskId) => {
      onWorking = async () => {};
      entered(taskId);
      await released;
    };
    return { reached, release };
  }
  const rpc = (agent: FixtureAgent, method: string, params: unknown) =>
    fetch(agent.a2aUrl('showcase'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
  const call = async (agent: FixtureAgent, method: string, params: unknown) => (await (await rpc(agent, method, params)).json()) as Record<string, any>;
  /** SSE results (one JSON-RPC response per event), read as they arrive; null once the stream ended. */
  const events = (res: Response) => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
    return async (): Promise<Record<string, any> | null> => {
      const { value, done } = await reader.read();
      return done ? null : JSON.parse(value.data).result;
    };
  };
  const stateOf = (result: Record<string, any> | null) => result?.task?.status.state ?? result?.statusUpdate?.status.state;
  const msg = (text: string, taskId?: string) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) });
  const approvalPartOf = (status: Record<string, any>) => status.message.parts.find((p: { mediaType?: string }) => p.mediaType === MEDIA_TYPE.approvalRequest);

  it('non-blocking (returnImmediately): answered with the WORKING Task; GetTask and SubscribeToTask then show the final status event', async () => {
    const hold = holdNextRun();
    const sent = await call(held, 'SendMessage', { message: msg('approve'), configuration: { returnImmediately: true } });
    expect(sent.result.task.status.state).toBe('TASK_STATE_WORKING');
    const taskId: string = sent.result.task.id;
    expect(await hold.reached).toBe(taskId);
    expect((await call(held, 'GetTask', { id: taskId })).result.status.state).toBe('TASK_STATE_WORKING');
    const next = events(await rpc(held, 'SubscribeToTask', { id: taskId }));
    expect(stateOf(await next())).toBe('TASK_STATE_WORKING');
    hold.release();
    const final = await next();
    expect(final?.statusUpdate.taskId).toBe(taskId);
    expect(stateOf(final)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(approvalPartOf(final!.statusUpdate.status).data).toEqual(APPROVAL_REQUEST);
    expect(await next()).toBeNull();
    const got = (await call(held, 'GetTask', { id: taskId })).result;
    expect(got.status).toEqual(final!.statusUpdate.status);
  });

  it('blocking (the default): answered with the final Task; a client subscribed meanwhile sees WORKING, then the final status event', async () => {
    const first = await call(held, 'SendMessage', { message: msg('hello') });
    expect(first.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const taskId: string = first.result.task.id;
    // Nothing under way: SubscribeToTask answers with the Task alone.
    const idle = events(await rpc(held, 'SubscribeToTask', { id: taskId }));
    expect(stateOf(await idle())).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(await idle()).toBeNull();

    const hold = holdNextRun();
    const answer = call(held, 'SendMessage', { message: msg('approve', taskId) });
    expect(await hold.reached).toBe(taskId);
    const next = events(await rpc(held, 'SubscribeToTask', { id: taskId }));
    expect(stateOf(await next())).toBe('TASK_STATE_WORKING');
    hold.release();
    const final = await next();
    expect(stateOf(final)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(await next()).toBeNull();
    const answered = (await answer).result.task;
    expect(answered.status).toEqual(final!.statusUpdate.status);
    expect(approvalPartOf(answered.status).data).toEqual(APPROVAL_REQUEST);
  });

  it('blocking with a push config: WORKING, then the final status event, are pushed in order', async () => {
    const pushed: { token: unknown; body: Record<string, any> }[] = [];
    let twoArrived!: () => void;
    const two = new Promise<void>((resolve) => (twoArrived = resolve));
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        pushed.push({ token: req.headers['x-a2a-notification-token'], body: JSON.parse(body) });
        res.end();
        if (pushed.length === 2) twoArrived();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const config = { taskPushNotificationConfig: { url, token: 'push-token' }, returnImmediately: false };
      const sent = await call(pusher, 'SendMessage', { message: msg('approve'), configuration: config });
      expect(sent.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      await two;
      expect(pushed.map((p) => p.token)).toEqual(['push-token', 'push-token']);
      expect(pushed.map((p) => p.body.statusUpdate.taskId)).toEqual([sent.result.task.id, sent.result.task.id]);
      expect(pushed.map((p) => stateOf(p.body))).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED']);
      expect(pushed[1]!.body.statusUpdate.status).toEqual(sent.result.task.status);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('a returnImmediately that is not a boolean is refused, and nothing is stored', async () => {
    const before = held.received.length;
    const r = await call(held, 'SendMessage', { message: msg('approve'), configuration: { returnImmediately: 'yes' } });
    expect(r.error).toMatchObject({ code: -32602, message: 'configuration.returnImmediately must be a boolean' });
    expect(held.received.length).toBe(before);
  });
});

describe('skill routing', () => {
  // Straight to the routed fixture over JSON-RPC, as any client could send it; `route` is the
  // request metadata under the skill-routing URI (a { skillId } object, or anything a client sends).
  const sendRouted = async (message: Record<string, unknown>, route?: unknown) => {
    const res = await fetch(routed.a2aUrl('showcase'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message, ...(route !== undefined ? { metadata: { [SKILL_ROUTING_EXTENSION]: route } } : {}) },
      }),
    });
    return (await res.json()) as { result?: { task: { id: string; contextId: string } }; error?: { code: number; message: string } };
  };
  const send = (message: Record<string, unknown>, skillId?: string) => sendRouted(message, skillId ? { skillId } : undefined);
  const msg = (text: string, task?: { id: string; contextId: string }) => ({
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(task ? { taskId: task.id, contextId: task.contextId } : {}),
  });

  it('"the console sets request metadata under that URI to { "skillId": "<id>" } on sends restricted to one skill"', async () => {
    const agent = await agentId(routed.cardUrl('showcase'));
    const r = await t.gql(OPS.startTask, { agentId: agent, text: 'hello', skillId: 'deploy' });
    expect(r.errors).toBeUndefined();
    const first = routed.received.find((m) => m.taskId === r.data.startTask.remoteTaskId)!;
    expect(first.requestMetadata).toEqual({ [SKILL_ROUTING_EXTENSION]: { skillId: 'deploy' } });
    expect(first.headers['a2a-extensions']).toContain(SKILL_ROUTING_EXTENSION);
    // Replies on that task carry the route too.
    await t.gql(`mutation($id: ID!) { sendTaskMessage(input: { taskId: $id, text: "again" }) { state } }`, { id: r.data.startTask.id });
    const second = routed.received.filter((m) => m.taskId === r.data.startTask.remoteTaskId)[1]!;
    expect(second.requestMetadata).toEqual({ [SKILL_ROUTING_EXTENSION]: { skillId: 'deploy' } });
    // Unrestricted send: no routing metadata.
    const free = await t.gql(OPS.startTask, { agentId: agent, text: 'hello' });
    expect(routed.received.find((m) => m.taskId === free.data.startTask.remoteTaskId)!.requestMetadata).toBeUndefined();
  });

  it('the fixture "must enforce the route ... and keep the new context inside the skill": a follow-up routed elsewhere, or not at all, is refused', async () => {
    const started = await send(msg('hello'), 'deploy');
    expect(started.error).toBeUndefined();
    const task = started.result!.task;
    expect((await send(msg('now clean up', task), 'cleanup')).error?.message).toMatch(/routed to skill deploy/);
    expect((await send(msg('no route', task))).error?.message).toMatch(/routed to skill deploy/);
    expect((await send(msg('still deploying', task), 'deploy')).error).toBeUndefined();
    // A task started unrestricted stays unrestricted.
    const free = (await send(msg('hello'))).result!.task;
    expect((await send(msg('into a skill', free), 'deploy')).error?.message).toMatch(/routed to no skill/);
    expect((await send(msg('again', free))).error).toBeUndefined();
  });

  it('the fixture must "reject unsupported skills": a message routed to a skill its card does not list is refused and starts or changes nothing', async () => {
    const card = (await (await fetch(routed.cardUrl('showcase'))).json()) as { skills: { id: string }[]; capabilities: { extensions: { uri: string }[] } };
    expect(card.capabilities.extensions.map((e) => e.uri)).toContain(SKILL_ROUTING_EXTENSION);
    const listed = card.skills.map((s) => s.id);
    expect(listed).not.toContain('exfiltrate');
    const before = routed.received.length;
    for (const route of [{ skillId: 'exfiltrate' }, { skillId: 'Deploy' }, { skillId: '' }, { skillId: 7 }, 'deploy', null]) {
      const refused = await sendRouted(msg('hello'), route);
      expect(refused.result, JSON.stringify(route)).toBeUndefined();
      expect(refused.error).toMatchObject({ code: -32602, message: expect.stringMatching(/unsupported skill/) });
    }
    // A follow-up on a routed task, to a skill the card does not list: refused too.
    const task = (await send(msg('hello'), listed[0])).result!.task;
    expect((await send(msg('elsewhere', task), 'exfiltrate')).error?.message).toMatch(/unsupported skill exfiltrate/);
    // Nothing of the refused messages reached the agent's record; each listed skill is accepted.
    expect(routed.received.length).toBe(before + 1);
    for (const skill of listed) expect((await send(msg('hello'), skill)).error, skill).toBeUndefined();
  });

  it('"Without this extension administrators can only grant whole-agent access": no metadata is set when the card does not advertise it', async () => {
    const r = await t.gql(OPS.startTask, { agentId: await agentId(fixture.cardUrl('showcase')), text: 'hello', skillId: 'deploy' });
    expect(r.errors).toBeUndefined();
    const first = fixture.received.find((m) => m.taskId === r.data.startTask.remoteTaskId)!;
    expect(first.requestMetadata).toBeUndefined();
    expect(first.headers['a2a-extensions'] ?? '').not.toContain(SKILL_ROUTING_EXTENSION);
  });

  it('"grants limited to a skill only reach tasks of that skill"', async () => {
    const agent = await agentId(routed.cardUrl('showcase'));
    const member = await createMember(t);
    const g = await t.gql(OPS.grant, { userId: member.id, agentId: agent, permission: 'OPERATE', skillId: 'deploy' });
    expect(g.errors).toBeUndefined();
    const ok = await t.gql(OPS.startTask, { agentId: agent, text: 'hi', skillId: 'deploy' }, member.token);
    expect(ok.errors).toBeUndefined();
    const other = await t.gql(OPS.startTask, { agentId: agent, text: 'hi', skillId: 'cleanup' }, member.token);
    expect(codeOf(other)).toBe('FORBIDDEN');
    const whole = await t.gql(OPS.startTask, { agentId: agent, text: 'hi' }, member.token);
    expect(codeOf(whole)).toBe('FORBIDDEN');
    const adminTask = await t.gql(OPS.startTask, { agentId: agent, text: 'hi', skillId: 'cleanup' });
    const seen = await t.gql(`query($id: ID!) { task(id: $id) { id } }`, { id: adminTask.data.startTask.id }, member.token);
    expect(seen.data.task).toBeNull();
  });
});

describe('CancelTask and GetTask from the console', () => {
  it('cancelTask sends CancelTask, stores CANCELED and supersedes the open approval; a second cancel is refused', async () => {
    const r = await t.gql(OPS.startTask, { agentId: await agentId(fixture.cardUrl('approver')), text: 'approve' });
    const id = r.data.startTask.id;
    const c = await t.gql(`mutation($id: ID!) { cancelTask(taskId: $id) { state statusHistory { state } } }`, { id });
    expect(c.errors).toBeUndefined();
    expect(c.data.cancelTask.state).toBe('CANCELED');
    expect(c.data.cancelTask.statusHistory.map((s: { state: string }) => s.state)).toEqual(['INPUT_REQUIRED', 'CANCELED']);
    expect(fixture.getTask(r.data.startTask.remoteTaskId)!.status.state).toBe('TASK_STATE_CANCELED');
    const [local] = await t.sql<{ id: string }>('select id from task where remote_task_id = $1', [r.data.startTask.remoteTaskId]);
    expect(await t.sql('select status from approval where task_id = $1', [local!.id])).toEqual([{ status: 'SUPERSEDED' }]);
    const again = await t.gql(`mutation($id: ID!) { cancelTask(taskId: $id) { state } }`, { id });
    expect(codeOf(again)).toBe('BAD_USER_INPUT');
  });

  it('cancelTask needs OPERATE; syncTask (GetTask) needs VIEW and adds nothing that is already stored', async () => {
    const agent = await agentId(fixture.cardUrl('plain'));
    const r = await t.gql(OPS.startTask, { agentId: agent, text: 'hello' });
    const id = r.data.startTask.id;
    const viewer = await createMember(t);
    await t.gql(OPS.grant, { userId: viewer.id, agentId: agent, permission: 'VIEW' });
    expect(codeOf(await t.gql(`mutation($id: ID!) { cancelTask(taskId: $id) { state } }`, { id }, viewer.token))).toBe('FORBIDDEN');
    const s = await t.gql(`mutation($id: ID!) { syncTask(taskId: $id) { state messages { stepSeq } } }`, { id }, viewer.token);
    expect(s.errors).toBeUndefined();
    expect(s.data.syncTask).toEqual({ state: 'INPUT_REQUIRED', messages: [{ stepSeq: 1 }, { stepSeq: 2 }] });
    const stranger = await createMember(t);
    expect(codeOf(await t.gql(`mutation($id: ID!) { syncTask(taskId: $id) { state } }`, { id }, stranger.token))).toBe('NOT_FOUND');
  });
});

describe('HTTP+JSON binding', () => {
  it('"the HTTP+JSON binding when it is the agent\'s preferred interface": SendMessage, GetTask and CancelTask go to the REST routes', async () => {
    const agent = await agentId(rest.cardUrl('approver'));
    const card = await t.gql(`query($id: ID!) { agent(id: $id) { card { card } } }`, { id: agent });
    expect(card.data.agent.card.card.supportedInterfaces.map((i: { protocolBinding: string }) => i.protocolBinding)).toEqual(['HTTP+JSON', 'JSONRPC']);
    const r = await t.gql(OPS.startTask, { agentId: agent, text: 'approve' });
    expect(r.errors).toBeUndefined();
    expect(r.data.startTask.state).toBe('INPUT_REQUIRED');
    const [local] = await t.sql<{ id: string }>('select id from task where remote_task_id = $1', [r.data.startTask.remoteTaskId]);
    expect(await t.sql('select status from approval where task_id = $1', [local!.id])).toEqual([{ status: 'PENDING' }]);
    const first = rest.received.find((m) => m.taskId === r.data.startTask.remoteTaskId)!;
    expect(first.headers['a2a-version']).toBe('1.0');
    const sync = await t.gql(`mutation($id: ID!) { syncTask(taskId: $id) { state } }`, { id: r.data.startTask.id });
    expect(sync.data.syncTask.state).toBe('INPUT_REQUIRED');
    const cancel = await t.gql(`mutation($id: ID!) { cancelTask(taskId: $id) { state } }`, { id: r.data.startTask.id });
    expect(cancel.data.cancelTask.state).toBe('CANCELED');
    expect(rest.calls.map((c) => `${c.binding} ${c.method}`)).toEqual(['HTTP+JSON SendMessage', 'HTTP+JSON GetTask', 'HTTP+JSON CancelTask']);
  });

  it('an HTTP error from the REST interface refuses the start and stores nothing', async () => {
    const agent = await agentId(rest.cardUrl('plain'));
    const count = async () => Number((await t.sql('select count(*)::int as n from task'))[0].n);
    const before = await count();
    rest.failNext('plain', 1, 502);
    const r = await t.gql(OPS.startTask, { agentId: agent, text: 'hello' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain('HTTP 502');
    expect(await count()).toBe(before);
  });
});
