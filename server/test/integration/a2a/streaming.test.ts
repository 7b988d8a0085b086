import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Variant } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import {
  OPS,
  agentRegistry,
  codeOf,
  hasEvent,
  idOf,
  nextBesides,
  probeRequests,
  startTestInstance,
  subscribe,
  untilProbeArrives,
  type TestInstance,
} from '../../support/harness.js';

// Streaming (docs/ARCHITECTURE.md "The flow" 2; seed 003 "Over streaming the events arrive as server-sent
// events, one JSON-RPC response per data: line"): the fixture agent in streaming mode.

let t: TestInstance;
let fixture: FixtureAgent;
let rest: FixtureAgent;

beforeAll(async () => {
  fixture = await startFixtureAgent({ streaming: true });
  rest = await startFixtureAgent({ streaming: true, httpJson: true });
  t = await startTestInstance({ worker: false });
});
afterAll(async () => {
  await t?.stop();
  await fixture?.close();
  await rest?.close();
});

const registered = agentRegistry(() => t);
const agentId = (variant: Variant) => registered(fixture.cardUrl(variant));

const TASK = `query($id: ID!) { task(id: $id) { state messages { stepSeq messageId role parts } statusHistory { state messageId } } }`;
const probes = probeRequests(() => t);
const methodsOf = (variant: Variant) => fixture.calls.filter((c) => c.variant === variant).map((c) => c.method);

