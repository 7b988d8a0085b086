import { encodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FixtureAgent } from '../../../src/fixture-agent/server.js';
import { APPROVAL_LIMITS } from '../../../src/limits.js';
import {
  OPS,
  codeOf,
  createMember,
  eventually,
  hasEvent,
  idOf,
  nextBesides,
  probeRequests,
  startTestInstance,
  subscribe,
  untilProbeArrives,
  type GqlResult,
  type TestInstance,
  rawId,
} from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';
import { startWithFixtureAgent, stopAll, askingForApproval } from '../../support/fixture-agent.js';

// The end of a request's life without a decision (docs/ARCHITECTURE.md "The flow" 9: expiry, a task that
// ends first) and requests a person opens (createApproval). Real Postgres, the real worker,
// the real fixture agent.

let t: TestInstance;
let fixture: FixtureAgent;

beforeAll(async () => {
  ({ t, fixture } = await startWithFixtureAgent());
});
afterAll(() => stopAll(t, fixture));

// ---------------------------------------------------------------------------------------------
// Helpers

const scripted = (state: string, parts: unknown[]) => ({ reply: { state, parts } });
const asks = (title: string, text: string, extra: Record<string, unknown> = {}) =>
  askingForApproval({ title, action: { kind: 'send_message', text }, ...extra });

const SEND = `mutation($taskId: ID!, $text: String, $data: JSON) {
  sendTaskMessage(input: { taskId: $taskId, text: $text, data: $data }) { id state } }`;
const CREATE = `mutation($input: CreateApprovalInput!) { createApproval(input: $input) {
  id key source status title summary risk stepSeq createdAt expiresAt requester { id } agent { id } task { id } } }`;
