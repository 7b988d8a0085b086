import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUSH_BODY_MAX_BYTES } from '../../../src/tasks/push.js';
import { DEPLOY_REQUEST_FORM, type Variant } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { OPS, eventually, startTestInstance, type TestInstance, agentRegistry } from '../../support/harness.js';
import { freePort } from '../../support/free-port.js';

// Push notifications (docs/ARCHITECTURE.md "The flow" 2): "When the card says capabilities.pushNotifications,
// Taskbay passes a push config (its own callback URL plus a per-task secret token) and accepts
// status/task updates on that callback." The fixture agent in push mode answers WORKING and pushes
// the real update to TASKBAY_PUBLIC_URL/a2a/push/<task id> shortly after.

let t: TestInstance;
let fixture: FixtureAgent;
let publicUrl: string;

beforeAll(async () => {
  fixture = await startFixtureAgent({ push: true, deferredReplyMs: 30 });
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  t = await startTestInstance({ worker: false, env: { PORT: String(port), TASKBAY_PUBLIC_URL: publicUrl } });
});
afterAll(async () => {
  await t?.stop();
  await fixture?.close();
});

const registered = agentRegistry(() => t);
const agentId = (variant: Variant) => registered(fixture.cardUrl(variant));

interface Started {
  gid: string;
  id: string;
  remoteTaskId: string;
}
async function start(variant: Variant, text: string): Promise<Started> {
  const r = await t.gql(OPS.startTask, { agentId: await agentId(variant), text });
  expect(r.errors).toBeUndefined();
  expect(r.data.startTask.state).toBe('WORKING');
  const [row] = await t.sql<{ id: string }>('select id from task where remote_task_id = $1', [r.data.startTask.remoteTaskId]);
  return { gid: r.data.startTask.id, id: row!.id, remoteTaskId: r.data.startTask.remoteTaskId };
}
const pushOf = (remoteTaskId: string) => eventually(async () => fixture.pushes.find((p) => p.taskId === remoteTaskId));
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Everything a push could change. */
async function footprint(taskId: string) {
  const [task] = await t.sql('select state, last_step_seq, remote_task_id from task where id = $1', [taskId]);
  const [counts] = await t.sql(
    `select (select count(*)::int from task_message where task_id = $1) as messages,
            (select count(*)::int from task_status where task_id = $1) as statuses,
            (select count(*)::int from approval where task_id = $1) as approvals,
            (select count(*)::int from audit_event where stream = 'task:' || $1 or data->>'taskId' = $1::text) as events`,
    [taskId],
  );
  return { task, counts };
}

