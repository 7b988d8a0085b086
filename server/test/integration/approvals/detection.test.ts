import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import canonicalize from 'canonicalize';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVAL_REQUEST_EXTENSION, MEDIA_TYPE } from '../../../src/a2a/extensions.js';
import type { Task as A2ATask } from '../../../src/a2a/types.js';
import { actionDigest, type ApprovalAction } from '../../../src/approvals/digest.js';
import { APPROVAL_REQUEST, ROGUE_APPROVAL_REQUEST, VARIANTS, type Variant } from '../../../src/fixture-agent/content.js';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { APPROVAL_LIMITS, jsonBytes } from '../../../src/limits.js';
import { recordObservation } from '../../../src/tasks/observe.js';
import { OPS, agentRegistry, createMember, nextBesides, probeRequests, subscribe, untilProbeArrives, type TestInstance } from '../../support/harness.js';
import { startWithFixtureAgent, stopAll } from '../../support/fixture-agent.js';

// Approval detection (docs/ARCHITECTURE.md "The flow" 3-5, seed 000 "What happens" 1-4), against real
// Postgres, the real fixture agent and, where a test needs a card it can change or replies the
// composer cannot carry, a tiny A2A agent written below.

let t: TestInstance;
let fixture: FixtureAgent;
const testAgents: TestAgent[] = [];

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent({ worker: false }));
});
afterAll(() => stopAll(t, fixture, ...testAgents));

// ---------------------------------------------------------------------------------------------
// Helpers

const APPROVAL_MT = MEDIA_TYPE.approvalRequest;
const approvalPart = (data: unknown) => ({ data, mediaType: APPROVAL_MT });
const scripted = (state: string, parts: unknown[]) => ({ reply: { state, parts } });
const request = (title: string, text: string, extra: Record<string, unknown> = {}) => ({
  title,
  action: { kind: 'send_message', text },
  ...extra,
});

/** Independent digest: SHA-256 hex of RFC 8785 canonical JSON (seed 000 "What the approved message carries"). */
function independentDigest(value: unknown): string {
  return createHash('sha256').update(canonicalize(value)!, 'utf8').digest('hex');
}

const SEND = `mutation($taskId: ID!, $text: String, $data: JSON) {
  sendTaskMessage(input: { taskId: $taskId, text: $text, data: $data }) { id state } }`;