const APPROVAL = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} createdAt closedAt supersededBy { id }
  events { type actorType data } } }`;

const gid = (id: string) => encodeGlobalID('Approval', id);
const probes = probeRequests(() => t);

async function register(inst: TestInstance, cardUrl: string): Promise<string> {
  const r = await inst.gql(OPS.register, { url: cardUrl });
  expect(r.errors).toBeUndefined();
  return r.data.registerAgent.id;
}

let scriptedAgent: string | undefined;
async function scriptedAgentId() {
  scriptedAgent ??= await register(t, fixture.cardUrl('scripted'));
  return scriptedAgent;
}

interface StartedTask {
  gid: string;
  id: string;
  remoteTaskId: string;
}

async function startTask(inst: TestInstance, agentId: string, data: unknown): Promise<StartedTask> {
  const r = await inst.gql(OPS.startTask, { agentId, data });
  expect(r.errors).toBeUndefined();
  const [row] = await inst.sql('select id from task where remote_task_id = $1', [r.data.startTask.remoteTaskId]);
  return { gid: r.data.startTask.id, id: row.id, remoteTaskId: r.data.startTask.remoteTaskId };
}

const approvalsOf = (taskId: string, inst = t) => inst.sql('select * from approval where task_id = $1 order by created_at', [taskId]);
const approvalRow = async (id: string) => (await t.sql('select * from approval where id = $1', [id]))[0];
const ttlSeconds = async (inst: TestInstance, id: string) =>
  Number((await inst.sql('select extract(epoch from expires_at - created_at)::float8 as s from approval where id = $1', [id]))[0].s);
const approvalCount = async () => Number((await t.sql('select count(*)::int as n from approval'))[0].n);
const deliveredTo = (remoteTaskId: string) =>
  fixture.received.filter((r) => r.taskId === remoteTaskId && r.message.metadata && 'approval' in r.message.metadata);

async function decide(op: string, approvalId: string, token?: string) {
  const g = await t.gql(APPROVAL, { id: gid(approvalId) });
  expect(g.errors).toBeUndefined();
  const { revision, digest } = g.data.approval;
  return t.gql(op, { id: gid(approvalId), revision, digest }, token);
}

// ---------------------------------------------------------------------------------------------

describe('expiry (docs/ARCHITECTURE.md "The flow" 9)', () => {
  it('"If ... the request expires, before a decision, the request becomes EXPIRED and nothing is sent": the expiry sweeper expires it, approvalChanged reports it, an approval.expired event is recorded', async () => {
    // An agent of its own (same fixture variant, another card URL) keeps the subscription quiet.
    const agentId = await register(t, `${fixture.cardUrl('scripted')}?for=expiry`);
    const sub = subscribe(t.ws(), `subscription($agentId: ID) { approvalChanged(agentId: $agentId) { id status } }`, { agentId });
    // Live once a person's request naming the agent (a probe) reaches it.
    await untilProbeArrives(async () => {
      const id = await probes.open({ agentId });
      return () => hasEvent(sub, 'approvalChanged', id);
    });
    const isProbe = (e: GqlResult) => probes.ids.has(idOf(e, 'approvalChanged')!);

    const task = await startTask(t, agentId, asks('Expires in a second', 'Too late.', { expiresInSeconds: 1 }));
    const [a] = await approvalsOf(task.id);
    expect(a.status).toBe('PENDING');
    expect(await ttlSeconds(t, a.id)).toBe(1);

    await eventually(async () => (await approvalRow(a.id)).status === 'EXPIRED', 10_000);
    const expired = await approvalRow(a.id);
    expect(expired.closed_at.getTime()).toBeGreaterThanOrEqual(expired.expires_at.getTime());

    const events = await t.sql(`select type, actor_type from audit_event where stream = $1 order by seq`, [`approval:${a.id}`]);
    expect(events).toEqual([
      { type: 'approval.requested', actor_type: 'agent' },
      { type: 'approval.expired', actor_type: 'system' },
    ]);
    const g = await t.gql(APPROVAL, { id: gid(a.id) });
    expect(g.data.approval.status).toBe('EXPIRED');
    expect(g.data.approval.events.map((e: { type: string }) => e.type)).toContain('approval.expired');

    // approvalChanged: first the request, then its expiry.
    const seen: { id: string; status: string }[] = [];
    while (!seen.some((e) => e.status === 'EXPIRED')) {
      const e = await nextBesides(sub, isProbe);
      expect(e.errors).toBeUndefined();
      seen.push(e.data.approvalChanged);
    }
    expect(seen.map((e) => e.id)).toEqual(seen.map(() => gid(a.id)));
    sub.dispose();

    // Nothing is ever delivered: a late decision is refused and no delivery exists. (A delivery
    // and its job are only ever written in the decision's own transaction, so there is nothing
    // to wait for: no decision row, no delivery, ever.)
    expect(codeOf(await decide(OPS.approve, a.id))).toBe('EXPIRED');
    expect(await t.sql('select id from delivery where approval_id = $1', [a.id])).toEqual([]);
    expect(await t.sql('select id from decision where approval_id = $1', [a.id])).toEqual([]);
    expect(deliveredTo(task.remoteTaskId)).toEqual([]);
  });

  it('"expiresInSeconds ... (absent: the configured default, 7 days)"', async () => {
    expect(t.config.defaultApprovalTtlSeconds).toBe(APPROVAL_LIMITS.defaultTtlSeconds);
    const task = await startTask(t, await scriptedAgentId(), asks('No expiry given', 'Fine.'));
    const [a] = await approvalsOf(task.id);
    expect(await ttlSeconds(t, a.id)).toBe(7 * 24 * 3600);
  });

  it('"TASKBAY_DEFAULT_APPROVAL_TTL (seconds)" replaces the default for agent and person requests', async () => {
    const other = await startTestInstance({ env: { TASKBAY_DEFAULT_APPROVAL_TTL: '120' }, worker: false });
    try {
      const agentId = await register(other, fixture.cardUrl('scripted'));
      const task = await startTask(other, agentId, asks('Default TTL', 'Fine.'));
      const [a] = await approvalsOf(task.id, other);
      expect(await ttlSeconds(other, a.id)).toBe(120);
      const created = await other.gql(CREATE, { input: { title: 'Person, default TTL', action: { kind: 'send_message', text: 'ok' } } });
      expect(created.errors).toBeUndefined();
      const { createdAt, expiresAt } = created.data.createApproval;
      expect(new Date(expiresAt).getTime() - new Date(createdAt).getTime()).toBe(120_000);
      // An explicit expiresInSeconds still wins.
      const explicit = await startTask(other, agentId, asks('Explicit', 'Fine.', { expiresInSeconds: 60 }));
      expect(await ttlSeconds(other, (await approvalsOf(explicit.id, other))[0].id)).toBe(60);
    } finally {
      await other.stop();
    }
  });
});

describe('a task that ends first (docs/ARCHITECTURE.md "The flow" 9)', () => {
  it.each(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED'])(
    '"If the task reaches a terminal state ... before a decision, the request becomes SUPERSEDED and nothing is sent" (%s)',
    async (state) => {
      const task = await startTask(t, await scriptedAgentId(), asks(`Ends first: ${state}`, 'Never sent.'));
      const [a] = await approvalsOf(task.id);
      expect(a.status).toBe('PENDING');

      const r = await t.gql(SEND, { taskId: task.gid, data: scripted(state, [{ text: 'Finished on my own.' }]) });
      expect(r.errors).toBeUndefined();
      expect(r.data.sendTaskMessage.state).toBe(state.replace('TASK_STATE_', ''));

      const closed = await approvalRow(a.id);
      expect(closed.status).toBe('SUPERSEDED');
      expect(closed.superseded_by_id).toBeNull();
      expect(closed.closed_at).not.toBeNull();
      const g = await t.gql(APPROVAL, { id: gid(a.id) });
      expect(g.data.approval.supersededBy).toBeNull();
      expect(g.data.approval.events.at(-1)).toMatchObject({
        type: 'approval.superseded',
        actorType: 'system',
        data: { supersededById: null },
      });

      // A decision afterwards is refused; nothing is queued or sent.
      expect(codeOf(await decide(OPS.approve, a.id))).toBe('NOT_PENDING');
      expect(codeOf(await decide(OPS.reject, a.id))).toBe('NOT_PENDING');
      expect(await t.sql('select id from delivery where approval_id = $1', [a.id])).toEqual([]);
      expect(deliveredTo(task.remoteTaskId)).toEqual([]);
      expect((await approvalRow(a.id)).status).toBe('SUPERSEDED');
    },
  );
});

describe('createApproval: a person asks others', () => {
  let requester: Awaited<ReturnType<typeof createMember>>;
  let reviewer: Awaited<ReturnType<typeof createMember>>;
  let bystander: Awaited<ReturnType<typeof createMember>>;

  beforeAll(async () => {
    const agentId = await scriptedAgentId();
    requester = await createMember(t);
    reviewer = await createMember(t);
    bystander = await createMember(t); // a member without any grant
    for (const m of [requester, reviewer]) {
      const g = await t.gql(OPS.grant, { userId: m.id, agentId, permission: 'OPERATE' });
      expect(g.errors).toBeUndefined();
    }
  });

  it('with a taskId: requester set, source USER, no key; it supersedes the agent\'s open request ("one live approval per task"); the requester cannot decide; another member approves and the text reaches the agent', async () => {
    const task = await startTask(t, await scriptedAgentId(), asks('Agent asks first', 'Agent text.'));
    const [agentRequest] = await approvalsOf(task.id);
    expect(agentRequest.status).toBe('PENDING');

    const action = { kind: 'send_message', text: 'Ship the release notes as written.' };
    const created = await t.gql(
      CREATE,
      { input: { taskId: task.gid, title: 'Person asks', summary: 'Shipping notes', risk: 'LOW', expiresInSeconds: 600, action } },
      requester.token,
    );
    expect(created.errors).toBeUndefined();
    const c = created.data.createApproval;
    expect(c).toMatchObject({
      key: null,
      source: 'USER',
      status: 'PENDING',
      title: 'Person asks',
      summary: 'Shipping notes',
      risk: 'LOW',
      requester: { id: requester.id },
      task: { id: task.gid },
    });
    const id = rawId(c.id);
    expect((await approvalRow(agentRequest.id)).status).toBe('SUPERSEDED');
    expect((await approvalRow(agentRequest.id)).superseded_by_id).toBe(id);
    const pending = await t.sql(`select id from approval where task_id = $1 and status = 'PENDING'`, [task.id]);
    expect(pending).toEqual([{ id }]);
    const row = await approvalRow(id);
    expect(row).toMatchObject({ requester_id: rawId(requester.id), source: 'USER', key: null, agent_id: rawId(await scriptedAgentId()) });
    expect(row.digest).toBe(sha256(canon({ kind: 'send_message', text: action.text, data: null })));
    const events = await t.sql(`select type, actor_type, actor_id from audit_event where stream = $1`, [`approval:${id}`]);
    expect(events).toEqual([{ type: 'approval.requested', actor_type: 'user', actor_id: rawId(requester.id) }]);

    // "Separation of duties: the requester (when there is one) never decides their own request."
    expect(codeOf(await decide(OPS.approve, id, requester.token))).toBe('SEPARATION_OF_DUTIES');
    expect((await approvalRow(id)).status).toBe('PENDING');

    const approved = await decide(OPS.approve, id, reviewer.token);
    expect(approved.errors).toBeUndefined();
    expect(approved.data.approve.outcome).toBe('APPROVE');

    const [delivered] = await eventually(async () => {
      const got = deliveredTo(task.remoteTaskId);
      return got.length ? got : null;
    }, 10_000);
    expect(delivered!.message.parts).toEqual([{ text: action.text }]);
    expect(delivered!.message.metadata!.approval).toMatchObject({ requestId: id, revision: 1, revisionDigest: row.digest });
    const execution = await eventually(async () => {
      const g = await t.gql(APPROVAL, { id: c.id }, reviewer.token);
      return g.data.approval.execution?.status === 'DELIVERED' ? g.data.approval.execution : null;
    }, 10_000);
    expect(execution.observedTaskState).toBe('COMPLETED');
    expect(deliveredTo(task.remoteTaskId)).toHaveLength(1);
    // The superseded agent request never went anywhere.
    expect(await t.sql('select id from delivery where approval_id = $1', [agentRequest.id])).toEqual([]);
  });

  it('without a taskId or agentId: the requester and admins see it, members (even with OPERATE on an agent) neither see nor decide it, the requester cannot decide, an admin can', async () => {
    const action = { kind: 'send_message', text: 'Buy the new build server.' };
    const created = await t.gql(CREATE, { input: { title: 'Budget request', action } }, requester.token);
    expect(created.errors).toBeUndefined();
    const c = created.data.createApproval;
    expect(c).toMatchObject({ key: null, source: 'USER', status: 'PENDING', agent: null, task: null, requester: { id: requester.id } });
    expect(c.stepSeq).toBeNull();

    const own = await t.gql(APPROVAL, { id: c.id }, requester.token);
    expect(own.data.approval).toMatchObject({ id: c.id, title: 'Budget request', requester: { id: requester.id } });
    for (const m of [bystander, reviewer]) {
      const seen = await t.gql(APPROVAL, { id: c.id }, m.token);
      expect(seen.errors).toBeUndefined();
      expect(seen.data.approval).toBeNull();
      const list = await t.gql(`{ approvals(status: [PENDING]) { edges { node { id } } } }`, {}, m.token);
      expect(list.data.approvals.edges.map((e: { node: { id: string } }) => e.node.id)).not.toContain(c.id);
      expect(codeOf(await decide(OPS.approve, rawId(c.id), m.token))).toBe('NOT_FOUND');
    }

    expect(codeOf(await decide(OPS.approve, rawId(c.id), requester.token))).toBe('SEPARATION_OF_DUTIES');
    expect((await approvalRow(rawId(c.id))).status).toBe('PENDING');
    const approved = await decide(OPS.approve, rawId(c.id), t.adminToken);
    expect(approved.errors).toBeUndefined();
    const after = await t.gql(APPROVAL, { id: c.id });
    expect(after.data.approval).toMatchObject({ status: 'APPROVED', execution: null });
    const [admin] = await t.sql(`select id from app_user where role = 'ADMIN' limit 1`);
    expect(after.data.approval.decisions).toMatchObject([{ outcome: 'APPROVE', reviewer: { id: encodeGlobalID('User', admin.id) } }]);
  });

  it('on a task that already ended: refused (BAD_USER_INPUT), since "if the task reaches a terminal state ... before a decision" no request on it is live', async () => {
    const task = await startTask(t, await scriptedAgentId(), scripted('TASK_STATE_COMPLETED', [{ text: 'All done.' }]));
    const before = await approvalCount();
    const r = await t.gql(CREATE, { input: { taskId: task.gid, title: 'Too late', action: { kind: 'send_message', text: 'Do it anyway.' } } }, requester.token);
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(await approvalCount()).toBe(before);
    expect(await approvalsOf(task.id)).toEqual([]);
  });

  it('invalid input stores nothing: title of 201 characters is BAD_USER_INPUT, an unknown action kind is INVALID_ACTION', async () => {
    const task = await startTask(t, await scriptedAgentId(), asks('Stays open', 'Still here.'));
    const [open] = await approvalsOf(task.id);
    const before = await approvalCount();

    const longTitle = await t.gql(
      CREATE,
      { input: { taskId: task.gid, title: 't'.repeat(201), action: { kind: 'send_message', text: 'ok' } } },
      requester.token,
    );
    expect(codeOf(longTitle)).toBe('BAD_USER_INPUT');
    const atLimit = 't'.repeat(200); // the boundary itself is fine (checked below, after the count)

    const unknownKind = await t.gql(
      CREATE,
      { input: { taskId: task.gid, title: 'Run it', action: { kind: 'run_tool', tool: 'shell', args: { command: 'rm -rf /' } } } },
      requester.token,
    );
    expect(codeOf(unknownKind)).toBe('INVALID_ACTION');
    const noTask = await t.gql(CREATE, { input: { title: 'Run it', action: { kind: 'run_tool' } } }, requester.token);
    expect(codeOf(noTask)).toBe('INVALID_ACTION');

    expect(await approvalCount()).toBe(before);
    expect((await approvalRow(open.id)).status).toBe('PENDING');

    const ok = await t.gql(CREATE, { input: { title: atLimit, action: { kind: 'send_message', text: 'ok' } } }, requester.token);
    expect(ok.errors).toBeUndefined();
    expect(await approvalCount()).toBe(before + 1);
  });
});