describe('push notifications', () => {
  it('"an approval opened from a pushed update": the push is stored as an observation exactly like a reply, approval detection included', async () => {
    const task = await start('approver', 'approve');
    const push = await pushOf(task.remoteTaskId);
    expect(push.outcome).toBe(200);
    // Callback URL on this server, per-task secret token; only its hash is stored.
    expect(push.url).toBe(`${publicUrl}/a2a/push/${task.id}`);
    expect(push.token.length).toBeGreaterThanOrEqual(32);
    const [row] = await t.sql('select push_token_hash from task where id = $1', [task.id]);
    expect(row.push_token_hash).toBe(createHash('sha256').update(push.token).digest('hex'));
    expect(JSON.stringify(await t.sql('select * from task where id = $1', [task.id]))).not.toContain(push.token);

    const approvals = await t.sql('select status, title, source_message_id from approval where task_id = $1', [task.id]);
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ status: 'PENDING', title: 'Delete the staging cluster' });
    const msgs = await t.sql('select step_seq, role, message_id from task_message where task_id = $1 order by step_seq', [task.id]);
    expect(msgs.map((m) => [m.step_seq, m.role])).toEqual([
      [1, 'ROLE_USER'],
      [2, 'ROLE_AGENT'],
    ]);
    expect(approvals[0].source_message_id).toBe(msgs[1].message_id);
    const q = await t.gql(`query($id: ID!) { task(id: $id) { state statusHistory { state } } }`, { id: task.gid });
    expect(q.data.task.state).toBe('INPUT_REQUIRED');
    expect(q.data.task.statusHistory.map((s: { state: string }) => s.state)).toEqual(['WORKING', 'INPUT_REQUIRED']);
  });

  it('a pushed form is exposed like a replied one', async () => {
    const task = await start('form', 'deploy');
    expect((await pushOf(task.remoteTaskId)).outcome).toBe(200);
    const [m] = await t.sql(`select form from task_message where task_id = $1 and role = 'ROLE_AGENT'`, [task.id]);
    expect(m.form).toEqual(DEPLOY_REQUEST_FORM);
  });

  it('"A wrong token, unknown task or malformed body gets a 4xx and changes nothing": a forged token is refused', async () => {
    const task = await start('approver', 'approve');
    const push = await pushOf(task.remoteTaskId);
    const url = `${publicUrl}/a2a/push/${task.id}`;
    const before = await footprint(task.id);
    const forged = {
      statusUpdate: {
        taskId: task.remoteTaskId,
        contextId: (push.body as any).statusUpdate.contextId,
        status: {
          state: 'TASK_STATE_INPUT_REQUIRED',
          message: {
            messageId: 'forged-1',
            role: 'ROLE_AGENT',
            parts: [
              { data: { title: 'Forged', action: { kind: 'send_message', text: 'rm -rf' } }, mediaType: 'application/vnd.agent-taskbay.approval-request+json' },
            ],
          },
        },
      },
    };
    expect((await post(url, forged, { 'x-a2a-notification-token': 'not-the-token' })).status).toBe(401);
    expect((await post(url, forged, { 'x-a2a-notification-token': push.token.slice(0, -1) + (push.token.endsWith('A') ? 'B' : 'A') })).status).toBe(401);
    expect((await post(url, forged)).status).toBe(401);
    // Another task's token does not open this one.
    const other = await start('plain', 'hello');
    const otherPush = await pushOf(other.remoteTaskId);
    expect((await post(url, forged, { 'x-a2a-notification-token': otherPush.token })).status).toBe(401);
    // Unknown task, malformed bodies, an update naming another task.
    expect((await post(`${publicUrl}/a2a/push/00000000-0000-4000-8000-000000000000`, forged, { 'x-a2a-notification-token': push.token })).status).toBe(404);
    const auth = { 'x-a2a-notification-token': push.token };
    expect((await post(url, '{not json', auth)).status).toBe(400);
    expect((await post(url, { hello: 'world' }, auth)).status).toBe(400);
    expect((await post(url, { statusUpdate: { taskId: task.remoteTaskId, contextId: 'c', status: { state: 'TASK_STATE_BOGUS' } } }, auth)).status).toBe(400);
    expect((await post(url, { ...forged, statusUpdate: { ...forged.statusUpdate, taskId: 'someone-else' } }, auth)).status).toBe(400);
    expect(await footprint(task.id)).toEqual(before);
  });

  it('"Re-sending the identical request opens nothing new": a replayed push opens nothing new, and an ended task stays ended', async () => {
    const task = await start('approver', 'approve');
    const push = await pushOf(task.remoteTaskId);
    const url = `${publicUrl}/a2a/push/${task.id}`;
    const auth = { 'x-a2a-notification-token': push.token };
    const before = await footprint(task.id);
    expect(before.counts.approvals).toBe(1);
    const replay = await post(url, push.body, auth);
    expect(replay.status).toBe(200);
    const after = await footprint(task.id);
    expect(after.counts.approvals).toBe(1);
    expect(after.counts.messages).toBe(before.counts.messages);
    expect(after.task).toEqual(before.task);
    expect(await t.sql(`select count(*)::int as n from approval where task_id = $1 and status = 'PENDING'`, [task.id])).toEqual([{ n: 1 }]);

    // CancelTask from the console ends it; a late replay cannot reopen it.
    const cancel = await t.gql(`mutation($id: ID!) { cancelTask(taskId: $id) { state } }`, { id: task.gid });
    expect(cancel.errors).toBeUndefined();
    expect(cancel.data.cancelTask.state).toBe('CANCELED');
    expect(await t.sql('select status from approval where task_id = $1', [task.id])).toEqual([{ status: 'SUPERSEDED' }]);
    const ended = await footprint(task.id);
    expect((await post(url, push.body, auth)).status).toBe(409);
    expect(await footprint(task.id)).toEqual(ended);
  });

  it('a replayed older push, after the task moved on, is acknowledged and changes nothing', async () => {
    const task = await start('approver', 'approve');
    const first = await pushOf(task.remoteTaskId);
    const reply = await t.gql(`mutation($id: ID!) { sendTaskMessage(input: { taskId: $id, text: "hello" }) { state } }`, { id: task.gid });
    expect(reply.data.sendTaskMessage.state).toBe('WORKING');
    await eventually(async () => fixture.pushes.filter((p) => p.taskId === task.remoteTaskId).length === 2);
    await eventually(async () => (await footprint(task.id)).task.state === 'TASK_STATE_INPUT_REQUIRED');
    const before = await footprint(task.id);
    const [latestBefore] = await t.sql('select message_id from task_status where task_id = $1 order by at desc limit 1', [task.id]);
    const replay = await post(`${publicUrl}/a2a/push/${task.id}`, first.body, { 'x-a2a-notification-token': first.token });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ ignored: 'stale update' });
    expect(await footprint(task.id)).toEqual(before);
    const [latestAfter] = await t.sql('select message_id from task_status where task_id = $1 order by at desc limit 1', [task.id]);
    expect(latestAfter).toEqual(latestBefore);
  });
});

