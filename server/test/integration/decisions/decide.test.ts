import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiToken } from '../../../src/auth/credentials.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, eventually, OPS, startTestInstance, untilExpiryPassed, type TestInstance, ok, rawId } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';

// Decisions (docs/ARCHITECTURE.md "The flow" step 6, "Rules that must hold"; seed 000 "What happens" 6-7):
// every refused decision is refused with its contract code AND sends nothing; a request leaves
// PENDING once, in code and in the database.

const APPROVAL_MEDIA_TYPE = 'application/vnd.agent-taskbay.approval-request+json';

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;
let approverId: string;
let scriptedId: string;
let adminUserId: string;
let adminGid: string;

/** Raw uuid behind an opaque (Relay) global id. */

const APPROVAL_QUERY = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} } }`;
const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { ${OPS.approvalFields} } } } }`;
const TASK_MESSAGES = `query($id: ID!) { task(id: $id) { state messages { role parts messageId } } }`;

async function getApproval(id: string, token?: string) {
  return ok(await t.gql(APPROVAL_QUERY, { id }, token)).approval;
}

interface Opened {
  taskId: string;
  remoteTaskId: string;
  approval: any;
  uuid: string;
}

/** Starts a task and returns the request it opened. */
async function openRequest(agentId: string, input: { text?: string; data?: unknown }, token?: string): Promise<Opened> {
  const task = ok(await t.gql(OPS.startTask, { agentId, ...input }, token)).startTask;
  expect(task.state).toBe('INPUT_REQUIRED');
  const edges = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
  expect(edges).toHaveLength(1);
  const approval = edges[0].node;
  expect(approval.status).toBe('PENDING');
  return { taskId: task.id, remoteTaskId: task.remoteTaskId, approval, uuid: rawId(approval.id) };
}

const openShowcase = (token?: string) => openRequest(showcaseId, { text: 'approve' }, token);

function scriptedRequest(request: Record<string, unknown>) {
  return {
    reply: {
      state: 'TASK_STATE_INPUT_REQUIRED',
      parts: [{ text: 'Please approve.' }, { mediaType: APPROVAL_MEDIA_TYPE, data: request }],
    },
  };
}

/** Messages the agent received that carry metadata.approval for this request. */
function deliveredFor(uuid: string) {
  return agent.received.filter((r) => (r.message.metadata as any)?.approval?.requestId === uuid);
}

async function deliveryRows(uuid: string): Promise<number> {
  return (await t.sql<{ n: number }>('select count(*)::int as n from delivery where approval_id = $1', [uuid]))[0]!.n;
}

/** "Reject and request-changes send nothing": no delivery row, no message to the agent, status as expected. */
async function expectNothingSent(o: Opened, status: string) {
  expect(await deliveryRows(o.uuid)).toBe(0);
  expect(agent.received.filter((r) => r.taskId === o.remoteTaskId && (r.message.metadata as any)?.approval)).toEqual([]);
  const a = await getApproval(o.approval.id);
  expect(a.status).toBe(status);
  expect(a.execution).toBeNull();
  return a;
}

async function waitDelivered(approvalId: string) {
  return eventually(async () => {
    const a = await getApproval(approvalId);
    return a.execution?.status === 'DELIVERED' ? a : null;
  });
}

const approve = (o: Opened, token?: string, over: { revision?: number; digest?: string } = {}) =>
  t.gql(OPS.approve, { id: o.approval.id, revision: over.revision ?? o.approval.revision, digest: over.digest ?? o.approval.digest }, token);

