import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { print, type DocumentNode } from 'graphql';
import { formatDocument } from '@urql/core';
import { startAgUiFixture, type AgUiFixture } from '../../../src/fixture-agent/agui.js';
import type { AgUiScenario } from '../../../src/fixture-agent/agui-scenarios.js';
import { A2A_STREAM_LIMITS, AGUI_LIMITS, TASK_LIMITS, TRANSCRIPT_READ_LIMITS } from '../../../src/limits.js';
import { TaskEarlierMessagesDocument, TaskPageDocument } from '../../../../web/src/gql/graphql.js';
import { startHostileA2aAgent, type HostileAgent, type HostilePlan } from '../../support/hostile-a2a-agent.js';
import { agentRegistry, codeOf, OPS, startTestInstance, type GqlResult, type TestInstance, rawId } from '../../support/harness.js';

// Issue 22, finding 7 and the stream parts of finding 9, reproduced as they were found: a hostile
// A2A agent over real HTTP floods one startTask (6,000 new messages in 30 events; 30 events just
// under the 4 MiB event bound; endless SSE comments; 6,000 events) and the task page is read with
// aliases; an AG-UI agent sends state 3,000 and 40,000 levels deep and endless comments. Each one
// grew the task (or the read) without bound or failed with an internal error; now the stream ends
// at its bound, the task keeps what fits and says why, and a read is bounded.

let t: TestInstance;
let hostile: HostileAgent;
let agui: AgUiFixture;
const registered = agentRegistry(() => t);

beforeAll(async () => {
  hostile = await startHostileA2aAgent();
  agui = await startAgUiFixture();
  t = await startTestInstance({ worker: false });
});
afterAll(async () => {
  await t?.stop();
  await hostile?.close();
  await agui?.close();
});

async function startFlood(name: string, plan: HostilePlan) {
  const agentId = await registered(hostile.plan(name, plan));
  const r = await t.gql(OPS.startTask, { agentId, text: 'go' });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return { agentId, gid: r.data.startTask.id as string, id: rawId(r.data.startTask.id), state: r.data.startTask.state as string };
}

async function stored(taskId: string) {
  const [row] = await t.sql<{ state: string; limit_reason: string | null; stored_bytes: number; messages: number; bytes: number; last: number }>(
    // Read through to_jsonb so the query also runs on a schema without the new columns.
    `select t.state, to_jsonb(t)->>'limit_reason' as limit_reason, (to_jsonb(t)->>'stored_bytes')::int as stored_bytes,
            (select count(*)::int from task_message m where m.task_id = t.id) as messages,
            (select coalesce(sum(octet_length(m.parts::text)), 0)::int from task_message m where m.task_id = t.id) as bytes,
            (select max(step_seq) from task_message m where m.task_id = t.id) as last
       from task t where t.id = $1`,
    [taskId],
  );
  return row!;
}

const eventsOf = (taskId: string) =>
  t.sql<{ type: string; data: any }>(`select type, data from audit_event where stream = $1 order by seq`, [`task:${taskId}`]);