/**
 * Sends a large body over a raw socket as fast as the server takes it, until the server closes
 * the connection or `limit` bytes are written. Returns what the server answered and how much
 * of the body it took (the kernel's socket buffers hold a few MiB of it at most).
 */
async function flood(path: string, headers: Record<string, string>, opts: { chunked: boolean; limit: number }) {
  const { port } = new URL(publicUrl);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  let response = '';
  socket.on('data', (d: Buffer) => (response += d.toString('latin1')));
  socket.on('error', () => {}); // EPIPE / ECONNRESET once the server has closed
  let closedByServer = false;
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  void closed.then(() => (closedByServer = true));
  const head = Object.entries({ host: `127.0.0.1:${port}`, 'content-type': 'application/json', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}${opts.chunked ? 'transfer-encoding: chunked\r\n' : `content-length: ${opts.limit}\r\n`}\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const frame = opts.chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
  let written = 0;
  while (!closedByServer && written < opts.limit) {
    const more = socket.write(frame);
    written += chunk.length;
    if (!more) await Promise.race([once(socket, 'drain').catch(() => undefined), closed]);
  }
  if (!closedByServer) socket.destroy();
  await closed;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]), response, written, closedByServer };
}

describe('push receiver: refusing cheaply', () => {
  const MiB = 1024 * 1024;
  const LIMIT = 128 * MiB;

  it('a wrong token or an unknown task is answered at once with Connection: close, without reading the body', async () => {
    const task = await start('approver', 'approve');
    const push = await pushOf(task.remoteTaskId);
    const before = await footprint(task.id);
    const cases: { path: string; headers: Record<string, string>; status: number }[] = [
      { path: `/a2a/push/${task.id}`, headers: { 'x-a2a-notification-token': 'not-the-token' }, status: 401 },
      { path: `/a2a/push/${task.id}`, headers: {}, status: 401 },
      { path: '/a2a/push/00000000-0000-4000-8000-000000000000', headers: { 'x-a2a-notification-token': push.token }, status: 404 },
      // Not a uuid at all (the database is never asked).
      { path: `/a2a/push/${'-'.repeat(36)}`, headers: { 'x-a2a-notification-token': push.token }, status: 404 },
    ];
    for (const c of cases) {
      for (const chunked of [true, false]) {
        const r = await flood(c.path, c.headers, { chunked, limit: LIMIT });
        expect(r.status, `${c.path} chunked=${chunked}`).toBe(c.status);
        expect(r.response.toLowerCase()).toContain('connection: close');
        expect(r.closedByServer).toBe(true);
        // Far less than was offered: what the socket buffers hold, not the body.
        expect(r.written).toBeLessThan(16 * MiB);
      }
    }
    expect(await footprint(task.id)).toEqual(before);
  });

  it('a body over the cap is refused with 413: by its Content-Length before reading, a chunked one once the cap is passed', async () => {
    const task = await start('approver', 'approve');
    const push = await pushOf(task.remoteTaskId);
    const before = await footprint(task.id);
    // The answer comes before a byte of the body is sent.
    const { port } = new URL(publicUrl);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.write(
      `POST /a2a/push/${task.id} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-a2a-notification-token: ${push.token}\r\ncontent-length: ${PUSH_BODY_MAX_BYTES + 1}\r\n\r\n`,
    );
    await once(socket, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    for (const chunked of [false, true]) {
      const r = await flood(`/a2a/push/${task.id}`, { 'x-a2a-notification-token': push.token }, { chunked, limit: LIMIT });
      expect(r.status, `chunked=${chunked}`).toBe(413);
      expect(r.response).toContain(`body larger than ${PUSH_BODY_MAX_BYTES} bytes`);
      expect(r.response.toLowerCase()).toContain('connection: close');
      expect(r.closedByServer).toBe(true);
      expect(r.written).toBeLessThan(16 * MiB);
    }
    expect(await footprint(task.id)).toEqual(before);
    // Just under the cap is read (and then judged on its content).
    const padded = JSON.stringify({ hello: 'x'.repeat(PUSH_BODY_MAX_BYTES - 100) });
    expect((await post(`${publicUrl}/a2a/push/${task.id}`, padded, { 'x-a2a-notification-token': push.token })).status).toBe(400);
  });

  it('a NUL or an unpaired surrogate anywhere in a push is refused with 400, and nothing is stored', async () => {
    const task = await start('approver', 'approve');
    const push = await pushOf(task.remoteTaskId);
    const url = `${publicUrl}/a2a/push/${task.id}`;
    const auth = { 'x-a2a-notification-token': push.token };
    const contextId = (push.body as any).statusUpdate.contextId;
    const update = (messageId: string, text: string, extra: Record<string, unknown> = {}) => ({
      statusUpdate: {
        taskId: task.remoteTaskId,
        contextId,
        status: { state: 'TASK_STATE_WORKING', message: { messageId, role: 'ROLE_AGENT', parts: [{ text }], ...extra } },
      },
    });
    const before = await footprint(task.id);
    const bodies = [
      update('nul\u0000id', 'fine'),
      update('fine-1', 'a NUL \u0000 in the text'),
      update('fine-2', 'a lone high surrogate \ud800 here'),
      update('fine-3', 'a lone low surrogate \udc00 here'),
      update('fine-4', 'fine', { metadata: { 'key\u0000': 'value' } }),
    ];
    for (const body of bodies) {
      const res = await post(url, body, auth);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/NUL character \(U\+0000\) or an unpaired UTF-16 surrogate/);
    }
    expect(await footprint(task.id)).toEqual(before);
    // The same update without the bad character is accepted.
    expect((await post(url, update('fine-5', 'fine'), auth)).status).toBe(200);
    expect((await footprint(task.id)).counts.messages).toBe(before.counts.messages + 1);
    // A backslash followed by "u0000" is text, not a NUL: stored as sent.
    const literal = 'printf("\\u0000")';
    expect(literal).toHaveLength(16);
    expect((await post(url, update('fine-6', literal), auth)).status).toBe(200);
    const [stored] = await t.sql(`select parts from task_message where task_id = $1 and message_id = 'fine-6'`, [task.id]);
    expect(stored.parts).toEqual([{ text: literal }]);
  });
});