async function member(permission: 'VIEW' | 'OPERATE' | null, agentId = showcaseId) {
  const m = await createMember(t);
  if (permission) ok(await t.gql(OPS.grant, { userId: m.id, agentId, permission }));
  return m;
}

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  approverId = ok(await t.gql(OPS.register, { url: agent.cardUrl('approver') })).registerAgent.id;
  scriptedId = ok(await t.gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
  adminGid = ok(await t.gql(`{ viewer { id } }`)).viewer.id;
  adminUserId = rawId(adminGid);
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('stale decisions: "if either is stale, the decision is refused"', () => {
  it('refuses a decision on a stale revision with STALE_REVISION naming the current revision and digest; nothing is sent', async () => {
    const o = await openShowcase();
    const r = await approve(o, undefined, { revision: 2 });
    expect(codeOf(r)).toBe('STALE_REVISION');
    expect(r.errors![0]!.extensions).toMatchObject({ currentRevision: 1, currentDigest: o.approval.digest });
    expect(r.data?.approve ?? null).toBeNull();
    const a = await expectNothingSent(o, 'PENDING');
    expect(a.decisions).toEqual([]);
  });

  it('refuses a decision on a stale digest with STALE_REVISION; nothing is sent', async () => {
    const o = await openShowcase();
    const wrong = sha256('not the action');
    expect(wrong).not.toBe(o.approval.digest);
    for (const mutation of [OPS.approve, OPS.reject]) {
      const r = await t.gql(mutation, { id: o.approval.id, revision: 1, digest: wrong });
      expect(codeOf(r)).toBe('STALE_REVISION');
      expect(r.errors![0]!.extensions).toMatchObject({ currentRevision: 1, currentDigest: o.approval.digest });
    }
    const a = await expectNothingSent(o, 'PENDING');
    expect(a.decisions).toEqual([]);
  });
});

describe('"A decision is final: a request leaves PENDING once"', () => {
  it('refuses a second decision after approve with NOT_PENDING; exactly one delivery and one message', async () => {
    const o = await openShowcase();
    const first = ok(await approve(o)).approve;
    expect(first.outcome).toBe('APPROVE');
    for (const mutation of [OPS.approve, OPS.reject]) {
      const r = await t.gql(mutation, { id: o.approval.id, revision: 1, digest: o.approval.digest });
      expect(codeOf(r)).toBe('NOT_PENDING');
    }
    const rc = await t.gql(OPS.requestChanges, { id: o.approval.id, revision: 1, digest: o.approval.digest, comment: 'again' });
    expect(codeOf(rc)).toBe('NOT_PENDING');
    const a = await waitDelivered(o.approval.id);
    expect(a.status).toBe('APPROVED');
    expect(a.decisions.map((d: any) => d.id)).toEqual([first.id]);
    expect(await deliveryRows(o.uuid)).toBe(1);
    expect(deliveredFor(o.uuid)).toHaveLength(1);
    expect(deliveredFor(o.uuid)[0]!.duplicate).toBe(false);
  });

  it('refuses a decision after expiry with EXPIRED and the request becomes EXPIRED; nothing is sent', async () => {
    // Seed 000 "expiresInSeconds"; docs/ARCHITECTURE.md "The flow" 9: "if ... the request expires, before a decision, the request becomes ... EXPIRED and nothing is sent".
    const o = await openRequest(scriptedId, {
      data: scriptedRequest({
        title: 'Restart the cache',
        risk: 'low',
        expiresInSeconds: 1,
        action: { kind: 'send_message', text: 'Approved. Restart the cache.' },
      }),
    });
    // expiresInSeconds 1 is honoured: it expires one second after it opened (not in the default 7 days).
    const [opened] = await t.sql('select created_at from approval where id = $1', [o.uuid]);
    expect(new Date(o.approval.expiresAt).getTime() - opened.created_at.getTime()).toBe(1000);
    await untilExpiryPassed(t, o.approval.id);
    const r = await approve(o);
    expect(codeOf(r)).toBe('EXPIRED');
    const again = await t.gql(OPS.reject, { id: o.approval.id, revision: 1, digest: o.approval.digest });
    expect(codeOf(again)).toBe('EXPIRED');
    const a = await expectNothingSent(o, 'EXPIRED');
    expect(a.decisions).toEqual([]);
  });

  it('database: an APPROVED request cannot be put back to PENDING (trigger), and a second final decision row is refused (unique index)', async () => {
    const o = await openShowcase();
    const d = ok(await approve(o)).approve;
    await waitDelivered(o.approval.id);

    await expect(t.sql(`update approval set status = 'PENDING' where id = $1`, [o.uuid])).rejects.toThrow(/is APPROVED and final/);
    await expect(t.sql(`update approval set digest = $2 where id = $1`, [o.uuid, sha256('tampered')])).rejects.toThrow(/final/);
    const [row] = await t.sql(`select status, digest from approval where id = $1`, [o.uuid]);
    expect(row).toEqual({ status: 'APPROVED', digest: o.approval.digest });

    for (const outcome of ['REJECT', 'APPROVE', 'REQUEST_CHANGES', 'EDIT_AND_APPROVE']) {
      await expect(
        t.sql(`insert into decision (id, approval_id, outcome, revision, digest, reviewer_id) values ($1, $2, $3, 1, $4, $5)`, [
          randomUUID(),
          o.uuid,
          outcome,
          o.approval.digest,
          adminUserId,
        ]),
      ).rejects.toThrow(/decision_one_final/);
    }
    const decisions = await t.sql(`select id, outcome from decision where approval_id = $1`, [o.uuid]);
    expect(decisions).toEqual([{ id: d.id, outcome: 'APPROVE' }]);
  });
});

describe('who may decide: "Reviewers with OPERATE on the agent (and skill) decide"', () => {
  it('refuses the requester with SEPARATION_OF_DUTIES ("the requester never decides their own request"); another operator may', async () => {
    const requester = await member('OPERATE');
    const task = ok(await t.gql(OPS.startTask, { agentId: showcaseId, text: 'hello' }, requester.token)).startTask;
    expect(task.state).toBe('INPUT_REQUIRED');
    const text = 'Approved. Restart the web tier.';
    const created = ok(
      await t.gql(
        `mutation($taskId: ID!, $action: JSON!) { createApproval(input: { taskId: $taskId, title: "Restart the web tier", risk: MEDIUM,
           action: $action }) { ${OPS.approvalFields} } }`,
        { taskId: task.id, action: { kind: 'send_message', text } },
        requester.token,
      ),
    ).createApproval;
    expect(created.source).toBe('USER');
    expect(created.requester).toEqual({ id: requester.id });
    const o: Opened = { taskId: task.id, remoteTaskId: task.remoteTaskId, approval: created, uuid: rawId(created.id) };

    for (const mutation of [OPS.approve, OPS.reject]) {
      const r = await t.gql(mutation, { id: created.id, revision: 1, digest: created.digest }, requester.token);
      expect(codeOf(r)).toBe('SEPARATION_OF_DUTIES');
    }
    const e = await t.gql(OPS.editAndApprove, { id: created.id, revision: 1, digest: created.digest, action: { text: 'Approved. Do more.' } }, requester.token);
    expect(codeOf(e)).toBe('SEPARATION_OF_DUTIES');
    await expectNothingSent(o, 'PENDING');

    // Another operator (the admin) may decide it, and the action reaches the agent.
    ok(await approve(o));
    const a = await waitDelivered(created.id);
    expect(a.decisions.map((d: any) => d.reviewer.id)).toEqual([adminGid]);
    expect(deliveredFor(o.uuid).map((r) => r.message.parts[0]?.text)).toEqual([text]);
  });

  it('refuses VIEW (FORBIDDEN), no grant (NOT_FOUND), another tenant (NOT_FOUND) and no token (UNAUTHENTICATED); nothing is sent', async () => {
    // "Tenant isolation: nothing of another tenant is visible or decidable (answer NOT_FOUND)."
    const o = await openShowcase();
    const viewer = await member('VIEW');
    const stranger = await member(null);
    const otherTenant = randomUUID();
    const otherAdmin = randomUUID();
    const otherToken = `tb_other_${randomUUID()}`;
    await t.sql(`insert into tenant (id, name) values ($1, $2)`, [otherTenant, `other-${otherTenant}`]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, $3, $4, 'ADMIN')`, [
      otherAdmin,
      otherTenant,
      'admin@other.test',
      'Other admin',
    ]);
    await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'other', $3)`, [randomUUID(), otherAdmin, hashApiToken(otherToken)]);
    // The other tenant's admin is a real, authenticated admin (so NOT_FOUND below is isolation, not a bad token).
    expect(ok(await t.gql(`{ viewer { email role } }`, {}, otherToken)).viewer).toEqual({ email: 'admin@other.test', role: 'ADMIN' });
    expect(ok(await t.gql(APPROVAL_QUERY, { id: o.approval.id }, viewer.token)).approval.id).toBe(o.approval.id);

    const cases: [string | null, string][] = [
      [viewer.token, 'FORBIDDEN'],
      [stranger.token, 'NOT_FOUND'],
      [otherToken, 'NOT_FOUND'],
      [null, 'UNAUTHENTICATED'],
    ];
    for (const [token, code] of cases) {
      for (const mutation of [OPS.approve, OPS.reject]) {
        const r = await t.gql(mutation, { id: o.approval.id, revision: 1, digest: o.approval.digest }, token);
        expect({ code: codeOf(r), data: r.data?.approve ?? r.data?.reject ?? null }).toEqual({ code, data: null });
      }
      const e = await t.gql(OPS.editAndApprove, { id: o.approval.id, revision: 1, digest: o.approval.digest, action: { text: 'x' } }, token);
      expect(codeOf(e)).toBe(code);
    }
    // The other tenant cannot even see it.
    expect(ok(await t.gql(APPROVAL_QUERY, { id: o.approval.id }, otherToken)).approval).toBeNull();
    const a = await expectNothingSent(o, 'PENDING');
    expect(a.decisions).toEqual([]);

    // The same request is decidable by a member with OPERATE: the refusals above were about who asked.
    const operator = await member('OPERATE');
    ok(await approve(o, operator.token));
    await waitDelivered(o.approval.id);
    expect(deliveredFor(o.uuid)).toHaveLength(1);
  });

  it('delegate: only the assignee (or an admin) decides afterwards; a third operator gets FORBIDDEN', async () => {
    const assignee = await member('OPERATE');
    const third = await member('OPERATE');
    const o = await openShowcase();
    const d = ok(await t.gql(OPS.delegate, { id: o.approval.id, revision: 1, digest: o.approval.digest, to: assignee.id })).delegate;
    expect(d).toMatchObject({ outcome: 'DELEGATE', delegatedTo: { id: assignee.id } });
    let a = await getApproval(o.approval.id);
    expect(a.status).toBe('PENDING');
    expect(a.assignee).toEqual({ id: assignee.id });

    for (const mutation of [OPS.approve, OPS.reject]) {
      const r = await t.gql(mutation, { id: o.approval.id, revision: 1, digest: o.approval.digest }, third.token);
      expect(codeOf(r)).toBe('FORBIDDEN');
    }
    await expectNothingSent(o, 'PENDING');

    const win = ok(await approve(o, assignee.token)).approve;
    expect(win.outcome).toBe('APPROVE');
    a = await waitDelivered(o.approval.id);
    expect(a.decisions.map((x: any) => [x.outcome, x.reviewer.id])).toEqual([
      ['DELEGATE', adminGid],
      ['APPROVE', assignee.id],
    ]);
    expect(deliveredFor(o.uuid)).toHaveLength(1);

    // An admin may still decide a request delegated to someone else.
    const o2 = await openShowcase();
    ok(await t.gql(OPS.delegate, { id: o2.approval.id, revision: 1, digest: o2.approval.digest, to: assignee.id }));
    expect(codeOf(await t.gql(OPS.reject, { id: o2.approval.id, revision: 1, digest: o2.approval.digest }, third.token))).toBe('FORBIDDEN');
    expect(ok(await t.gql(OPS.reject, { id: o2.approval.id, revision: 1, digest: o2.approval.digest })).reject.outcome).toBe('REJECT');
    await expectNothingSent(o2, 'REJECTED');
  });

  it('delegate to a user who cannot decide (VIEW only) is BAD_USER_INPUT and changes nothing', async () => {
    const viewer = await member('VIEW');
    const o = await openShowcase();
    const r = await t.gql(OPS.delegate, { id: o.approval.id, revision: 1, digest: o.approval.digest, to: viewer.id });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    const a = await getApproval(o.approval.id);
    expect(a.assignee).toBeNull();
    expect(a.decisions).toEqual([]);
  });
});

