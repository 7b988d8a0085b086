import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_STATES } from '../../../src/a2a/types.js';
import { APPROVAL_REQUEST } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import type { ReceivedMessage } from '../../../src/fixture-agent/tasks.js';
import { createMember, eventually, gqlOverHttp as http, OPS, startTestInstance, type TestInstance, ok, rawId, startReplicaOf } from '../../support/harness.js';
import { askingForApproval } from '../../support/fixture-agent.js';

// Races (issue 14, item 3). "A decision is final: a request leaves PENDING once" must hold when
// many reviewers press at the same moment, when the agent's next request supersedes the one being
// approved, and when two instances on one database decide together. Every decision here goes over
// real HTTP to the instances' ports; what counts is what the database and the agent end up with.

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;
let scriptedId: string;
let reviewers: { id: string; token: string }[];

/** Messages whose data carries `hold` make the agent keep its answer until the test releases it. */
const holds = new Map<string, { entered: () => void; gate: Promise<void> }>();

const scripted = (request: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ ...askingForApproval(request), ...extra });

interface Opened {
  approvalId: string;
  uuid: string;
  revision: number;
  digest: string;
  taskId: string;
  taskUuid: string;
}

async function openRequest(agentId: string, input: { text?: string; data?: unknown }): Promise<Opened> {
  const task = ok(await t.gql(OPS.startTask, { agentId, ...input })).startTask;
  expect(task.state).toBe('INPUT_REQUIRED');
  const edges = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id status revision digest } } } }`, { t: task.id })).approvals.edges;
  expect(edges).toHaveLength(1);
  const a = edges[0].node;
  expect(a.status).toBe('PENDING');
  return { approvalId: a.id, uuid: rawId(a.id), revision: a.revision, digest: a.digest, taskId: task.id, taskUuid: rawId(task.id) };
}

const receivedFor = (uuid: string) =>
  agent.received.filter((r) => (r.message.metadata as { approval?: { requestId?: string } } | undefined)?.approval?.requestId === uuid);

async function count(sql: string, params: unknown[]): Promise<number> {
  return (await t.sql<{ n: number }>(sql, params))[0]!.n;
}

/** No deliver job is left for the delivery: nothing more can reach the agent for it. */
async function noJobLeft(deliveryId: string) {
  await eventually(async () => (await count(`select count(*)::int as n from graphile_worker.jobs where key = $1`, [`deliver:${deliveryId}`])) === 0);
}

type Kind = 'approve' | 'reject' | 'editAndApprove';
const MUTATION: Record<Kind, string> = { approve: OPS.approve, reject: OPS.reject, editAndApprove: OPS.editAndApprove };
const editedText = (i: number) => `Approved. Reviewer ${i} edited this.`;

/**
 * `n` decisions on one request at once, reviewer i using kinds[i % kinds.length] on
 * instances[i % instances.length]. Checks exactly one winner, every other answer NOT_PENDING or
 * STALE_REVISION, one decision row, and (for an approval) one delivery and one message.
 */
async function decisionStorm(o: Opened, n: number, kinds: Kind[], instances: TestInstance[]) {
  const calls = Array.from({ length: n }, (_, i) => {
    const kind = kinds[i % kinds.length]!;
    const vars: Record<string, unknown> = { id: o.approvalId, revision: o.revision, digest: o.digest };
    if (kind === 'editAndApprove') vars.action = { text: editedText(i) };
    return { i, kind, inst: instances[i % instances.length]!, vars, reviewer: reviewers[i]! };
  });
  const answers = await Promise.all(calls.map((c) => http(c.inst, MUTATION[c.kind], c.vars, c.reviewer.token)));

  // No 500, no transport error: every answer is a GraphQL answer.
  expect(answers.map((a) => a.status)).toEqual(calls.map(() => 200));
  const winners = calls.filter((_, i) => !answers[i]!.body.errors);
  expect(winners, JSON.stringify(answers.filter((a) => !a.body.errors))).toHaveLength(1);
  const winner = winners[0]!;
  const losers = answers.filter((a) => a.body.errors);
  expect(losers).toHaveLength(n - 1);
  for (const l of losers) {
    expect(l.body.errors).toHaveLength(1);
    expect(['NOT_PENDING', 'STALE_REVISION']).toContain(l.body.errors![0]!.extensions?.code);
    expect(l.body.errors![0]!.message.length).toBeGreaterThan(0);
  }
  const decided = answers[winner.i]!.body.data![winner.kind];
  expect(decided.outcome).toBe({ approve: 'APPROVE', reject: 'REJECT', editAndApprove: 'EDIT_AND_APPROVE' }[winner.kind]);

  // The database holds exactly the winner's decision and the matching state.
  const decisions = await t.sql(`select id, outcome, reviewer_id from decision where approval_id = $1`, [o.uuid]);
  expect(decisions).toEqual([{ id: decided.id, outcome: decided.outcome, reviewer_id: winner.reviewer.id }]);
  expect(await count(`select count(*)::int as n from audit_event where stream = $1 and type = 'approval.decided'`, [`approval:${o.uuid}`])).toBe(1);
  const [row] = await t.sql(`select status from approval where id = $1`, [o.uuid]);
  const deliveries = await t.sql(`select id, message_id from delivery where approval_id = $1`, [o.uuid]);

  if (winner.kind === 'reject') {
    expect(row.status).toBe('REJECTED');
    expect(deliveries).toEqual([]);
    expect(receivedFor(o.uuid)).toEqual([]);
    return winner;
  }
  expect(row.status).toBe('APPROVED');
  expect(deliveries).toHaveLength(1);
  const delivered = await eventually(async () => {
    const [d] = await t.sql(`select status, attempts, message_id from delivery where approval_id = $1`, [o.uuid]);
    return d.status === 'DELIVERED' ? d : null;
  }, 20_000);
  await noJobLeft(deliveries[0].id);
  expect(delivered.attempts).toBe(1);
  const got = receivedFor(o.uuid);
  expect(got).toHaveLength(1);
  expect(got[0]!.duplicate).toBe(false);
  expect(got[0]!.message.messageId).toBe(delivered.message_id);
  expect(got[0]!.message.parts[0]!.text).toBe(winner.kind === 'editAndApprove' ? editedText(winner.i) : APPROVAL_REQUEST.action.text);
  expect(await count(`select count(*)::int as n from audit_event where stream = $1 and type = 'delivery.delivered'`, [`approval:${o.uuid}`])).toBe(1);
  return winner;
}

beforeAll(async () => {
  agent = await startFixtureAgent({
    beforeReply: async (m: ReceivedMessage) => {
      const hold = m.message.parts.map((p) => (p.data as { hold?: unknown } | undefined)?.hold).find((h) => typeof h === 'string');
      const h = typeof hold === 'string' ? holds.get(hold) : undefined;
      if (!h) return;
      h.entered();
      await h.gate;
    },
  });
  // One attempt per delivery: an injected agent failure makes a delivery FAILED at once (the
  // retry race below); every other delivery here succeeds on its first attempt.
  t = await startTestInstance({ env: { TASKBAY_DELIVERY_MAX_ATTEMPTS: '1' } });
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  scriptedId = ok(await t.gql(OPS.register, { url: agent.cardUrl('scripted') })).registerAgent.id;
  reviewers = [];
  for (let i = 0; i < 50; i++) {
    const m = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: m.id, agentId: showcaseId, permission: 'OPERATE' }));
    reviewers.push({ id: rawId(m.id), token: m.token });
  }
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('50 concurrent decisions on one request (real HTTP, 50 reviewers with OPERATE)', () => {
  it("approve, reject and editAndApprove mixed: one winner, 49 NOT_PENDING or STALE_REVISION, one decision, the winner's effect only", async () => {
    const o = await openRequest(showcaseId, { text: 'approve' });
    await decisionStorm(o, 50, ['approve', 'reject', 'editAndApprove'], [t]);
  }, 60_000);

  it('approve and editAndApprove only: one winner, one delivery, the agent receives exactly one message', async () => {
    const o = await openRequest(showcaseId, { text: 'approve' });
    const winner = await decisionStorm(o, 50, ['editAndApprove', 'approve'], [t]);
    expect(winner.kind).not.toBe('reject');
  }, 60_000);
});

describe('50 concurrent retryDelivery clicks on one FAILED delivery', () => {
  it('one queues it, the others are refused BAD_USER_INPUT (no 500), and the agent receives the message once', async () => {
    const o = await openRequest(showcaseId, { text: 'approve' });
    agent.failNext('showcase', 1);
    ok((await http(t, OPS.approve, { id: o.approvalId, revision: o.revision, digest: o.digest }, t.adminToken)).body);
    const [d] = await t.sql(`select id from delivery where approval_id = $1`, [o.uuid]);
    await eventually(async () => (await t.sql(`select status from delivery where id = $1`, [d.id]))[0].status === 'FAILED');
    await noJobLeft(d.id);
    expect(receivedFor(o.uuid)).toEqual([]);

    const RETRY = `mutation($id: ID!) { retryDelivery(approvalId: $id) { id execution { status } } }`;
    const answers = await Promise.all(reviewers.map((r) => http(t, RETRY, { id: o.approvalId }, r.token)));
    expect(answers.map((a) => a.status)).toEqual(reviewers.map(() => 200));
    const queued = answers.filter((a) => !a.body.errors);
    expect(queued).toHaveLength(1);
    const refused = answers.filter((a) => a.body.errors).map((a) => a.body.errors!.map((e) => e.extensions?.code));
    expect(refused).toEqual(Array.from({ length: reviewers.length - 1 }, () => ['BAD_USER_INPUT']));

    await eventually(async () => (await t.sql(`select status from delivery where id = $1`, [d.id]))[0].status === 'DELIVERED', 20_000);
    await noJobLeft(d.id);
    const got = receivedFor(o.uuid);
    expect(got).toHaveLength(1);
    expect(got[0]!.duplicate).toBe(false);
    expect(await count(`select count(*)::int as n from audit_event where stream = $1 and type = 'delivery.retried'`, [`approval:${o.uuid}`])).toBe(1);
  }, 60_000);
});

describe("a supersede racing an approve (the agent's next request arrives while a reviewer approves)", () => {
  it('ends consistent every time: approved and delivered with the new request opened afterwards, or superseded and nothing sent', async () => {
    // The agent has answered the reviewer's message with a new request, but its answer is held
    // (fixture beforeReply) until the test releases it; the approve of the old request is fired
    // `offset` ms after the release (negative: before). The offset adapts: after an approve wins
    // it moves later, after a supersede earlier, halving its step at each change, so the runs
    // gather where both transactions contend for the request. These delays choose interleavings;
    // nothing waits on them for a result.
    const seen = { approved: 0, superseded: 0 };
    let offset = 0;
    let step = 8;
    let last: 'approved' | 'superseded' | null = null;
    for (let i = 0; i < 40 && (i < 20 || !seen.approved || !seen.superseded); i++) {
      const o = await openRequest(scriptedId, {
        data: scripted({ title: `Old request ${i}`, risk: 'high', action: { kind: 'send_message', text: `Approved. Old ${i}.` } }),
      });
      const holdId = `race-${i}`;
      let entered!: () => void;
      let release!: () => void;
      const agentAnswered = new Promise<void>((r) => (entered = r));
      holds.set(holdId, { entered, gate: new Promise<void>((r) => (release = r)) });

      const next = http(
        t,
        `mutation($id: ID!, $data: JSON) { sendTaskMessage(input: { taskId: $id, data: $data }) { id state } }`,
        {
          id: o.taskId,
          data: scripted({ title: `New request ${i}`, risk: 'low', action: { kind: 'send_message', text: `Approved. New ${i}.` } }, { hold: holdId }),
        },
        t.adminToken,
      );
      await agentAnswered;
      const at = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
      const [, approveAnswer, nextAnswer] = await Promise.all([
        at(-offset).then(release),
        at(offset).then(() => http(t, OPS.approve, { id: o.approvalId, revision: o.revision, digest: o.digest }, t.adminToken)),
        next,
      ]);
      holds.delete(holdId);

      // The reviewer's message and the agent's answer always succeed.
      expect(nextAnswer.status).toBe(200);
      expect(nextAnswer.body.errors).toBeUndefined();
      expect(approveAnswer.status).toBe(200);

      const [old] = await t.sql(`select status, superseded_by_id from approval where id = $1`, [o.uuid]);
      const others = await t.sql(`select id, status, created_at from approval where task_id = $1 and id <> $2`, [o.taskUuid, o.uuid]);
      expect(others, `iteration ${i}: the agent's new request is opened exactly once`).toHaveLength(1);
      const fresh = others[0];
      const decisions = await t.sql(`select id, decided_at from decision where approval_id = $1`, [o.uuid]);
      const deliveries = await t.sql(`select id from delivery where approval_id = $1`, [o.uuid]);

      if (old.status === 'APPROVED') {
        seen.approved++;
        expect(approveAnswer.body.errors).toBeUndefined();
        expect(approveAnswer.body.data.approve.outcome).toBe('APPROVE');
        expect(old.superseded_by_id).toBeNull();
        expect(decisions).toHaveLength(1);
        expect(deliveries).toHaveLength(1);
        // Opened afterwards: the new request's event follows the decision's in the log.
        const [order] = await t.sql(
          `select (select seq from audit_event where stream = $1 and type = 'approval.decided') as decided,
                  (select seq from audit_event where stream = $2 and type = 'approval.requested') as requested`,
          [`approval:${o.uuid}`, `approval:${fresh.id}`],
        );
        expect(Number(order.requested)).toBeGreaterThan(Number(order.decided));
        expect(fresh.created_at.getTime()).toBeGreaterThanOrEqual(decisions[0].decided_at.getTime());
        await eventually(async () => (await t.sql(`select status from delivery where id = $1`, [deliveries[0].id]))[0].status === 'DELIVERED', 20_000);
        await noJobLeft(deliveries[0].id);
        const got = receivedFor(o.uuid);
        expect(got).toHaveLength(1);
        expect(got[0]!.duplicate).toBe(false);
        expect(got[0]!.message.parts[0]!.text).toBe(`Approved. Old ${i}.`);
      } else {
        seen.superseded++;
        expect(old).toEqual({ status: 'SUPERSEDED', superseded_by_id: fresh.id });
        expect(approveAnswer.body.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_PENDING']);
        expect(decisions).toEqual([]);
        expect(deliveries).toEqual([]);
        expect(receivedFor(o.uuid)).toEqual([]);
        expect(fresh.status).toBe('PENDING');
      }
      // Either way: the new request was never decided or delivered, and a task that ended never
      // came back (a late answer cannot reopen it).
      expect(await count(`select count(*)::int as n from decision where approval_id = $1`, [fresh.id])).toBe(0);
      expect(await count(`select count(*)::int as n from delivery where approval_id = $1`, [fresh.id])).toBe(0);
      const states = (await t.sql(`select state from task_status where task_id = $1 order by at, id`, [o.taskUuid])).map((s) => s.state as string);
      const ended = states.findIndex((s) => (TERMINAL_STATES as readonly string[]).includes(s));
      if (ended >= 0)
        expect(
          states.slice(ended).every((s) => s === states[ended]),
          states.join(' '),
        ).toBe(true);
      const [task] = await t.sql(`select state from task where id = $1`, [o.taskUuid]);
      if (ended >= 0) expect(task.state).toBe(states[ended]);
      // The new request stays open exactly while its task waits for input.
      const [freshNow] = await t.sql(`select status from approval where id = $1`, [fresh.id]);
      expect({ task: task.state, fresh: freshNow.status }).toEqual(
        task.state === 'TASK_STATE_INPUT_REQUIRED' ? { task: task.state, fresh: 'PENDING' } : { task: task.state, fresh: 'SUPERSEDED' },
      );

      const outcome = old.status === 'APPROVED' ? 'approved' : 'superseded';
      if (last && outcome !== last) step = Math.max(1, step / 2);
      offset += outcome === 'approved' ? step : -step;
      last = outcome;
    }
    console.log(`supersede vs approve: ${seen.approved} approved first, ${seen.superseded} superseded first (final offset ${offset} ms)`);
    // Both interleavings were exercised (the adaptive offset makes this near certain).
    expect(seen.approved).toBeGreaterThan(0);
    expect(seen.superseded).toBeGreaterThan(0);
    const chain = ok(await t.gql(OPS.auditChain)).auditChain;
    expect(chain.ok).toBe(true);
  }, 180_000);

  it("the approval is delivered (and ends the task) before the agent's held answer arrives: the late answer cannot reopen the task", async () => {
    // The extreme order: approve, delivery and the agent completing the task all happen while
    // the agent's earlier answer (asking a new request) is still on its way.
    const o = await openRequest(scriptedId, {
      data: scripted({ title: 'Old request (late answer)', risk: 'high', action: { kind: 'send_message', text: 'Approved. Old, late.' } }),
    });
    let entered!: () => void;
    let release!: () => void;
    const agentAnswered = new Promise<void>((r) => (entered = r));
    holds.set('late', { entered, gate: new Promise<void>((r) => (release = r)) });
    const next = http(
      t,
      `mutation($id: ID!, $data: JSON) { sendTaskMessage(input: { taskId: $id, data: $data }) { id state } }`,
      { id: o.taskId, data: scripted({ title: 'New request (late)', action: { kind: 'send_message', text: 'Approved. New, late.' } }, { hold: 'late' }) },
      t.adminToken,
    );
    await agentAnswered;
    ok((await http(t, OPS.approve, { id: o.approvalId, revision: o.revision, digest: o.digest }, t.adminToken)).body);
    const [d] = await t.sql(`select id from delivery where approval_id = $1`, [o.uuid]);
    await eventually(async () => (await t.sql(`select observed_task_state from delivery where id = $1 and status = 'DELIVERED'`, [d.id]))[0]);
    const [ended] = await t.sql(`select state from task where id = $1`, [o.taskUuid]);
    expect(ended.state).toBe('TASK_STATE_COMPLETED');

    release();
    const answer = await next;
    holds.delete('late');
    expect(answer.status).toBe(200);
    // The late answer is kept (nothing an agent says is lost) but the task stays COMPLETED and no
    // request is open on it.
    const [task] = await t.sql(`select state from task where id = $1`, [o.taskUuid]);
    expect(task.state).toBe('TASK_STATE_COMPLETED');
    expect(await count(`select count(*)::int as n from approval where task_id = $1 and status = 'PENDING'`, [o.taskUuid])).toBe(0);
    const states = (await t.sql(`select state from task_status where task_id = $1 order by at, id`, [o.taskUuid])).map((s) => s.state as string);
    expect(states.slice(states.indexOf('TASK_STATE_COMPLETED'))).toEqual(['TASK_STATE_COMPLETED']);
    expect(receivedFor(o.uuid)).toHaveLength(1);
  });
});

describe('two instances on one database deciding the same requests at once', () => {
  let b: TestInstance;
  beforeAll(async () => {
    b = await startReplicaOf(t);
  });
  afterAll(async () => {
    await b?.stop();
  });

  it('for each of 3 requests, 20 decisions split across both instances: one winner, one delivery, one message', async () => {
    expect(b.instance.port).not.toBe(t.instance.port);
    const opened = await Promise.all([0, 1, 2].map(() => openRequest(showcaseId, { text: 'approve' })));
    const winners = await Promise.all(opened.map((o) => decisionStorm(o, 20, ['approve', 'editAndApprove'], [t, b])));
    expect(winners.map((w) => w.kind)).not.toContain('reject');
    const chain = ok(await b.gql(OPS.auditChain)).auditChain;
    expect(chain.ok).toBe(true);
  }, 90_000);
});