/** A GraphQL request over the instance's real HTTP port, as the console sends it. */
async function overHttp(query: string, variables: Record<string, unknown>) {
  const res = await fetch(`http://127.0.0.1:${t.instance.port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) as GqlResult };
}

describe('finding 7: a hostile A2A agent cannot grow its task without bound', () => {
  let flooded: { gid: string; id: string };

  it('6,000 new messages in 30 events of one startTask: the task keeps 2,000, ends FAILED with the reason, and the stream is not resumed (was: 6,003 stored)', async () => {
    const started = await startFlood('messages', { kind: 'messages', events: 30, perEvent: 200, textBytes: 100 });
    flooded = started;
    expect(started.state).toBe('FAILED');
    const row = await stored(started.id);
    // The person's message and 1,999 of the agent's: nothing past the limit.
    expect(row).toMatchObject({ state: 'TASK_STATE_FAILED', messages: TASK_LIMITS.messagesMax, last: TASK_LIMITS.messagesMax });
    expect(row.limit_reason).toBe(`the agent sent more than ${TASK_LIMITS.messagesMax} messages for the task`);
    const [sum] = await t.sql<{ bytes: number }>(`select sum(bytes)::int as bytes from task_message where task_id = $1`, [started.id]);
    expect(row.stored_bytes).toBe(sum!.bytes);
    // Reading stopped at the event that reached the limit: no resubscription, no GetTask.
    expect(hostile.calls('messages')).toEqual(['SendStreamingMessage']);
    const events = await eventsOf(started.id);
    expect(events.filter((e) => e.type === 'task.limit_reached')).toEqual([
      {
        type: 'task.limit_reached',
        data: expect.objectContaining({ reason: row.limit_reason, state: 'TASK_STATE_FAILED', previousState: 'TASK_STATE_WORKING' }),
      },
    ]);
    const task = await t.gql(`query($id: ID!) { task(id: $id) { state limitReason statusHistory { state } } }`, { id: started.gid });
    expect(task.data.task).toMatchObject({ state: 'FAILED', limitReason: row.limit_reason });
    expect(task.data.task.statusHistory.at(-1)).toEqual({ state: 'FAILED' });
    // The person cannot go on with a task Taskbay no longer follows.
    const reply = await t.gql(`mutation($id: ID!) { sendTaskMessage(input: { taskId: $id, text: "more" }) { id } }`, { id: started.gid });
    expect(codeOf(reply)).toBe('BAD_USER_INPUT');
    expect(reply.errors![0]!.message).toMatch(/Taskbay stopped following the task/);
  });

  it('the task page reads the latest messages a page at a time, and earlier ones before a step (was: every message, 1.1 GB for one read)', async () => {
    const steps = (r: GqlResult) => r.data.task.messages.map((m: { stepSeq: number }) => m.stepSeq);
    const page = (args: string) => t.gql(`query($id: ID!) { task(id: $id) { messages${args} { stepSeq } } }`, { id: flooded.gid });
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const last = TASK_LIMITS.messagesMax;
    expect(steps(await page(''))).toEqual(range(last - TRANSCRIPT_READ_LIMITS.pageMax + 1, last));
    expect(steps(await page('(last: 10)'))).toEqual(range(last - 9, last));
    expect(steps(await page('(last: 10, before: 11)'))).toEqual(range(1, 10));
    expect(steps(await page('(last: 10, before: 3)'))).toEqual([1, 2]);
    for (const args of [`(last: ${TRANSCRIPT_READ_LIMITS.pageMax + 1})`, '(last: 0)', '(before: 0)'])
      expect(codeOf(await page(args)), args).toBe('BAD_USER_INPUT');

    // The console's own documents: its task page shows the latest 50, and loads the 50 before them.
    const doc = (d: unknown) => print(formatDocument(d as DocumentNode));
    const shown = await overHttp(doc(TaskPageDocument), { id: flooded.gid });
    expect(shown.status).toBe(200);
    expect(shown.body.errors).toBeUndefined();
    expect(steps(shown.body)).toEqual(range(last - 49, last));
    expect(shown.body.data.task.limitReason).toMatch(/more than 2000 messages/);
    const earlier = await overHttp(doc(TaskEarlierMessagesDocument), { id: flooded.gid, before: last - 49 });
    expect(earlier.body.errors).toBeUndefined();
    expect(steps(earlier.body)).toEqual(range(last - 99, last - 50));
  });

  // Stores five messages, four of 3.5 MiB, and reads them back nine times: slow on a busy machine.
  it('30 events just under the 4 MiB event bound: the task keeps at most 16 MiB, and the task page read with aliases answers within the read bounds (was: 234 MB stored, three aliases HTTP 500)', {
    timeout: 120_000,
  }, async () => {
    const started = await startFlood('huge', { kind: 'huge', events: 30, textBytes: 3.5 * 1024 * 1024 });
    expect(started.state).toBe('FAILED');
    const row = await stored(started.id);
    expect(row.limit_reason).toBe(`the agent sent more than ${TASK_LIMITS.bytesMax} bytes of messages for the task`);
    expect(row.stored_bytes).toBeLessThanOrEqual(TASK_LIMITS.bytesMax);
    // The person's message and four of 3.5 MiB; a fifth would have gone over.
    expect(row.messages).toBe(5);
    expect(hostile.calls('huge')).toEqual(['SendStreamingMessage']);

    const aliases = (n: number) =>
      `query($id: ID!) { ${Array.from({ length: n }, (_, i) => `a${i}: task(id: $id) { messages { stepSeq parts } }`).join(' ')} }`;
    const three = await overHttp(aliases(3), { id: started.gid });
    expect(three.status).toBe(200);
    expect(three.body.errors).toBeUndefined();
    // A page holds the latest message and no more than fit in pageBytesMax (always one).
    for (const a of ['a0', 'a1', 'a2']) expect(three.body.data[a].messages.map((m: { stepSeq: number }) => m.stepSeq)).toEqual([5]);
    expect(three.bytes).toBeLessThan(TRANSCRIPT_READ_LIMITS.requestBytesMax + 64 * 1024);

    // However many aliases, one request reads at most requestBytesMax of messages: the rest are refused.
    const six = await overHttp(aliases(6), { id: started.gid });
    expect(six.status).toBe(200);
    expect(six.bytes).toBeLessThan(TRANSCRIPT_READ_LIMITS.requestBytesMax + 64 * 1024);
    const answered = Object.values(six.body.data ?? {}).filter((v) => v !== null).length;
    expect(answered).toBe(4);
    expect(six.body.errors!.map((e) => e.extensions)).toEqual([
      expect.objectContaining({ code: 'BAD_USER_INPUT', reason: 'READ_TOO_LARGE' }),
      expect.objectContaining({ code: 'BAD_USER_INPUT', reason: 'READ_TOO_LARGE' }),
    ]);
  });

  it('the inbox reads one message of a waiting task, however long its transcript (was: every agent message of every waiting task)', async () => {
    const started = await startFlood('waiting', { kind: 'messages', events: 9, perEvent: 200, textBytes: 100 });
    expect(started.state).toBe('INPUT_REQUIRED');
    expect((await stored(started.id)).messages).toBe(1802);
    // Rows pg hands back for statements on task_message while the inbox is read (in this process).
    let rows = 0;
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
      const onMessages = /task_message/.test(String(typeof args[0] === 'string' ? args[0] : args[0]?.text));
      const count = (r: { rowCount?: number | null } | undefined) => {
        if (onMessages) rows += r?.rowCount ?? 0;
      };
      // knex passes a callback; sql() awaits the promise.
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        args[args.length - 1] = (err: unknown, r: { rowCount?: number }) => {
          count(r);
          callback(err, r);
        };
      }
      const result = (query as any).apply(this, args);
      if (result instanceof Promise) void result.then(count, () => undefined);
      return result;
    } as typeof query;
    let waiting: GqlResult;
    try {
      waiting = await t.gql(`{ tasksWaitingForInput { reason messageId task { id } } }`);
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(waiting.errors).toBeUndefined();
    const items = waiting.data.tasksWaitingForInput;
    expect(items).toEqual([expect.objectContaining({ reason: 'MESSAGE', task: { id: started.gid } })]);
    expect(rows).toBe(items.length);
  });

  it('endless SSE comments: the stream is ended once 32 MiB were read, comments counted, and the task says why (was: 537 MB read)', async () => {
    const bytes = 3 * A2A_STREAM_LIMITS.bytesMax;
    const started = await startFlood('comments', { kind: 'comments', bytes });
    expect(started.state).toBe('FAILED');
    const [stream] = hostile.streams('comments');
    // Taskbay left: the agent could not write what it meant to.
    expect(stream).toMatchObject({ closedEarly: true });
    expect(stream!.written).toBeLessThan(bytes);
    const row = await stored(started.id);
    expect(row.limit_reason).toMatch(new RegExp(`SendStreamingMessage to 127\\.0\\.0\\.1:\\d+: the stream is larger than ${A2A_STREAM_LIMITS.bytesMax} bytes`));
    // The task event before the comments is kept.
    expect(row.messages).toBe(1);
    expect(hostile.calls('comments')).toEqual(['SendStreamingMessage']);
    const agent = await t.gql(`query($id: ID!) { agent(id: $id) { lastError { kind message } } }`, { id: started.agentId });
    expect(agent.data.agent.lastError).toMatchObject({ kind: 'invalid_answer', message: row.limit_reason });
  });

  it('6,000 events on one stream: the stream is ended after 5,000 events', async () => {
    const started = await startFlood('events', { kind: 'events', count: 6000 });
    expect(started.state).toBe('FAILED');
    const row = await stored(started.id);
    expect(row.limit_reason).toMatch(new RegExp(`the stream has more than ${A2A_STREAM_LIMITS.eventsMax} events$`));
    expect(hostile.calls('events')).toEqual(['SendStreamingMessage']);
  });

  it("the task's limit counts what arrives across the stream and push callbacks: the push that reaches it stores what fits and is answered 409, as is every later one", async () => {
    const started = await startFlood('push', { kind: 'push', messages: 1500, textBytes: 100 });
    expect(started.state).toBe('WORKING');
    const config = hostile.pushConfig('push')!;
    const [task] = await t.sql<{ remote_task_id: string }>(`select remote_task_id from task where id = $1`, [started.id]);
    const remote = task!.remote_task_id;
    const push = (from: number) =>
      fetch(`http://127.0.0.1:${t.instance.port}${new URL(config.url).pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-a2a-notification-token': config.token },
        body: JSON.stringify({
          task: { id: remote, contextId: 'hostile-context', status: { state: 'TASK_STATE_WORKING' }, history: hostile.messages(remote, from, 400, 100) },
        }),
      });
    expect((await push(1501)).status).toBe(200);
    expect(await stored(started.id)).toMatchObject({ messages: 1901, limit_reason: null });
    const reaching = await push(1901);
    expect(reaching.status).toBe(409);
    expect(((await reaching.json()) as { error: string }).error).toBe(
      `Taskbay stopped following the task: the agent sent more than ${TASK_LIMITS.messagesMax} messages for the task`,
    );
    expect(await stored(started.id)).toMatchObject({ state: 'TASK_STATE_FAILED', messages: TASK_LIMITS.messagesMax });
    expect((await push(2301)).status).toBe(409);
    expect(await stored(started.id)).toMatchObject({ messages: TASK_LIMITS.messagesMax });
  });
});