describe('concurrent decisions: "exactly one wins; the rest get NOT_PENDING or STALE_REVISION"', () => {
  it('8 concurrent approves: one succeeds, one delivery row, one message delivered', async () => {
    const o = await openShowcase();
    const operator = await member('OPERATE');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => approve(o, i % 2 ? operator.token : undefined)));
    const wins = results.filter((r) => !r.errors);
    const losses = results.filter((r) => r.errors);
    expect(wins).toHaveLength(1);
    expect(losses).toHaveLength(7);
    for (const l of losses) expect(['NOT_PENDING', 'STALE_REVISION']).toContain(codeOf(l));
    expect(await deliveryRows(o.uuid)).toBe(1);
    const a = await waitDelivered(o.approval.id);
    expect(a.decisions.map((d: any) => d.id)).toEqual([wins[0]!.data.approve.id]);
    expect(await t.sql(`select count(*)::int as n from decision where approval_id = $1`, [o.uuid])).toEqual([{ n: 1 }]);
    expect(deliveredFor(o.uuid)).toHaveLength(1);
    expect(deliveredFor(o.uuid)[0]!.message.metadata).toMatchObject({ approval: { decisionId: wins[0]!.data.approve.id } });
  });

  it('concurrent approve vs reject: exactly one wins and the status, decisions and deliveries follow the winner', async () => {
    const rounds: { o: Opened; winner: 'approve' | 'reject' }[] = [];
    for (let i = 0; i < 3; i++) {
      const o = await openShowcase();
      const vars = { id: o.approval.id, revision: 1, digest: o.approval.digest };
      const [ap, rj] = await Promise.all([t.gql(OPS.approve, vars), t.gql(OPS.reject, vars)]);
      const winners = [ap, rj].filter((r) => !r.errors);
      expect(winners).toHaveLength(1);
      const loser = ap.errors ? ap : rj;
      expect(['NOT_PENDING', 'STALE_REVISION']).toContain(codeOf(loser));
      const winner = ap.errors ? 'reject' : 'approve';
      expect(await deliveryRows(o.uuid)).toBe(winner === 'approve' ? 1 : 0);
      const [row] = await t.sql(`select status from approval where id = $1`, [o.uuid]);
      expect(row.status).toBe(winner === 'approve' ? 'APPROVED' : 'REJECTED');
      rounds.push({ o, winner });
    }
    for (const { o, winner } of rounds) {
      if (winner === 'approve') {
        await waitDelivered(o.approval.id);
        expect(deliveredFor(o.uuid)).toHaveLength(1);
      } else {
        await expectNothingSent(o, 'REJECTED');
      }
      expect(await t.sql(`select count(*)::int as n from decision where approval_id = $1`, [o.uuid])).toEqual([{ n: 1 }]);
    }
  });
});

