import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalKeys } from '../../../src/approval-signing/keys.js';
import { deliveryMessageId } from '../../../src/delivery/queue.js';
import { deliver } from '../../../src/delivery/worker.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, eventually, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';

// Delivery (docs/ARCHITECTURE.md "The flow" 7-8; "Rules that must hold"): "Delivery happens at most once per
// decision as seen by a cooperating agent (same messageId on retry) and at least once unless the
// agent keeps failing (then FAILED, visible, retryable by a reviewer)."
//
// The instance runs with TASKBAY_DELIVERY_MAX_ATTEMPTS=2: one failure is retried (graphile-worker
// backs off about e^1 s), two failures make the delivery FAILED.

const APPROVAL_MEDIA_TYPE = 'application/vnd.agent-taskbay.approval-request+json';
const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]+$/;
const MAX_ATTEMPTS = 2;

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;
let scriptedId: string;

const APPROVAL_QUERY = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} } }`;
const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { ${OPS.approvalFields} } } } }`;
const TASK_MESSAGES = `query($id: ID!) { task(id: $id) { state messages { role parts messageId metadata } } }`;
const RETRY = `mutation($id: ID!) { retryDelivery(approvalId: $id) { id status execution { status attempts messageId lastError } } }`;

const getApproval = async (id: string) => ok(await t.gql(APPROVAL_QUERY, { id })).approval;

async function openRequest(agentId: string, input: { text?: string; data?: unknown }) {
  const task = ok(await t.gql(OPS.startTask, { agentId, ...input })).startTask;
  expect(task.state).toBe('INPUT_REQUIRED');
  const edges = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
  expect(edges).toHaveLength(1);
  const approval = edges[0].node;
  return { taskId: task.id as string, remoteTaskId: task.remoteTaskId as string, approval, uuid: rawId(approval.id) };
}

const approve = async (a: { id: string; revision: number; digest: string }, token?: string) =>
  ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }, token)).approve;

const deliveredFor = (uuid: string) => agent.received.filter((r) => (r.message.metadata as any)?.approval?.requestId === uuid);