const REFRESH = `mutation($id: ID!) { refreshAgentCard(id: $id) { id extensions } }`;
const APPROVAL = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} createdAt supersededBy { id }
  events { type actorType actorId } } }`;

const agentFor = agentRegistry(() => t);

interface StartedTask {
  gid: string;
  /** The local task id, as `select id from task` has it. */
  id: string;
  remoteTaskId: string;
  state: string;
}

async function startOn(cardUrl: string, input: { text?: string; data?: unknown }): Promise<StartedTask> {
  const agentId = await agentFor(cardUrl);
  const r = await t.gql(OPS.startTask, { agentId, ...input });
  expect(r.errors).toBeUndefined();
  const { id: gid, remoteTaskId, state } = r.data.startTask;
  const rows = await t.sql<{ id: string }>('select id from task where remote_task_id = $1', [remoteTaskId]);
  expect(rows).toHaveLength(1);
  return { gid, id: rows[0]!.id, remoteTaskId, state };
}
const start = (variant: Variant, input: { text?: string; data?: unknown }) => startOn(fixture.cardUrl(variant), input);

async function send(task: StartedTask, input: { text?: string; data?: unknown }) {
  const r = await t.gql(SEND, { taskId: task.gid, ...input });
  expect(r.errors).toBeUndefined();
  return r.data.sendTaskMessage as { id: string; state: string };
}

interface MessageRow {
  step_seq: number;
  message_id: string;
  role: string;
  parts: any[];
}
const messagesOf = (taskId: string) =>
  t.sql<MessageRow>('select step_seq, message_id, role, parts from task_message where task_id = $1 order by step_seq', [taskId]);
const approvalsOf = (taskId: string) => t.sql('select * from approval where task_id = $1 order by created_at', [taskId]);
const pendingCount = async (taskId: string) =>
  Number((await t.sql(`select count(*)::int as n from approval where task_id = $1 and status = 'PENDING'`, [taskId]))[0].n);
const lastAgentMessage = (remoteTaskId: string) => fixture.getTask(remoteTaskId)!.status.message!;

const probes = probeRequests(() => t);

// ---------------------------------------------------------------------------------------------
// A minimal A2A agent: its card can change between fetches, and it answers SendMessage itself
// with whatever the test queued (replies larger than the composer's 64 KiB data limit included).

interface TestAgent {
  cardUrl: string;
  extensions: { uri: string; required?: boolean }[];
  replies: { state: string; parts: unknown[] }[];
  received: { headers: IncomingMessage['headers']; message: any }[];
  close(): Promise<void>;
}

async function startTestAgent(name: string): Promise<TestAgent> {
  const tasks = new Map<string, A2ATask>();
  let base = '';
  const agent: TestAgent = {
    cardUrl: '',
    extensions: [],
    replies: [],
    received: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer(async (req, res) => {
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    if (req.method === 'GET' && req.url === '/card.json') {
      json(200, {
        name,
        description: 'A2A agent of detection.test.ts',
        version: '1.0.0',
        supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        capabilities: { streaming: false, pushNotifications: false, extensions: agent.extensions },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 'chat', name: 'Chat' }],
      });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/a2a') {
      json(404, { error: 'not found' });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rpc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (rpc.method !== 'SendMessage') {
      json(200, { jsonrpc: '2.0', id: rpc.id, error: { code: -32601, message: 'Method not found' } });
      return;
    }
    const message = rpc.params.message;
    agent.received.push({ headers: req.headers, message });
    let task = message.taskId ? tasks.get(message.taskId) : undefined;
    if (!task) {
      task = { id: randomUUID(), contextId: randomUUID(), status: { state: 'TASK_STATE_SUBMITTED' }, history: [] };
      tasks.set(task.id, task);
    }
    const reply = agent.replies.shift() ?? { state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'ok' }] };
    const answer = { messageId: randomUUID(), role: 'ROLE_AGENT', parts: reply.parts, taskId: task.id, contextId: task.contextId };
    task.history!.push({ ...message, taskId: task.id, contextId: task.contextId }, answer as any);
    task.status = { state: reply.state as any, message: answer as any };
    json(200, { jsonrpc: '2.0', id: rpc.id, result: { task } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent.cardUrl = `${base}/card.json`;
  testAgents.push(agent);
  return agent;
}

// ---------------------------------------------------------------------------------------------

describe('observation is stored first (docs/ARCHITECTURE.md "The flow" 3)', () => {
  it('"Every task, status update, and message the agent returns is stored first": user message step 1, agent status message step 2, parts intact, state from the agent — on every variant', async () => {
    for (const variant of VARIANTS) {
      const task = await start(variant, { text: 'approve' });
      const remote = fixture.getTask(task.remoteTaskId)!;
      const sent = fixture.received.find((r) => r.taskId === remote.id && !r.duplicate)!;
      const rows = await messagesOf(task.id);
      expect(
        rows.map((r) => [r.step_seq, r.role]),
        variant,
      ).toEqual([
        [1, 'ROLE_USER'],
        [2, 'ROLE_AGENT'],
      ]);
      expect(rows[0]!.message_id).toBe(sent.message.messageId);
      expect(rows[0]!.parts).toEqual([{ text: 'approve' }]);
      expect(rows[1]!.message_id).toBe(remote.status.message!.messageId);
      expect(rows[1]!.parts, variant).toEqual(remote.status.message!.parts);
      expect(task.state).toBe(remote.status.state.replace('TASK_STATE_', ''));
      const [row] = await t.sql('select state, last_step_seq, context_id from task where id = $1', [task.id]);
      expect(row).toEqual({ state: remote.status.state, last_step_seq: 2, context_id: remote.contextId });
      const statuses = await t.sql('select state, message_id from task_status where task_id = $1', [task.id]);
      expect(statuses).toContainEqual({ state: remote.status.state, message_id: remote.status.message!.messageId });
    }
  });

  it('"messages with a per-task step sequence starting at 1": each task counts on its own, and replies continue the count', async () => {
    const a = await start('scripted', { text: 'hello a' });
    const b = await start('scripted', { text: 'hello b' });
    await send(a, { data: scripted('TASK_STATE_INPUT_REQUIRED', [{ text: 'first reply' }]) });
    await send(a, { data: scripted('TASK_STATE_WORKING', [{ text: 'second reply' }]) });
    const rowsA = await messagesOf(a.id);
    expect(rowsA.map((r) => [r.step_seq, r.role])).toEqual([
      [1, 'ROLE_USER'],
      [2, 'ROLE_AGENT'],
      [3, 'ROLE_USER'],
      [4, 'ROLE_AGENT'],
      [5, 'ROLE_USER'],
      [6, 'ROLE_AGENT'],
    ]);
    expect(rowsA[3]!.parts).toEqual([{ text: 'first reply' }]);
    expect(rowsA[5]!.parts).toEqual([{ text: 'second reply' }]);
    expect(rowsA[5]!.message_id).toBe(lastAgentMessage(a.remoteTaskId).messageId);
    expect(new Set(rowsA.map((r) => r.message_id)).size).toBe(6);
    expect((await t.sql('select state from task where id = $1', [a.id]))[0].state).toBe('TASK_STATE_WORKING');
    // The other task is untouched, and continues from its own 2.
    expect((await messagesOf(b.id)).map((r) => r.step_seq)).toEqual([1, 2]);
    await send(b, { text: 'again' });
    expect((await messagesOf(b.id)).map((r) => r.step_seq)).toEqual([1, 2, 3, 4]);
  });
});

describe('approval detection (docs/ARCHITECTURE.md "The flow" 4-5, seed 000 "What happens")', () => {
  it('showcase "approve" opens exactly one PENDING request; key, digest, stepSeq and expiry are as seed 000 defines', async () => {
    const before = Date.now();
    const task = await start('showcase', { text: 'approve' });
    const after = Date.now();
    const rows = await approvalsOf(task.id);
    expect(rows).toHaveLength(1);
    const a = rows[0];
    expect(a.status).toBe('PENDING');

    // Key = agent:<local task id>:<message id>:<first 16 hex of the action digest>
    const [taskRow] = await t.sql('select id from task where remote_task_id = $1', [task.remoteTaskId]);
    const asking = lastAgentMessage(task.remoteTaskId);
    const [askingRow] = await t.sql('select step_seq from task_message where task_id = $1 and message_id = $2', [taskRow.id, asking.messageId]);
    // "Digest = SHA-256 hex of canonical JSON of {kind, text, data} (data null when absent)"
    const digest = independentDigest({ kind: 'send_message', text: APPROVAL_REQUEST.action.text, data: null });
    expect(a.digest).toBe(digest);
    expect(actionDigest(a.action as ApprovalAction)).toBe(digest);
    expect(a.action).toEqual(APPROVAL_REQUEST.action);
    expect(a.key).toBe(`agent:${taskRow.id}:${asking.messageId}:${digest.slice(0, 16)}`);
    const [prefix, keyTask, keyMessage, keyHex] = (a.key as string).split(':');
    expect([prefix, keyTask, keyMessage, keyHex]).toEqual(['agent', taskRow.id, asking.messageId, digest.slice(0, 16)]);

    expect(a.source_message_id).toBe(asking.messageId);
    expect(a.step_seq).toBe(askingRow.step_seq);
    expect(a.step_seq).toBe(2);
    expect(a.source).toBe('AGENT');
    expect(a.requester_id).toBeNull();
    expect(a.assignee_id).toBeNull();
    expect(a.title).toBe(APPROVAL_REQUEST.title);
    expect(a.summary).toBe(APPROVAL_REQUEST.summary);
    expect(a.risk).toBe('HIGH');
    // expiresAt = the moment it opened + expiresInSeconds (3600), exactly; it opened during startTask
    // (this process's clock, the one the server uses).
    const created = new Date(a.created_at).getTime();
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(after);
    expect(new Date(a.expires_at).getTime() - created).toBe(3600_000);

    // Seed 000 step 5: no requester; its audit entries record actor type agent.
    const g = await t.gql(APPROVAL, { id: encodeGlobalID('Approval', a.id) });
    expect(g.errors).toBeUndefined();
    expect(g.data.approval).toMatchObject({ source: 'AGENT', status: 'PENDING', requester: null, assignee: null, stepSeq: 2, revision: 1 });
    expect(g.data.approval.events).toContainEqual({ type: 'approval.requested', actorType: 'agent', actorId: a.agent_id });
  });

  it('plain: "non-advertised parts are ignored and stay ordinary content" — observation stored, no approval', async () => {
    const task = await start('plain', { text: 'approve' });
    const rows = await messagesOf(task.id);
    expect(rows).toHaveLength(2);
    expect(rows[1]!.parts).toContainEqual({ data: APPROVAL_REQUEST, mediaType: APPROVAL_MT });
    expect(task.state).toBe('INPUT_REQUIRED');
    expect(await approvalsOf(task.id)).toEqual([]);
  });

  it('invalid: "Invalid ... parts are ignored" — no approval, observation stored', async () => {
    const task = await start('invalid', { text: 'approve' });
    const rows = await messagesOf(task.id);
    expect(rows).toHaveLength(2);
    expect(rows[1]!.parts.filter((p) => p.mediaType === APPROVAL_MT)).toHaveLength(2);
    expect(await approvalsOf(task.id)).toEqual([]);
  });

  it('rogue: "Fields naming an assignee, reviewer, policy, status or another task are not read"', async () => {
    const task = await start('rogue', { text: 'approve' });
    const rows = await approvalsOf(task.id);
    expect(rows).toHaveLength(1);
    const a = rows[0];
    expect(a.status).toBe('PENDING');
    expect(a.assignee_id).toBeNull();
    expect(a.requester_id).toBeNull();
    expect(a.task_id).toBe(task.id);
    expect(a.task_id).not.toBe(ROGUE_APPROVAL_REQUEST.taskId);
    expect(a.risk).toBe('CRITICAL');
    // "Agent content is never trusted": the summary is stored verbatim, as text.
    expect(a.summary).toBe('<script>alert(1)</script><b>x</b>');
    expect(a.action).toEqual(ROGUE_APPROVAL_REQUEST.action);
    expect(await t.sql('select id from decision where approval_id = $1', [a.id])).toEqual([]);
    expect((await messagesOf(task.id)).map((r) => r.step_seq)).toEqual([1, 2]);
  });

  it('unknown: an unknown action kind (run_tool) opens nothing; the unknown parts stay content', async () => {
    const task = await start('unknown', { text: 'approve' });
    const rows = await messagesOf(task.id);
    expect(rows[1]!.parts).toEqual(lastAgentMessage(task.remoteTaskId).parts);
    expect(rows[1]!.parts.some((p) => p.data?.action?.kind === 'run_tool')).toBe(true);
    expect(await approvalsOf(task.id)).toEqual([]);
  });

  it('"Extension negotiation always reads the latest stored snapshot": ignored before the card advertises it, opens after refreshAgentCard, ignored again once a refresh drops it', async () => {
    const agent = await startTestAgent('Detection: negotiation');
    const agentId = await agentFor(agent.cardUrl);
    const reg = await t.gql(`query($id: ID!) { agent(id: $id) { extensions } }`, { id: agentId });
    expect(reg.data.agent.extensions).toEqual([]);

    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'May I?' }, approvalPart(request('Ask 1', 'one'))] });
    const task = await startOn(agent.cardUrl, { text: 'go' });
    expect(await approvalsOf(task.id)).toEqual([]);
    expect((await messagesOf(task.id))[1]!.parts).toContainEqual(approvalPart(request('Ask 1', 'one')));
    expect(agent.received.at(-1)!.headers['a2a-extensions']).toBeUndefined();

    // The card now advertises it, but the stored snapshot does not yet: still ignored.
    agent.extensions = [{ uri: APPROVAL_REQUEST_EXTENSION, required: false }];
    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [approvalPart(request('Ask 2', 'two'))] });
    await send(task, { text: 'again' });
    expect(await approvalsOf(task.id)).toEqual([]);

    const refreshed = await t.gql(REFRESH, { id: agentId });
    expect(refreshed.errors).toBeUndefined();
    expect(refreshed.data.refreshAgentCard.extensions).toEqual([APPROVAL_REQUEST_EXTENSION]);
    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [approvalPart(request('Ask 3', 'three'))] });
    await send(task, { text: 'and again' });
    expect(agent.received.at(-1)!.headers['a2a-extensions']).toBe(APPROVAL_REQUEST_EXTENSION);
    const opened = await approvalsOf(task.id);
    expect(opened.map((a) => [a.title, a.status])).toEqual([['Ask 3', 'PENDING']]);
    expect(opened[0].source_message_id).toBe((await messagesOf(task.id)).at(-1)!.message_id);

    // A newer snapshot without the extension: the next request is ignored; the open one stays.
    agent.extensions = [];
    expect((await t.gql(REFRESH, { id: agentId })).data.refreshAgentCard.extensions).toEqual([]);
    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [approvalPart(request('Ask 4', 'four'))] });
    await send(task, { text: 'once more' });
    expect((await approvalsOf(task.id)).map((a) => [a.title, a.status])).toEqual([['Ask 3', 'PENDING']]);
    expect((await messagesOf(task.id)).map((r) => r.step_seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('"The extension URIs are identifiers with /v1 fixed" (seed 003): a card advertising the approval-request /v2 URI opens nothing; the /v1 URI then does', async () => {
    const v2 = APPROVAL_REQUEST_EXTENSION.replace(/\/v1$/, '/v2');
    expect(v2).not.toBe(APPROVAL_REQUEST_EXTENSION);
    const agent = await startTestAgent('Detection: another version');
    agent.extensions = [{ uri: v2, required: false }];
    const agentId = await agentFor(agent.cardUrl);
    expect((await t.gql(`query($id: ID!) { agent(id: $id) { extensions } }`, { id: agentId })).data.agent.extensions).toEqual([v2]);

    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [approvalPart(request('Ask v2', 'two'))] });
    const task = await startOn(agent.cardUrl, { text: 'go' });
    expect(task.state).toBe('INPUT_REQUIRED');
    expect(await approvalsOf(task.id)).toEqual([]);
    expect((await messagesOf(task.id))[1]!.parts).toEqual([approvalPart(request('Ask v2', 'two'))]);
    // Nothing is activated for a URI Taskbay does not know.
    expect(agent.received.at(-1)!.headers['a2a-extensions']).toBeUndefined();

    // The same card with the /v1 URI as well: the same kind of request opens.
    agent.extensions = [
      { uri: v2, required: false },
      { uri: APPROVAL_REQUEST_EXTENSION, required: false },
    ];
    expect((await t.gql(REFRESH, { id: agentId })).data.refreshAgentCard.extensions).toEqual([v2, APPROVAL_REQUEST_EXTENSION]);
    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [approvalPart(request('Ask v1', 'one'))] });
    await send(task, { text: 'again' });
    expect(agent.received.at(-1)!.headers['a2a-extensions']).toBe(APPROVAL_REQUEST_EXTENSION);
    expect((await approvalsOf(task.id)).map((a) => [a.title, a.status])).toEqual([['Ask v1', 'PENDING']]);
  });

  it('"Request part at most 128 KiB of JSON": exactly 128 KiB opens; one byte over is ignored but the message is stored; a 1 MiB part is skipped and a later valid part still wins', async () => {
    // Padding inside the request's data (a member of the data nobody reads); this agent answers
    // SendMessage itself. integration/approvals/part-size.test.ts pads a member of the part itself.
    const agent = await startTestAgent('Detection: limits');
    agent.extensions = [{ uri: APPROVAL_REQUEST_EXTENSION }];
    const sized = (bytes: number, title: string) => {
      const action = { kind: 'send_message', text: `Approve: ${title}` };
      // `padding` is not a field of the request: it is not read, but it counts toward the size.
      const probe = approvalPart({ title, action, padding: '' });
      const part = approvalPart({ title, action, padding: 'x'.repeat(bytes - jsonBytes(probe)) });
      expect(jsonBytes(part)).toBe(bytes);
      return part;
    };
    expect(APPROVAL_LIMITS.partMaxBytes).toBe(128 * 1024);
    const keptWhole = (part: unknown, bytes: number) => ({
      data: part,
      mediaType: MEDIA_TYPE.malformedPart,
      metadata: {
        taskbayMalformed: expect.stringMatching(
          new RegExp(`\\.parts\\[1\\] is ${bytes} bytes of JSON as sent; an approval-request part is at most ${128 * 1024}$`),
        ),
        taskbaySentAs: APPROVAL_MT,
      },
    });

    const atLimit = sized(128 * 1024, 'Exactly at the limit');
    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'big one' }, atLimit] });
    const t1 = await startOn(agent.cardUrl, { text: 'go' });
    const opened = await approvalsOf(t1.id);
    expect(opened.map((a) => [a.title, a.status])).toEqual([['Exactly at the limit', 'PENDING']]);
    expect(opened[0].action).toEqual({ kind: 'send_message', text: 'Approve: Exactly at the limit' });

    const over = sized(128 * 1024 + 1, 'One byte over');
    agent.replies.push({ state: 'TASK_STATE_INPUT_REQUIRED', parts: [{ text: 'bigger one' }, over] });
    const t2 = await startOn(agent.cardUrl, { text: 'go' });
    expect(await approvalsOf(t2.id)).toEqual([]);
    const stored = await messagesOf(t2.id);
    expect(stored).toHaveLength(2);
    // Ordinary content: the part kept whole as data, saying why and what it was sent as.
    expect(stored[1]!.parts[1]).toEqual(keptWhole(over, 128 * 1024 + 1));

    // The agent repeats its status message in the history, so 1 MiB here is 2 MiB on the wire
    // (the A2A client reads at most 4 MiB).
    const huge = approvalPart(request('y'.repeat(1024 * 1024), 'huge'));
    agent.replies.push({
      state: 'TASK_STATE_INPUT_REQUIRED',
      parts: [{ text: 'a huge ask, then a small one' }, huge, approvalPart(request('Small and valid', 'small'))],
    });
    await send(t2, { text: 'next' });
    expect((await approvalsOf(t2.id)).map((a) => a.title)).toEqual(['Small and valid']);
    const rows = await messagesOf(t2.id);
    expect(rows.map((r) => r.step_seq)).toEqual([1, 2, 3, 4]);
    expect(rows[3]!.parts[1]).toEqual(keptWhole(huge, jsonBytes(huge)));
  });

  it('"The first valid part in the message wins" (scripted): an invalid part and a wrong media type before it are skipped', async () => {
    const task = await start('scripted', {
      data: scripted('TASK_STATE_INPUT_REQUIRED', [
        { text: 'Two asks' },
        { data: request('Wrong media type', 'nope'), mediaType: 'application/json' },
        approvalPart({ ...request('', 'empty title is invalid') }),
        approvalPart(request('First valid', 'first')),
        approvalPart(request('Second valid', 'second')),
      ]),
    });
    const rows = await approvalsOf(task.id);
    expect(rows.map((a) => [a.title, a.status])).toEqual([['First valid', 'PENDING']]);
    expect(rows[0].action).toEqual({ kind: 'send_message', text: 'first' });
    expect(rows[0].risk).toBe('MEDIUM'); // default risk
  });

  it('"look at the task\'s latest agent status message of an INPUT_REQUIRED task": the same part in a WORKING or COMPLETED status opens nothing', async () => {
    const part = approvalPart(request('Only when input is required', 'do it'));
    const task = await start('scripted', { data: scripted('TASK_STATE_WORKING', [{ text: 'working' }, part]) });
    expect(task.state).toBe('WORKING');
    expect(await approvalsOf(task.id)).toEqual([]);
    // INPUT_REQUIRED now, but its status message has no part: the WORKING message is not read.
    await send(task, { data: scripted('TASK_STATE_INPUT_REQUIRED', [{ text: 'what now?' }]) });
    expect(await approvalsOf(task.id)).toEqual([]);
    await send(task, { data: scripted('TASK_STATE_INPUT_REQUIRED', [{ text: 'approve please' }, part]) });
    const rows = await approvalsOf(task.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].source_message_id).toBe(lastAgentMessage(task.remoteTaskId).messageId);
    expect(rows[0].step_seq).toBe(6);

    const done = await start('scripted', { data: scripted('TASK_STATE_COMPLETED', [{ text: 'done' }, part]) });
    expect(done.state).toBe('COMPLETED');
    expect(await approvalsOf(done.id)).toEqual([]);
    expect((await messagesOf(done.id)).map((r) => r.step_seq)).toEqual([1, 2]);
  });

  it('"Fields naming an assignee, reviewer, policy, status or another task are not read" (scripted, with real ids)', async () => {
    const member = await createMember(t);
    const other = await start('scripted', { text: 'another task' });
    const task = await start('scripted', {
      data: scripted('TASK_STATE_INPUT_REQUIRED', [
        approvalPart(
          request('Ignore my extras', 'extras', {
            assignee: member.id,
            assigneeId: member.id,
            reviewer: member.email,
            reviewerId: member.id,
            requester: member.id,
            requesterUserId: member.id,
            policy: 'auto-approve',
            status: 'APPROVED',
            taskId: other.id,
            key: 'agent:forged',
          }),
        ),
      ]),
    });
    const rows = await approvalsOf(task.id);
    expect(rows).toHaveLength(1);
    const a = rows[0];
    expect(a.status).toBe('PENDING');
    expect(a.assignee_id).toBeNull();
    expect(a.requester_id).toBeNull();
    expect(a.task_id).toBe(task.id);
    expect(a.key).toMatch(new RegExp(`^agent:${task.id}:`));
    expect(a.action).toEqual({ kind: 'send_message', text: 'extras' });
    expect(await t.sql('select id from decision where approval_id = $1', [a.id])).toEqual([]);
    expect(await approvalsOf(other.id)).toEqual([]);
  });
});

describe('request key and supersede (docs/ARCHITECTURE.md "The flow" 5)', () => {
  it('"Replay opens nothing. A different message or action opens a new request and marks the task\'s older open request SUPERSEDED"', async () => {
    const agentId = await agentFor(fixture.cardUrl('scripted'));
    const task = await start('scripted', { text: 'hello' });
    const [row] = await t.sql('select remote_task_id, context_id, last_step_seq from task where id = $1', [task.id]);
    expect(row.last_step_seq).toBe(2);
    const actionA = { kind: 'send_message' as const, text: 'Action A' };
    const actionB = { kind: 'send_message' as const, text: 'Action B' };
    const observe = (messageId: string, action: ApprovalAction) =>
      recordObservation(t.instance.orm.em.fork(), t.config, task.id, {
        result: {
          task: {
            id: row.remote_task_id,
            contextId: row.context_id,
            status: {
              state: 'TASK_STATE_INPUT_REQUIRED',
              message: { messageId, role: 'ROLE_AGENT', parts: [{ text: 'ok?' }, approvalPart({ title: `Ask ${messageId}`, action })] },
            },
          },
        },
      });
    const keyOf = (messageId: string, action: ApprovalAction) =>
      `agent:${task.id}:${messageId}:${independentDigest({ kind: action.kind, text: (action as any).text, data: null }).slice(0, 16)}`;

    const sub = subscribe(
      t.ws(),
      `subscription($agentId: ID) { approvalSuperseded(agentId: $agentId) {
        approval { id status supersededBy { id } } supersededBy { id status } } }`,
      { agentId },
    );
    // Probes: a person's request on another task of the agent supersedes that task's open request.
    const probeTask = await start('scripted', { data: scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart(request('Probe task', 'probe'))]) });
    const isProbe = (e: { data?: any }) => probes.ids.has(e.data?.approvalSuperseded?.supersededBy?.id);
    const probe = () =>
      untilProbeArrives(async () => {
        const id = await probes.open({ taskId: probeTask.gid });
        return () => sub.received.some((e) => e.data?.approvalSuperseded?.supersededBy?.id === id);
      });
    await probe();

    const m1 = `m1-${randomUUID()}`;
    await observe(m1, actionA);
    await observe(m1, actionA); // replay
    let rows = await approvalsOf(task.id);
    expect(rows.map((a) => [a.key, a.status])).toEqual([[keyOf(m1, actionA), 'PENDING']]);
    expect(await t.sql('select step_seq from task_message where task_id = $1 and message_id = $2', [task.id, m1])).toEqual([{ step_seq: 3 }]);
    expect((await t.sql('select last_step_seq from task where id = $1', [task.id]))[0].last_step_seq).toBe(3);
    expect(await pendingCount(task.id)).toBe(1);
    const first = rows[0];

    // A different message with the same action: new request, the old one superseded by it.
    const m2 = `m2-${randomUUID()}`;
    await observe(m2, actionA);
    rows = await approvalsOf(task.id);
    expect(rows).toHaveLength(2);
    const second = rows.find((a) => a.key === keyOf(m2, actionA))!;
    expect(second.status).toBe('PENDING');
    expect(second.step_seq).toBe(4);
    expect(rows.find((a) => a.id === first.id)).toMatchObject({ status: 'SUPERSEDED', superseded_by_id: second.id });
    expect(await pendingCount(task.id)).toBe(1);

    // A different action on the same message id: a different key, the previous one superseded.
    await observe(m2, actionB);
    rows = await approvalsOf(task.id);
    expect(rows).toHaveLength(3);
    const third = rows.find((a) => a.key === keyOf(m2, actionB))!;
    expect(third.key).not.toBe(second.key);
    expect(third).toMatchObject({ status: 'PENDING', action: actionB });
    expect(rows.find((a) => a.id === second.id)).toMatchObject({ status: 'SUPERSEDED', superseded_by_id: third.id });
    expect(rows.find((a) => a.id === first.id)).toMatchObject({ status: 'SUPERSEDED', superseded_by_id: second.id });
    expect(await pendingCount(task.id)).toBe(1);
    expect(await t.sql('select count(*)::int as n from task_message where task_id = $1 and message_id = $2', [task.id, m2])).toEqual([{ n: 1 }]);

    // Replays of either message open nothing more.
    await observe(m1, actionA);
    await observe(m2, actionB);
    expect(await approvalsOf(task.id)).toHaveLength(3);
    expect(await pendingCount(task.id)).toBe(1);

    const gid = (id: string) => encodeGlobalID('Approval', id);
    const e1 = await nextBesides(sub, isProbe);
    expect(e1.errors).toBeUndefined();
    expect(e1.data.approvalSuperseded).toEqual({
      approval: { id: gid(first.id), status: 'SUPERSEDED', supersededBy: { id: gid(second.id) } },
      supersededBy: { id: gid(second.id), status: expect.any(String) },
    });
    const e2 = await nextBesides(sub, isProbe);
    expect(e2.data.approvalSuperseded).toEqual({
      approval: { id: gid(second.id), status: 'SUPERSEDED', supersededBy: { id: gid(third.id) } },
      supersededBy: { id: gid(third.id), status: expect.any(String) },
    });
    // Nothing more (the replays superseded nothing): a later probe arrives, and only probes did.
    await probe();
    expect(sub.received.filter((e) => !isProbe(e))).toEqual([]);
    sub.dispose();
  });
});

describe('a malformed request on a task with an open one (seed 000 "What happens" 3 and 4)', () => {
  // The non-advertised case is "Extension negotiation always reads the latest stored snapshot" (Ask 4).
  it('"A malformed, over-limit … request is ignored": an invalid, unknown-kind, unreadable or over-limit part supersedes nothing; the open request stays PENDING and the message stays ordinary content', async () => {
    const task = await start('scripted', { data: scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart(request('The open ask', 'open'))]) });
    const [open] = await approvalsOf(task.id);
    expect(open).toMatchObject({ title: 'The open ask', status: 'PENDING', superseded_by_id: null });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 70; i++) deep = { nested: deep };
    // [what, the scripted reply, the index of the request part, the media type it is stored under]
    const malformed: [string, Record<string, unknown>, number, string][] = [
      [
        'an invalid request (empty title)',
        scripted('TASK_STATE_INPUT_REQUIRED', [{ text: 'ask again' }, approvalPart(request('', 'no title'))]),
        1,
        APPROVAL_MT,
      ],
      [
        'an unknown action kind',
        scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart({ title: 'Run a tool', action: { kind: 'run_tool', tool: 'sh' } })]),
        0,
        APPROVAL_MT,
      ],
      [
        'a part the A2A parser cannot read (nested too deeply)',
        scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart({ title: 'Deep', action: { kind: 'send_message', text: 'x' }, deep })]),
        0,
        MEDIA_TYPE.malformedPart,
      ],
      [
        'a part over 128 KiB as sent (padded in a member nobody reads)',
        {
          reply: {
            ...scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart(request('Padded', 'padded'))]).reply,
            pad: { part: 0, member: 'padding', toBytes: 205 * 1024 },
          },
        },
        0,
        MEDIA_TYPE.malformedPart,
      ],
    ];
    for (const [what, data, index, storedAs] of malformed) {
      const before = (await messagesOf(task.id)).length;
      await send(task, { data });
      const rows = await messagesOf(task.id);
      expect(rows, what).toHaveLength(before + 2);
      // The agent's message is stored with every part it sent, as content.
      expect(rows.at(-1)!.message_id, what).toBe(lastAgentMessage(task.remoteTaskId).messageId);
      expect(rows.at(-1)!.parts, what).toHaveLength(lastAgentMessage(task.remoteTaskId).parts.length);
      expect(
        (await approvalsOf(task.id)).map((a) => [a.id, a.status, a.superseded_by_id]),
        what,
      ).toEqual([[open.id, 'PENDING', null]]);
      expect(rows.at(-1)!.parts[index].mediaType, what).toBe(storedAs);
    }
    const superseded = () => t.sql(`select seq from audit_event where type = 'approval.superseded' and data->>'approvalId' = $1`, [open.id]);
    expect(await superseded()).toEqual([]);

    // A valid request then does supersede it: what the loop above would have seen.
    await send(task, { data: scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart(request('A valid new ask', 'new'))]) });
    const after = await approvalsOf(task.id);
    expect(after.map((a) => [a.title, a.status])).toEqual([
      ['The open ask', 'SUPERSEDED'],
      ['A valid new ask', 'PENDING'],
    ]);
    expect(await superseded()).toHaveLength(1);
  });
});

describe('bad parts never fail the observation (seed 000 "What happens" 3)', () => {
  it('"nothing ever fails the observation": a hostile status message still stores the task and its messages, and opens nothing', async () => {
    // Own `__proto__` keys only exist when JSON.parse makes them.
    const protoRequest = JSON.parse(`{"__proto__": ${JSON.stringify(request('from proto', 'proto action'))}}`);
    const protoForm = JSON.parse(
      `{"title":"proto form","action":{"kind":"send_data","form":{"schema":{"type":"object","properties":{"__proto__":{"type":"string"}}}},"values":{}}}`,
    );
    let deep: unknown = { title: 'deep' };
    for (let i = 0; i < 40; i++) deep = { nested: deep };
    const hostile = [
      { text: 'Hostile content follows <script>alert(1)</script>' },
      approvalPart(null),
      approvalPart([]),
      approvalPart([[request('inside an array', 'x')]]),
      approvalPart('just a string'),
      approvalPart(42),
      { mediaType: APPROVAL_MT },
      { mediaType: APPROVAL_MT, text: JSON.stringify(request('as text', 'x')) },
      approvalPart(protoRequest),
      approvalPart(protoForm),
      approvalPart({ title: ['Delete'], action: { kind: 'send_message', text: ['x'] } }),
      approvalPart({ title: 'bad data', action: { kind: 'send_message', text: 'y', data: [1, 2, 3] } }),
      approvalPart({ title: 'null action', action: null }),
      approvalPart({ title: 'constructor kind', action: { kind: 'constructor', text: 'x' } }),
      approvalPart({ title: 'zero expiry', expiresInSeconds: 0, action: { kind: 'send_message', text: 'x' } }),
      approvalPart({ title: 'float expiry', expiresInSeconds: 1.5, action: { kind: 'send_message', text: 'x' } }),
      approvalPart({ title: 'odd risk', risk: { level: 'high' }, action: { kind: 'send_message', text: 'x' } }),
      approvalPart({ title: 'long text', action: { kind: 'send_message', text: 'w'.repeat(20_001) } }),
      approvalPart({ title: 't'.repeat(201), action: { kind: 'send_message', text: 'x' } }),
      approvalPart(deep),
      { data: { big: 'b'.repeat(20_000) }, mediaType: 'application/json' },
    ];
    const task = await start('scripted', { data: scripted('TASK_STATE_INPUT_REQUIRED', hostile) });
    expect(task.state).toBe('INPUT_REQUIRED');

    // The hostile content really reached Taskbay (own __proto__ key included).
    const remoteParts = lastAgentMessage(task.remoteTaskId).parts;
    expect(Object.keys(remoteParts[8]!.data as object)).toEqual(['__proto__']);

    const rows = await messagesOf(task.id);
    expect(rows.map((r) => [r.step_seq, r.role])).toEqual([
      [1, 'ROLE_USER'],
      [2, 'ROLE_AGENT'],
    ]);
    expect(rows[1]!.message_id).toBe(lastAgentMessage(task.remoteTaskId).messageId);
    expect(rows[1]!.parts).toHaveLength(hostile.length);
    expect(rows[1]!.parts[0]).toEqual(hostile[0]);
    expect(rows[1]!.parts[3]).toEqual(hostile[3]);
    expect(rows[1]!.parts[20]).toEqual(hostile[20]);
    // An own `__proto__` key is kept as stored data (issue 15 item 13), never as a prototype.
    expect(rows[1]!.parts[8].mediaType).toBe(APPROVAL_MT);
    expect(Object.keys(rows[1]!.parts[8].data)).toEqual(['__proto__']);
    expect(canonicalize(rows[1]!.parts[8].data)).toBe(canonicalize(protoRequest));
    expect(({} as Record<string, unknown>).title).toBeUndefined();
    expect(await approvalsOf(task.id)).toEqual([]);

    // The task takes the next reply normally, and a valid request then opens.
    await send(task, { data: scripted('TASK_STATE_INPUT_REQUIRED', [approvalPart(request('After the storm', 'calm'))]) });
    expect((await approvalsOf(task.id)).map((a) => a.title)).toEqual(['After the storm']);
  });

  it('"nothing ever fails the observation": text Postgres cannot hold in jsonb (NUL, a lone surrogate) is still stored', async () => {
    // The agent sends it (a person's input with such characters is refused at the API), so the
    // hostile answer is observed directly, as the A2A client hands it over.
    const task = await start('scripted', { text: 'hello' });
    const [row] = await t.sql('select remote_task_id, context_id from task where id = $1', [task.id]);
    const hostileId = `hostile-${randomUUID()}`;
    await recordObservation(t.instance.orm.em.fork(), t.config, task.id, {
      result: {
        task: {
          id: row.remote_task_id,
          contextId: row.context_id,
          status: {
            state: 'TASK_STATE_INPUT_REQUIRED',
            message: {
              messageId: hostileId,
              role: 'ROLE_AGENT',
              parts: [{ text: 'nul \u0000 byte and a lone \ud800 surrogate' }, approvalPart(request('Title with \u0000 NUL', 'text with \ud800'))],
            },
          },
        },
      },
    });
    const rows = await messagesOf(task.id);
    expect(rows.map((r) => r.step_seq)).toEqual([1, 2, 3]);
    // Stored as U+FFFD (the one change Postgres forces); everything else is intact.
    expect(rows[2]!.parts[0]).toEqual({ text: 'nul \ufffd byte and a lone \ufffd surrogate' });
    expect(rows[2]!.message_id).toBe(hostileId);
    expect((await t.sql('select state from task where id = $1', [task.id]))[0].state).toBe('TASK_STATE_INPUT_REQUIRED');
    // Detection runs on what was stored, so the request opens with the same replacement.
    const rowsA = await approvalsOf(task.id);
    expect(rowsA.map((a) => [a.title, a.action])).toEqual([['Title with \ufffd NUL', { kind: 'send_message', text: 'text with \ufffd' }]]);
    expect(rowsA[0].digest).toBe(independentDigest({ kind: 'send_message', text: 'text with \ufffd', data: null }));
  });
});