describe('editAndApprove', () => {
  it('makes revision 2 with a new digest; the agent receives the edited text and completes with that digest', async () => {
    const o = await openShowcase();
    expect(o.approval.digest).toBe(sha256(canon({ kind: 'send_message', text: 'Approved. Delete the staging cluster.', data: null })));
    const text = 'Approved. Delete only the staging web nodes; keep the volumes.';
    const newDigest = sha256(canon({ kind: 'send_message', text, data: null }));
    const d = ok(await t.gql(OPS.editAndApprove, { id: o.approval.id, revision: 1, digest: o.approval.digest, action: { text } })).editAndApprove;
    expect(d).toMatchObject({ outcome: 'EDIT_AND_APPROVE', revision: 2, digest: newDigest });

    const a = await waitDelivered(o.approval.id);
    expect(a).toMatchObject({ status: 'APPROVED', revision: 2, digest: newDigest, action: { kind: 'send_message', text } });
    expect(a.revisions.map((r: any) => [r.number, r.digest, r.createdBy.type])).toEqual([
      [1, o.approval.digest, 'agent'],
      [2, newDigest, 'user'],
    ]);
    expect(a.revisions[0].action).toEqual({ kind: 'send_message', text: 'Approved. Delete the staging cluster.' });
    expect(a.revisions[1].createdBy.id).toBe(adminUserId);

    const got = deliveredFor(o.uuid);
    expect(got).toHaveLength(1);
    expect(got[0]!.message.parts).toEqual([{ text }]);
    expect((got[0]!.message.metadata as any).approval).toMatchObject({ revision: 2, revisionDigest: newDigest, decisionId: d.id });
    // The agent recomputed the digest from what it received (it answers FAILED on a mismatch).
    expect(a.execution.observedTaskState).toBe('COMPLETED');
    const task = ok(await t.gql(TASK_MESSAGES, { id: o.taskId })).task;
    expect(task.messages.at(-1)).toMatchObject({ role: 'AGENT', parts: [{ text: `Done. Approved revision 2, digest ${newDigest}` }] });
  });

  it('refuses invalid edits (kind change, empty text, 20001 characters) with INVALID_ACTION and changes nothing', async () => {
    const o = await openShowcase();
    const edits = [{ kind: 'send_data', form: {}, values: {} }, { text: '' }, { text: 'x'.repeat(20_001) }, { kind: 'run_tool', text: 'rm -rf /' }];
    for (const action of edits) {
      const r = await t.gql(OPS.editAndApprove, { id: o.approval.id, revision: 1, digest: o.approval.digest, action });
      expect(codeOf(r)).toBe('INVALID_ACTION');
    }
    const a = await expectNothingSent(o, 'PENDING');
    expect(a).toMatchObject({ revision: 1, digest: o.approval.digest, action: o.approval.action, decisions: [] });
    expect(a.revisions).toHaveLength(1);
    // 20000 characters is the limit, not below it: the same request accepts exactly 20000.
    const max = 'y'.repeat(20_000);
    ok(await t.gql(OPS.editAndApprove, { id: o.approval.id, revision: 1, digest: o.approval.digest, action: { text: max } }));
    const done = await waitDelivered(o.approval.id);
    expect(done.revision).toBe(2);
    expect(deliveredFor(o.uuid)[0]!.message.parts).toEqual([{ text: max }]);
  });

  it('send_data: new values are delivered as one application/json data part and the agent completes; invalid values are INVALID_ACTION', async () => {
    // Seed 000: "On approval values is sent as one application/json data part."
    const o = await openRequest(approverId, { text: 'approve data' });
    expect(o.approval.action).toMatchObject({ kind: 'send_data', values: { environment: 'staging', replicas: 2 } });
    const form = o.approval.action.form;
    expect(o.approval.digest).toBe(sha256(canon({ kind: 'send_data', form, values: { environment: 'staging', replicas: 2 } })));

    for (const values of [{ environment: 'staging', replicas: 11 }, { environment: 'moon', replicas: 3 }, { replicas: 3 }]) {
      const bad = await t.gql(OPS.editAndApprove, { id: o.approval.id, revision: 1, digest: o.approval.digest, action: { values } });
      expect(codeOf(bad)).toBe('INVALID_ACTION');
    }
    const changedForm = await t.gql(OPS.editAndApprove, {
      id: o.approval.id,
      revision: 1,
      digest: o.approval.digest,
      action: { form: { ...form, title: 'Other' }, values: { environment: 'staging', replicas: 3 } },
    });
    expect(codeOf(changedForm)).toBe('INVALID_ACTION');
    const unchanged = await expectNothingSent(o, 'PENDING');
    expect(unchanged).toMatchObject({ revision: 1, digest: o.approval.digest });

    const values = { environment: 'staging', replicas: 3 };
    const newDigest = sha256(canon({ kind: 'send_data', form, values }));
    const d = ok(await t.gql(OPS.editAndApprove, { id: o.approval.id, revision: 1, digest: o.approval.digest, action: { values } })).editAndApprove;
    expect(d).toMatchObject({ revision: 2, digest: newDigest });
    const a = await waitDelivered(o.approval.id);
    expect(a.execution.observedTaskState).toBe('COMPLETED');
    const got = deliveredFor(o.uuid);
    expect(got).toHaveLength(1);
    expect(got[0]!.message.parts).toEqual([{ data: values, mediaType: 'application/json' }]);
    expect((got[0]!.message.metadata as any).approval).toMatchObject({ revision: 2, revisionDigest: newDigest });
    const task = ok(await t.gql(TASK_MESSAGES, { id: o.taskId })).task;
    expect(task.messages.at(-1).parts).toEqual([{ text: `Done. Approved revision 2, digest ${newDigest}` }]);
  });
});