async function waitExecution(id: string, status: 'DELIVERED' | 'FAILED', timeoutMs = 20_000) {
  return eventually(async () => {
    const a = await getApproval(id);
    return a.execution?.status === status ? a : null;
  }, timeoutMs);
}

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance({ env: { TASKBAY_DELIVERY_MAX_ATTEMPTS: String(MAX_ATTEMPTS) } });
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  scriptedId = ok(await t.gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('what the approved message carries (seed 000)', () => {
  it('metadata.approval = {requestId, decisionId, revision, revisionDigest}; send_message data under metadata.decision; same task and context', async () => {
    const data = { ticket: 'OPS-42', nodes: ['web-1', 'web-2'], drain: { seconds: 30, force: false } };
    const text = 'Approved. Drain web-1 and web-2.';
    const o = await openRequest(scriptedId, {
      data: {
        reply: {
          state: 'TASK_STATE_INPUT_REQUIRED',
          parts: [
            { text: 'May I drain two nodes?' },
            {
              mediaType: APPROVAL_MEDIA_TYPE,
              data: { title: 'Drain two nodes', risk: 'medium', expiresInSeconds: 600, action: { kind: 'send_message', text, data } },
            },
          ],
        },
      },
    });
    expect(o.approval.action).toEqual({ kind: 'send_message', text, data });
    const decision = await approve(o.approval);
    const a = await waitExecution(o.approval.id, 'DELIVERED');

    const [row] = await t.sql(`select id from approval where key like $1`, [`agent:${rawId(o.taskId)}:%`]);
    expect(row.id).toBe(o.uuid);
    const [dec] = await t.sql(`select id from decision where approval_id = $1`, [o.uuid]);
    expect(dec.id).toBe(decision.id);

    const got = deliveredFor(o.uuid);
    expect(got).toHaveLength(1);
    const m = got[0]!.message;
    // Seed 000's four fields as they are, and Taskbay's signature beside them (approval-signing/approved-message.test.ts verifies it).
    expect(m.metadata).toEqual({
      approval: { requestId: row.id, decisionId: dec.id, revision: 1, revisionDigest: o.approval.digest, signature: expect.stringMatching(COMPACT_JWS) },
      decision: data,
    });
    expect(m.parts).toEqual([{ text }]);
    expect(m.role).toBe('ROLE_USER');
    const remote = agent.getTask(o.remoteTaskId)!;
    expect(m.taskId).toBe(remote.id);
    expect(m.contextId).toBe(remote.contextId);
    // The messageId is derived from the decision id (so a retry is the same message), recorded
    // on the delivery row, and a UUID as A2A clients expect.
    expect(m.messageId).toBe(deliveryMessageId(decision.id));
    const [stored] = await t.sql(`select message_id from delivery where decision_id = $1`, [decision.id]);
    expect(stored.message_id).toBe(m.messageId);
    expect(m.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.execution).toMatchObject({ status: 'DELIVERED', attempts: 1, messageId: m.messageId, lastError: null, observedTaskState: 'COMPLETED' });
    // The agent recomputed the digest including data (it answers FAILED on a mismatch), and it is
    // seed 000's digest of what was approved, computed here without the product's code.
    const digest = sha256(canon({ kind: 'send_message', text, data }));
    expect(o.approval.digest).toBe(digest);
    const task = ok(await t.gql(TASK_MESSAGES, { id: o.taskId })).task;
    expect(task.messages.at(-1).parts).toEqual([{ text: `Done. Approved revision 1, digest ${digest}` }]);
  });

  it('a send_message action without data carries no metadata.decision', async () => {
    const o = await openRequest(showcaseId, { text: 'approve' });
    const decision = await approve(o.approval);
    await waitExecution(o.approval.id, 'DELIVERED');
    const [got] = deliveredFor(o.uuid);
    expect(Object.keys(got!.message.metadata!)).toEqual(['approval']);
    expect(got!.message.metadata!.approval).toEqual({
      requestId: o.uuid,
      decisionId: decision.id,
      revision: 1,
      revisionDigest: o.approval.digest,
      signature: expect.stringMatching(COMPACT_JWS),
    });
  });
});

describe('retries: "the same messageId on retry"', () => {
  it('a failed first attempt is retried with backoff and ends DELIVERED with attempts 2 and the same messageId', async () => {
    const o = await openRequest(showcaseId, { text: 'approve' });
    agent.failNext('showcase', 1);
    const started = Date.now();
    const decision = await approve(o.approval);
    const expected = deliveryMessageId(decision.id);

    // After the first (failed) attempt: still QUEUED, one attempt, the error visible.
    const failedOnce = await eventually(async () => {
      const a = await getApproval(o.approval.id);
      return a.execution?.attempts === 1 && a.execution.lastError ? a : null;
    });
    expect(failedOnce.execution).toMatchObject({ status: 'QUEUED', messageId: expected });
    expect(failedOnce.execution.lastError).toMatch(/503/);
    expect(deliveredFor(o.uuid)).toEqual([]);

    const a = await waitExecution(o.approval.id, 'DELIVERED');
    // graphile-worker's backoff after the first failure is about e^1 seconds. A lower bound only:
    // the retry waited its backoff (it was not retried at once); the wait above sets no upper one.
    expect(Date.now() - started).toBeGreaterThan(2000);
    expect(a.execution).toMatchObject({ status: 'DELIVERED', attempts: 2, messageId: expected, lastError: null, observedTaskState: 'COMPLETED' });
    const got = deliveredFor(o.uuid);
    expect(got).toHaveLength(1);
    expect(got[0]!.duplicate).toBe(false);
    expect(got[0]!.message.messageId).toBe(a.execution.messageId);
    const [row] = await t.sql(`select message_id, attempts, status from delivery where approval_id = $1`, [o.uuid]);
    expect(row).toEqual({ message_id: expected, attempts: 2, status: 'DELIVERED' });
  });

  it('an agent that keeps failing makes the delivery FAILED (visible); of two concurrent retryDelivery clicks one queues, and it is delivered once', async () => {
    const operator = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: operator.id, agentId: showcaseId, permission: 'OPERATE' }));
    const watcher = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: watcher.id, agentId: showcaseId, permission: 'VIEW' }));

    const o = await openRequest(showcaseId, { text: 'approve' });
    // Not FAILED yet: nothing to retry.
    expect(codeOf(await t.gql(RETRY, { id: o.approval.id }, operator.token))).toBe('BAD_USER_INPUT');

    agent.failNext('showcase', 10);
    const decision = await approve(o.approval, operator.token);
    const expected = deliveryMessageId(decision.id);
    const failed = await waitExecution(o.approval.id, 'FAILED');
    expect(failed.status).toBe('APPROVED');
    expect(failed.execution).toMatchObject({ status: 'FAILED', attempts: MAX_ATTEMPTS, messageId: expected });
    expect(failed.execution.lastError).toMatch(/HTTP 503/);
    expect(deliveredFor(o.uuid)).toEqual([]);
    const events = ok(await t.gql(`query($id: ID!) { approval(id: $id) { events { type } } }`, { id: o.approval.id })).approval.events;
    expect(events.map((e: any) => e.type)).toContain('delivery.failed');

    // Retry is for operators only, and only of this tenant's visible requests.
    expect(codeOf(await t.gql(RETRY, { id: o.approval.id }, watcher.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(RETRY, { id: o.approval.id }, null))).toBe('UNAUTHENTICATED');
    expect((await getApproval(o.approval.id)).execution.status).toBe('FAILED');

    // The agent recovers (pending injected failures cleared; its tasks are kept).
    agent.failNext('showcase', 0);
    // Two reviewers click retry at once: one retry is queued, the other is told it is not FAILED any more.
    const clicks = await Promise.all([t.gql(RETRY, { id: o.approval.id }, operator.token), t.gql(RETRY, { id: o.approval.id })]);
    const accepted = clicks.filter((r) => !r.errors);
    expect(accepted).toHaveLength(1);
    expect(clicks.filter((r) => r.errors).map(codeOf)).toEqual(['BAD_USER_INPUT']);
    expect(accepted[0]!.data.retryDelivery.execution.status).toBe('QUEUED');
    const retriedEvents = ok(await t.gql(`query($id: ID!) { approval(id: $id) { events { type } } }`, { id: o.approval.id })).approval.events;
    expect(retriedEvents.filter((e: any) => e.type === 'delivery.retried')).toHaveLength(1);
    // A second click while QUEUED is refused: one retry at a time.
    expect(codeOf(await t.gql(RETRY, { id: o.approval.id }, operator.token))).toBe('BAD_USER_INPUT');

    const a = await waitExecution(o.approval.id, 'DELIVERED');
    expect(a.execution).toMatchObject({
      status: 'DELIVERED',
      attempts: MAX_ATTEMPTS + 1,
      messageId: expected,
      lastError: null,
      observedTaskState: 'COMPLETED',
    });
    const got = deliveredFor(o.uuid);
    expect(got).toHaveLength(1);
    expect(got[0]!.duplicate).toBe(false);
    expect(got[0]!.message.messageId).toBe(expected);
    expect(await t.sql(`select count(*)::int as n from delivery where approval_id = $1`, [o.uuid])).toEqual([{ n: 1 }]);
    const types = ok(await t.gql(`query($id: ID!) { approval(id: $id) { events { type actorId } } }`, { id: o.approval.id })).approval.events;
    expect(types.map((e: any) => e.type).slice(-2)).toEqual(['delivery.retried', 'delivery.delivered']);
    expect(types.filter((e: any) => e.type === 'delivery.retried')).toHaveLength(1);
    const adminId = rawId(ok(await t.gql(`{ viewer { id } }`)).viewer.id);
    expect(types.find((e: any) => e.type === 'delivery.retried').actorId).toBe(clicks[0]!.errors ? adminId : rawId(operator.id));
  });

  it('a crash-like redelivery sends the same messageId and signature again and the agent marks it duplicate; the transcript keeps it once', async () => {
    const o = await openRequest(showcaseId, { text: 'approve' });
    const decision = await approve(o.approval);
    const first = await waitExecution(o.approval.id, 'DELIVERED');
    const [d] = await t.sql(`select id, message_id, approval_signature from delivery where approval_id = $1`, [o.uuid]);
    expect(d.message_id).toBe(deliveryMessageId(decision.id));

    // A DELIVERED delivery is not sent again by the worker's job function.
    await deliver(t.instance.orm.em.fork(), t.instance.deps, d.id, { kind: 'job', jobId: 'crash-like' });
    expect(deliveredFor(o.uuid)).toHaveLength(1);

    // Simulate a crash after sending but before recording: the row is back to QUEUED, the job runs
    // again (twice), the second time after a key rotation: the stored signature is sent again.
    const rotated = { ...t.instance.deps, approvalKeys: await approvalKeys(generateKeyPairSync('ed25519').privateKey, [], t.config.publicUrl) };
    for (const deps of [t.instance.deps, rotated]) {
      await t.sql(`update delivery set status = 'QUEUED' where id = $1`, [d.id]);
      await deliver(t.instance.orm.em.fork(), deps, d.id, { kind: 'job', jobId: 'crash-like' });
    }
    const got = deliveredFor(o.uuid);
    expect(got.map((r) => [r.message.messageId, r.duplicate, (r.message.metadata as any).approval.signature])).toEqual([
      [d.message_id, false, d.approval_signature],
      [d.message_id, true, d.approval_signature],
      [d.message_id, true, d.approval_signature],
    ]);
    expect(d.approval_signature).toMatch(COMPACT_JWS);
    const after = await getApproval(o.approval.id);
    expect(after.execution).toMatchObject({
      status: 'DELIVERED',
      attempts: first.execution.attempts + 2,
      messageId: d.message_id,
      observedTaskState: 'COMPLETED',
    });
    const task = ok(await t.gql(TASK_MESSAGES, { id: o.taskId })).task;
    expect(task.messages.filter((m: any) => m.messageId === d.message_id)).toHaveLength(1);
    expect(task.messages.filter((m: any) => m.role === 'AGENT' && /^Done\. Approved/.test(m.parts[0]?.text))).toHaveLength(1);
    expect(task.state).toBe('COMPLETED');
  });
});