describe('SendStreamingMessage', () => {
  it('the card says capabilities.streaming, so Taskbay streams: "TASK_STATE_WORKING, then a final status event", both stored', async () => {
    const card = await t.gql(`query($id: ID!) { agent(id: $id) { card { card } } }`, { id: await agentId('form') });
    expect(card.data.agent.card.card.capabilities.streaming).toBe(true);
    const r = await t.gql(OPS.startTask, { agentId: await agentId('form'), text: 'deploy' });
    expect(r.errors).toBeUndefined();
    expect(methodsOf('form')).toEqual(['SendStreamingMessage']);
    const task = (await t.gql(TASK, { id: r.data.startTask.id })).data.task;
    expect(task.state).toBe('INPUT_REQUIRED');
    expect(task.statusHistory.map((s: { state: string }) => s.state)).toEqual(['WORKING', 'INPUT_REQUIRED']);
    expect(task.messages.map((m: { stepSeq: number; role: string }) => [m.stepSeq, m.role])).toEqual([
      [1, 'USER'],
      [2, 'AGENT'],
    ]);
  });

  it('"events stored as they arrive": a request opened mid-stream reaches a graphql-ws subscriber before the stream ends', async () => {
    const agent = await agentId('approver');
    const sub = subscribe(t.ws(), `subscription($a: ID) { approvalRequested(agentId: $a) { id title status task { state } } }`, { a: agent });
    // Live once a person's request naming the agent (a probe) reaches it.
    await untilProbeArrives(async () => {
      const id = await probes.open({ agentId: agent });
      return () => hasEvent(sub, 'approvalRequested', id);
    });
    const release = fixture.holdStreams();
    let finished = false;
    const started = t.gql(OPS.startTask, { agentId: agent, text: 'approve' }).then((r) => {
      finished = true;
      return r;
    });
    try {
      const ev = await nextBesides(sub, (e) => probes.ids.has(idOf(e, 'approvalRequested')!));
      expect(ev.errors).toBeUndefined();
      expect(ev.data.approvalRequested).toMatchObject({ title: 'Delete the staging cluster', status: 'PENDING', task: { state: 'INPUT_REQUIRED' } });
      // The agent still holds the stream open, and startTask has not returned.
      expect(fixture.openStreams()).toBe(1);
      expect(finished).toBe(false);
    } finally {
      release();
    }
    const r = await started;
    expect(r.errors).toBeUndefined();
    expect(r.data.startTask.state).toBe('INPUT_REQUIRED');
    expect(fixture.openStreams()).toBe(0);
    sub.dispose();
  });

  it('"SubscribeToTask to resume a broken stream": a dropped stream is resumed without duplicate messages', async () => {
    fixture.dropNextStream('showcase');
    const r = await t.gql(OPS.startTask, { agentId: await agentId('showcase'), text: 'approve' });
    expect(r.errors).toBeUndefined();
    expect(methodsOf('showcase')).toEqual(['SendStreamingMessage', 'SubscribeToTask']);
    expect(r.data.startTask.state).toBe('INPUT_REQUIRED');
    const rows = await t.sql<{ message_id: string; step_seq: number; role: string }>(
      `select m.message_id, m.step_seq, m.role from task_message m join task t on t.id = m.task_id where t.remote_task_id = $1 order by step_seq`,
      [r.data.startTask.remoteTaskId],
    );
    // The user message arrived three times (sent, in the first task event's history, in the resumed task's history): stored once.
    expect(rows.map((m) => [m.step_seq, m.role])).toEqual([
      [1, 'ROLE_USER'],
      [2, 'ROLE_AGENT'],
    ]);
    expect(new Set(rows.map((m) => m.message_id)).size).toBe(2);
    const approvals = await t.sql(`select a.status from approval a join task t on t.id = a.task_id where t.remote_task_id = $1`, [
      r.data.startTask.remoteTaskId,
    ]);
    expect(approvals).toEqual([{ status: 'PENDING' }]);
  });

  it('a reply on a streaming task streams too, and GetTask (syncTask) resynchronises without adding messages', async () => {
    const r = await t.gql(OPS.startTask, { agentId: await agentId('plain'), text: 'hello' });
    const id = r.data.startTask.id;
    const reply = await t.gql(`mutation($id: ID!) { sendTaskMessage(input: { taskId: $id, text: "again" }) { state } }`, { id });
    expect(reply.data.sendTaskMessage.state).toBe('INPUT_REQUIRED');
    const sync = await t.gql(`mutation($id: ID!) { syncTask(taskId: $id) { state messages { stepSeq } } }`, { id });
    expect(sync.errors).toBeUndefined();
    expect(sync.data.syncTask.messages.map((m: { stepSeq: number }) => m.stepSeq)).toEqual([1, 2, 3, 4]);
    expect(methodsOf('plain')).toEqual(['SendStreamingMessage', 'SendStreamingMessage', 'GetTask']);
  });

  it('an agent refusing the stream before any event stores nothing and says why', async () => {
    const count = async () => Number((await t.sql('select count(*)::int as n from task'))[0].n);
    const before = await count();
    fixture.failNext('a2ui', 1, 503);
    const r = await t.gql(OPS.startTask, { agentId: await agentId('a2ui'), text: 'check' });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain('HTTP 503');
    expect(await count()).toBe(before);
  });
});

describe('streaming over the HTTP+JSON binding', () => {
  it('POST /message:stream, and a dropped stream resumed with GET /tasks/{id}:subscribe, without duplicate messages', async () => {
    const reg = await t.gql(OPS.register, { url: rest.cardUrl('approver') });
    rest.dropNextStream('approver');
    const r = await t.gql(OPS.startTask, { agentId: reg.data.registerAgent.id, text: 'approve' });
    expect(r.errors).toBeUndefined();
    expect(r.data.startTask.state).toBe('INPUT_REQUIRED');
    expect(rest.calls.map((c) => `${c.binding} ${c.method}`)).toEqual(['HTTP+JSON SendStreamingMessage', 'HTTP+JSON SubscribeToTask']);
    const rows = await t.sql(`select m.role from task_message m join task t on t.id = m.task_id where t.remote_task_id = $1 order by step_seq`, [
      r.data.startTask.remoteTaskId,
    ]);
    expect(rows.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
    const approvals = await t.sql(`select a.status from approval a join task t on t.id = a.task_id where t.remote_task_id = $1`, [
      r.data.startTask.remoteTaskId,
    ]);
    expect(approvals).toEqual([{ status: 'PENDING' }]);
  });
});