describe('reject and request changes: "Reject and request-changes send nothing"', () => {
  it('requestChanges needs a comment (BAD_USER_INPUT); with one the request is CHANGES_REQUESTED and nothing is sent', async () => {
    const o = await openShowcase();
    for (const comment of [undefined, '', '   ']) {
      const r = await t.gql(OPS.requestChanges, { id: o.approval.id, revision: 1, digest: o.approval.digest, comment });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
    }
    await expectNothingSent(o, 'PENDING');
    const d = ok(await t.gql(OPS.requestChanges, { id: o.approval.id, revision: 1, digest: o.approval.digest, comment: 'Keep the volumes.' })).requestChanges;
    expect(d.outcome).toBe('REQUEST_CHANGES');
    const a = await expectNothingSent(o, 'CHANGES_REQUESTED');
    expect(a.decisions).toEqual([expect.objectContaining({ outcome: 'REQUEST_CHANGES', comment: 'Keep the volumes.', revision: 1 })]);
    expect(agent.getTask(o.remoteTaskId)!.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('reject: REJECTED and nothing is sent', async () => {
    const o = await openShowcase();
    const d = ok(await t.gql(OPS.reject, { id: o.approval.id, revision: 1, digest: o.approval.digest, comment: 'No.' })).reject;
    expect(d.outcome).toBe('REJECT');
    const a = await expectNothingSent(o, 'REJECTED');
    expect(a.decisions).toEqual([expect.objectContaining({ outcome: 'REJECT', comment: 'No.' })]);
    // Nothing to wait for: a delivery and its job are only ever written in an approving
    // decision's own transaction, and expectNothingSent found no delivery row.
    expect(agent.getTask(o.remoteTaskId)!.history!.filter((m) => m.role === 'ROLE_USER')).toHaveLength(1);
  });
});
