import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, eventually, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { createGroup, createPolicy, removeGroupMember, updatePolicy } from '../../support/policies.js';

// Quorum (issue 12, item 1; decisions/quorum.ts): M approvals from distinct reviewers on the same
// revision and digest; the request stays PENDING until then and is delivered once, only when the
// quorum is met; one rejection rejects (or is recorded, per policy); an edit starts the quorum
// again on its revision. The database still lets a request leave PENDING once.
// Each request gets its quorum the way an admin gives it: one policy, "quorum", whose condition
// (`skill == "deploy"`) matches the showcase agent's deploy skill; a test sets the rules it needs
// (updatePolicy: a new version) before it opens its request, which keeps that version.

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;
let policyId: string;
const reviewers: { id: string; uuid: string; token: string }[] = [];

const QUORUM_FIELDS = `quorum { required count met revision digest rejectionRejects fromGroupNames
  approvals { id reviewer { id } decidedAt vote } rejections { id reviewer { id } vote } }`;
const APPROVAL = `query($id: ID!) { approval(id: $id) { ${OPS.approvalFields} ${QUORUM_FIELDS} decisions { id outcome revision vote reviewer { id } } contract } }`;
const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { id revision digest status
  policy { name version quorum { approvals } } } } } }`;

interface Opened {
  id: string;
  uuid: string;
  revision: number;
  digest: string;
  remoteTaskId: string;
}

interface QuorumInput {
  approvals: number;
  rejectionRejects?: boolean;
  fromGroupIds?: string[];
}

/** Sets the "quorum" policy's rule (a new version when it changes), then opens a deploy request on the showcase agent. */
async function openWith({ quorum }: { quorum: QuorumInput }): Promise<Opened> {
  const policy = await updatePolicy(t, { id: policyId, quorum: { rejectionRejects: true, fromGroupIds: [], ...quorum } });
  const task = ok(await t.gql(OPS.startTask, { agentId: showcaseId, skillId: 'deploy', text: 'approve' })).startTask;
  const node = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges[0].node;
  expect(node.status).toBe('PENDING');
  // The request opened under the policy's current version, with that version's quorum.
  expect(node.policy).toMatchObject({ name: 'quorum', version: policy.currentVersion.version, quorum: { approvals: quorum.approvals } });
  return { id: node.id, uuid: rawId(node.id), revision: node.revision, digest: node.digest, remoteTaskId: task.remoteTaskId };
}

const get = async (o: Opened) => ok(await t.gql(APPROVAL, { id: o.id })).approval;
const at = (o: Opened, over: { revision?: number; digest?: string } = {}) => ({
  id: o.id,
  revision: over.revision ?? o.revision,
  digest: over.digest ?? o.digest,
});
const approve = (o: Opened, token: string, over?: { revision?: number; digest?: string }) => t.gql(OPS.approve, at(o, over), token);
const reject = (o: Opened, token: string) => t.gql(OPS.reject, at(o), token);

/** Messages the agent received that carry metadata.approval for this request. */
const delivered = (o: Opened) => agent.received.filter((r) => (r.message.metadata as any)?.approval?.requestId === o.uuid);
const deliveryRows = async (o: Opened) => (await t.sql<{ n: number }>('select count(*)::int as n from delivery where approval_id = $1', [o.uuid]))[0]!.n;
const eventsOf = async (o: Opened, type: string) =>
  t.sql<{ data: any }>('select data from audit_event where stream = $1 and type = $2 order by seq', [`approval:${o.uuid}`, type]);

async function untilDelivered(o: Opened) {
  return eventually(async () => {
    const a = await get(o);
    return a.execution?.status === 'DELIVERED' ? a : null;
  });
}

/** Still PENDING, nothing queued, nothing sent. */
async function expectWaiting(o: Opened, count: number, required: number) {
  const a = await get(o);
  expect(a.status).toBe('PENDING');
  expect(a.quorum).toMatchObject({ required, count, met: false });
  expect(a.execution).toBeNull();
  expect(await deliveryRows(o)).toBe(0);
  expect(delivered(o)).toEqual([]);
  return a;
}

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  for (let i = 0; i < 3; i++) {
    const m = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: m.id, agentId: showcaseId, permission: 'OPERATE' }));
    reviewers.push({ id: m.id, uuid: rawId(m.id), token: m.token });
  }
  policyId = (await createPolicy(t, { name: 'quorum', condition: 'skill == "deploy"' })).id;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('a 2-of-3 quorum', () => {
  it('stays PENDING showing "1 of 2" after one approval, and one rejection rejects (rejectionRejects, the default); nothing is sent', async () => {
    const [a, b] = reviewers;
    const o = await openWith({ quorum: { approvals: 2 } });
    const first = ok(await approve(o, a!.token)).approve;
    expect(first.outcome).toBe('APPROVE');
    const waiting = await expectWaiting(o, 1, 2);
    expect(waiting.quorum.approvals).toMatchObject([{ id: first.id, reviewer: { id: a!.id }, vote: true }]);
    expect(waiting.decisions).toMatchObject([{ id: first.id, vote: true }]);
    // The export answers with the final decision only: a vote answers nothing yet.
    expect(waiting.contract).toMatchObject({ decided_by: null, answer: null });
    const [voted] = await eventsOf(o, 'approval.voted');
    expect(voted!.data).toMatchObject({ outcome: 'APPROVE', revision: 1, digest: o.digest, quorum: { count: 1, required: 2 }, status: 'PENDING' });

    const r = ok(await reject(o, b!.token)).reject;
    const closed = await get(o);
    expect(closed.status).toBe('REJECTED');
    expect(closed.decisions).toMatchObject([
      { id: first.id, vote: true },
      { id: r.id, outcome: 'REJECT', vote: false },
    ]);
    expect(closed.contract).toMatchObject({ decided_by: { id: `usr_${b!.uuid.replace(/-/g, '')}` }, answer: 'reject' });
    expect(await deliveryRows(o)).toBe(0);
    expect(delivered(o)).toEqual([]);
  });

  it('with rejectionRejects false a rejection is recorded and the request stays PENDING; two approvals then close it, delivered once naming the final decision', async () => {
    const [a, b, c] = reviewers;
    const o = await openWith({ quorum: { approvals: 2, rejectionRejects: false } });
    const rej = ok(await reject(o, a!.token)).reject;
    const waiting = await expectWaiting(o, 0, 2);
    expect(waiting.quorum.rejections).toMatchObject([{ id: rej.id, reviewer: { id: a!.id }, vote: true }]);
    expect(waiting.quorum.rejectionRejects).toBe(false);
    expect((await eventsOf(o, 'approval.voted'))[0]!.data).toMatchObject({ outcome: 'REJECT', status: 'PENDING' });
    // The rejecter had their say on this revision.
    expect(codeOf(await approve(o, a!.token))).toBe('ALREADY_VOTED');

    ok(await approve(o, b!.token));
    await expectWaiting(o, 1, 2);
    const final = ok(await approve(o, c!.token)).approve;
    const done = await untilDelivered(o);
    expect(done.status).toBe('APPROVED');
    expect(done.quorum).toMatchObject({ count: 2, met: true });
    expect(done.decisions.map((d: any) => [d.outcome, d.vote])).toEqual([
      ['REJECT', true],
      ['APPROVE', true],
      ['APPROVE', false],
    ]);
    expect(await deliveryRows(o)).toBe(1);
    expect(delivered(o)).toHaveLength(1);
    expect((delivered(o)[0]!.message.metadata as any).approval).toMatchObject({ decisionId: final.id, revision: 1, revisionDigest: o.digest });
    expect(done.contract).toMatchObject({ answer: 'approve', decided_by: { id: `usr_${c!.uuid.replace(/-/g, '')}` } });
    const [decided] = await eventsOf(o, 'approval.decided');
    expect(decided!.data).toMatchObject({ outcome: 'APPROVE', status: 'APPROVED', quorum: { count: 2, required: 2 } });
  });
});

describe('an edit starts the quorum again', () => {
  it('edit-then-approve makes revision 2 with the editor as its first approval; the vote on revision 1 stays in the record and no longer counts', async () => {
    const [a, b] = reviewers;
    const o = await openWith({ quorum: { approvals: 2 } });
    const v1 = ok(await approve(o, a!.token)).approve;
    const edit = ok(await t.gql(OPS.editAndApprove, { ...at(o), action: { text: 'Approved, edited by a reviewer.' } }, b!.token)).editAndApprove;
    expect(edit.revision).toBe(2);
    const waiting = await expectWaiting(o, 1, 2);
    expect(waiting.revision).toBe(2);
    expect(waiting.quorum).toMatchObject({ revision: 2, digest: edit.digest, approvals: [{ id: edit.id, reviewer: { id: b!.id } }] });
    expect(waiting.decisions.map((d: any) => [d.id, d.revision, d.vote])).toEqual([
      [v1.id, 1, true],
      [edit.id, 2, true],
    ]);
    // a's approval named revision 1: stale now. The editor cannot approve their own edit twice.
    expect(codeOf(await approve(o, a!.token))).toBe('STALE_REVISION');
    expect(codeOf(await approve(o, b!.token, { revision: 2, digest: edit.digest }))).toBe('ALREADY_VOTED');

    const final = ok(await approve(o, a!.token, { revision: 2, digest: edit.digest })).approve;
    const done = await untilDelivered(o);
    expect(done.status).toBe('APPROVED');
    expect(delivered(o)).toHaveLength(1);
    expect((delivered(o)[0]!.message.metadata as any).approval).toMatchObject({ decisionId: final.id, revision: 2, revisionDigest: edit.digest });
    expect(delivered(o)[0]!.message.parts).toMatchObject([{ text: 'Approved, edited by a reviewer.' }]);
  });
});

describe('one say per reviewer and revision', () => {
  it('refuses a second approval by the same reviewer with ALREADY_VOTED and changes nothing', async () => {
    const [a] = reviewers;
    const o = await openWith({ quorum: { approvals: 2 } });
    ok(await approve(o, a!.token));
    const r = await approve(o, a!.token);
    expect(codeOf(r)).toBe('ALREADY_VOTED');
    expect(r.errors![0]!.message).toMatch(/already approved revision 1.*1 of 2/);
    expect(r.errors![0]!.extensions).toMatchObject({ revision: 1, approvals: 1, required: 2 });
    const after = await expectWaiting(o, 1, 2);
    expect(after.decisions).toHaveLength(1);
    expect(await eventsOf(o, 'approval.voted')).toHaveLength(1);
  });

  it('database: a duplicate vote, a final decision by a voter on the same revision, and a second final decision are refused by unique indexes', async () => {
    const [a, b, c] = reviewers;
    const o = await openWith({ quorum: { approvals: 3 } });
    ok(await approve(o, a!.token));
    const insert = (reviewer: string, vote: boolean, outcome = 'APPROVE') =>
      t.sql(`insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote) values ($1, $2, $3, 1, $4, $5, $6)`, [
        randomUUID(),
        o.uuid,
        outcome,
        o.digest,
        reviewer,
        vote,
      ]);
    await expect(insert(a!.uuid, true)).rejects.toThrow(/decision_one_say_per_revision/);
    await expect(insert(a!.uuid, false, 'REJECT')).rejects.toThrow(/decision_one_say_per_revision/);
    await insert(b!.uuid, false);
    await expect(insert(c!.uuid, false, 'REJECT')).rejects.toThrow(/decision_one_final/);
    // A vote is an approval or a recorded rejection, never a request for changes.
    await expect(insert(c!.uuid, true, 'REQUEST_CHANGES')).rejects.toThrow(/decision_vote_check/);
  });
});

describe('a group-restricted quorum', () => {
  it('only members of the named groups approve (FORBIDDEN otherwise, naming the groups); anyone with OPERATE may still reject; a member who leaves stops counting', async () => {
    const [a, b, c] = reviewers;
    const group = await createGroup(t, `release-${randomUUID().slice(0, 6)}`, [a!.id, b!.id]);
    const names = [group.name];
    const o = await openWith({ quorum: { approvals: 2, fromGroupIds: [group.id] } });

    const outsider = await approve(o, c!.token);
    expect(codeOf(outsider)).toBe('FORBIDDEN');
    expect(outsider.errors![0]!.message).toContain(`only members of "${names[0]}"`);
    expect(codeOf(await t.gql(OPS.editAndApprove, { ...at(o), action: { text: 'sneaky' } }, c!.token))).toBe('FORBIDDEN');
    const waiting = await expectWaiting(o, 0, 2);
    expect(waiting.quorum.fromGroupNames).toEqual(names);
    expect(waiting.decisions).toEqual([]);

    ok(await approve(o, a!.token));
    await expectWaiting(o, 1, 2);
    await removeGroupMember(t, group.id, a!.id);
    await expectWaiting(o, 0, 2);
    // b's approval is now the only one that counts: still a vote.
    ok(await approve(o, b!.token));
    await expectWaiting(o, 1, 2);

    // An outsider cannot approve but can stop the request.
    ok(await reject(o, c!.token));
    expect((await get(o)).status).toBe('REJECTED');
    expect(await deliveryRows(o)).toBe(0);
  });

  it('members complete the quorum; delivered once', async () => {
    const [a, b] = reviewers;
    const group = await createGroup(t, `ops-${randomUUID().slice(0, 6)}`, [a!.id, b!.id]);
    const o = await openWith({ quorum: { approvals: 2, fromGroupIds: [group.id] } });
    ok(await approve(o, a!.token));
    await expectWaiting(o, 1, 2);
    ok(await approve(o, b!.token));
    expect((await untilDelivered(o)).status).toBe('APPROVED');
    expect(delivered(o)).toHaveLength(1);
  });
});

describe('concurrent final votes', () => {
  it('two reviewers approving at once as votes M-1 and M: both answered, exactly one close, one final decision, one delivery, one message', async () => {
    const [a, b, c] = reviewers;
    for (let round = 0; round < 4; round++) {
      const o = await openWith({ quorum: { approvals: 3 } });
      ok(await approve(o, a!.token));
      const [rb, rc] = await Promise.all([approve(o, b!.token), approve(o, c!.token)]);
      ok(rb);
      ok(rc);
      const done = await untilDelivered(o);
      expect(done.status).toBe('APPROVED');
      expect(done.decisions.map((d: any) => d.vote)).toEqual([true, true, false]);
      expect(await deliveryRows(o)).toBe(1);
      expect((await eventsOf(o, 'approval.decided')).length).toBe(1);
      expect((await eventsOf(o, 'approval.voted')).length).toBe(2);
      expect(delivered(o)).toHaveLength(1);
      const finalId = done.decisions[2].id;
      expect((delivered(o)[0]!.message.metadata as any).approval.decisionId).toBe(finalId);
    }
  });

  it('the first vote and a concurrent duplicate by the same reviewer: one vote, one ALREADY_VOTED', async () => {
    const [a] = reviewers;
    const o = await openWith({ quorum: { approvals: 2 } });
    const answers = await Promise.all([approve(o, a!.token), approve(o, a!.token)]);
    expect(answers.map((r) => codeOf(r) ?? 'ok').sort()).toEqual(['ALREADY_VOTED', 'ok']);
    await expectWaiting(o, 1, 2);
  });
});