describe('finding 9: AG-UI state depth and comments are bounded', () => {
  const REGISTER = `mutation($url: String!, $name: String!) { registerAgUiAgent(input: { endpointUrl: $url, name: $name }) { id } }`;
  const RUN = `query($id: ID!) { task(id: $id) { state messages { role parts } aguiRuns { status error state } } }`;
  async function run(scenario: AgUiScenario) {
    const agent = await t.gql(REGISTER, { url: agui.url(scenario), name: scenario });
    expect(agent.errors).toBeUndefined();
    const started = await t.gql(OPS.startTask, { agentId: agent.data.registerAgUiAgent.id, text: 'go' });
    expect(started.errors, JSON.stringify(started.errors)).toBeUndefined();
    return { task: (await t.gql(RUN, { id: started.data.startTask.id })).data.task };
  }

  for (const [scenario, title] of [
    ['hostile-state-3000', 'a STATE_SNAPSHOT 3,000 levels deep: the run fails with the depth as the reason and nothing of the state is kept (was: stored)'],
    ['hostile-state-40000', 'a STATE_SNAPSHOT 40,000 levels deep: refused the same way, never an internal error (was: INTERNAL_SERVER_ERROR)'],
    ['hostile-delta-40000', 'a STATE_DELTA whose value nests 40,000 levels deep: refused the same way (was: accepted)'],
  ] as const) {
    it(title, async () => {
      const { task } = await run(scenario);
      expect(task.state).toBe('FAILED');
      // The run's state is the one Taskbay sent ({}), not the agent's.
      expect(task.aguiRuns).toEqual([
        { status: 'ERROR', error: expect.stringMatching(new RegExp(`event 2 is nested more than ${AGUI_LIMITS.eventDepthMax} levels deep$`)), state: {} },
      ]);
    });
  }

  it('hostile-args-40000: tool call arguments whose text nests 40,000 deep are kept as that text, and the run completes (was: an internal error)', async () => {
    const { task } = await run('hostile-args-40000');
    expect(task.state).toBe('COMPLETED');
    const call = task.messages.flatMap((m: { parts: { data?: any }[] }) => m.parts).find((p: { data?: any }) => p.data?.toolCallId === 'deep-call');
    expect(call.data.arguments).toBe(`${'['.repeat(40_000)}${']'.repeat(40_000)}`);
  });

  it('hostile-comments: the run ends once 4 MiB were read, SSE comments counted', async () => {
    const { task } = await run('hostile-comments');
    expect(task.state).toBe('FAILED');
    expect(task.aguiRuns).toEqual([
      expect.objectContaining({ status: 'ERROR', error: expect.stringMatching(`the stream is larger than ${AGUI_LIMITS.streamMaxBytes} bytes`) }),
    ]);
    expect(agui.floods).toEqual([{ written: expect.any(Number), closedEarly: true }]);
    expect(agui.floods[0]!.written).toBeLessThan(3 * AGUI_LIMITS.streamMaxBytes);
  });
});
