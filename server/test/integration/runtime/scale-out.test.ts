import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVAL_REQUEST } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { DELIVER_JOB } from '../../../src/delivery/queue.js';
import {
  eventually,
  hasEvent,
  idOf,
  nextBesides,
  OPS,
  probeRequests,
  subscribe,
  untilProbeArrives,
  type TestInstance,
  rawId,
  startReplicas,
} from '../../support/harness.js';

// docs/ARCHITECTURE.md, "Scale-out": "Every server instance is stateless [...] graphile-worker spreads jobs
// across instances (SKIP LOCKED), and LISTEN/NOTIFY fans committed events out to each instance's
// subscribers. Two instances on one database must behave as one: a request opened through
// instance A reaches a dashboard subscribed on instance B, and a delivery job runs once."

let a: TestInstance;
let b: TestInstance;
let fixture: FixtureAgent;
let agentId: string;

const probes = probeRequests(() => a);

/**
 * Waits until the delivery jobs of these requests are gone from the queue (completed): no worker
 * holds or can take one any more, so the count at the agent is final.
 */
async function deliveryJobsDone(approvalIds: string[]) {
  await eventually(async () => {
    const [{ n }] = await a.sql(
      `select count(*)::int as n from graphile_worker._private_jobs j
         join graphile_worker._private_tasks k on k.id = j.task_id
         join delivery d on d.id::text = j.payload->>'deliveryId'
        where k.identifier = $1 and d.approval_id = any($2::uuid[])`,
      [DELIVER_JOB, approvalIds.map(rawId)],
    );
    return n === 0;
  });
}

const APPROVAL = `query($id: ID!) { approval(id: $id) { id status revision digest execution { status attempts messageId } } }`;

/** Everything the fixture received that carries metadata.approval for this request (retries included). */
const deliveriesOf = (approvalId: string) =>
  fixture.received.filter((r) => (r.message.metadata?.approval as { requestId?: string } | undefined)?.requestId === rawId(approvalId));

async function openOn(inst: TestInstance) {
  const st = await inst.gql(OPS.startTask, { agentId, text: 'approve' });
  expect(st.errors).toBeUndefined();
  const list = await inst.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: st.data.startTask.id });
  return list.data.approvals.edges[0].node as { id: string; revision: number; digest: string };
}

beforeAll(async () => {
  fixture = await startFixtureAgent();
  // Two replicas starting together on one database (migrations, bootstrap, workers, listeners).
  [a, b] = await startReplicas({}, {});
  const reg = await a.gql(OPS.register, { url: fixture.cardUrl('showcase') });
  expect(reg.errors).toBeUndefined();
  agentId = reg.data.registerAgent.id;
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await fixture?.close();
});

describe('two instances on one database behave as one', () => {
  it('both instances serve the same state (one bootstrap admin, the agent registered on A is seen on B)', async () => {
    expect(a.databaseUrl).toBe(b.databaseUrl);
    expect(a.instance.port).not.toBe(b.instance.port);
    const [c] = await a.sql(`select (select count(*)::int from app_user) users, (select count(*)::int from api_token) tokens`);
    expect(c).toEqual({ users: 1, tokens: 1 });
    const onB = await b.gql(`{ viewer { email } agents { id } }`);
    expect(onB.data).toEqual({ viewer: { email: 'admin@localhost' }, agents: [{ id: agentId }] });
  });

  it('a request opened through A reaches an approvalRequested subscription on B; approving on B delivers exactly once, DELIVERED seen from A', async () => {
    const onB = subscribe(b.ws(), `subscription { approvalRequested { id title status agent { id } } }`);
    const changedOnA = subscribe(a.ws(), `subscription { approvalChanged { id status execution { status } } }`);
    // Both live once a probe opened through A reaches them (B hears it through LISTEN/NOTIFY).
    await untilProbeArrives(async () => {
      const id = await probes.open({ inst: a });
      return () => hasEvent(onB, 'approvalRequested', id) && hasEvent(changedOnA, 'approvalChanged', id);
    });

    const opened = await openOn(a);
    const event = await nextBesides(onB, (e) => probes.ids.has(idOf(e, 'approvalRequested')!));
    expect(event.errors).toBeUndefined();
    expect(event.data.approvalRequested).toEqual({ id: opened.id, title: APPROVAL_REQUEST.title, status: 'PENDING', agent: { id: agentId } });

    const d = await b.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest });
    expect(d.errors).toBeUndefined();

    // A's dashboard follows the decision and the delivery made elsewhere.
    const seen: string[] = [];
    await eventually(async () => {
      for (let e = changedOnA.received.shift(); e; e = changedOnA.received.shift()) {
        if (e.data?.approvalChanged.id === opened.id) seen.push(`${e.data.approvalChanged.status}/${e.data.approvalChanged.execution?.status ?? '-'}`);
      }
      return seen.includes('APPROVED/DELIVERED');
    });
    const fromA = await a.gql(APPROVAL, { id: opened.id });
    expect(fromA.data.approval).toMatchObject({ status: 'APPROVED', execution: { status: 'DELIVERED', attempts: 1 } });

    // Exactly one message at the agent, even with two workers polling the same queue.
    await deliveryJobsDone([opened.id]);
    const delivered = deliveriesOf(opened.id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.duplicate).toBe(false);
    expect(delivered[0]!.message.messageId).toBe(fromA.data.approval.execution.messageId);
    const events = await a.sql(`select type from audit_event where stream = $1 and type like 'delivery.%' order by seq`, [`approval:${rawId(opened.id)}`]);
    expect(events.map((e) => e.type)).toEqual(['delivery.queued', 'delivery.delivered']);
    onB.dispose();
    changedOnA.dispose();
  });

  it('many requests opened and approved across both instances are each delivered exactly once', async () => {
    const opened: { id: string; revision: number; digest: string }[] = [];
    for (let i = 0; i < 6; i++) opened.push(await openOn(i % 2 ? b : a));
    const decisions = await Promise.all(opened.map((o, i) => (i % 2 ? a : b).gql(OPS.approve, { id: o.id, revision: o.revision, digest: o.digest })));
    expect(decisions.map((d) => d.errors ?? null)).toEqual(opened.map(() => null));
    await eventually(async () => {
      const states = await Promise.all(opened.map(async (o, i) => (await (i % 2 ? b : a).gql(APPROVAL, { id: o.id })).data.approval.execution?.status));
      return states.every((s) => s === 'DELIVERED');
    }, 20_000);
    await deliveryJobsDone(opened.map((o) => o.id));
    for (const o of opened) expect({ id: o.id, n: deliveriesOf(o.id).length }).toEqual({ id: o.id, n: 1 });
    const [{ n }] = await a.sql(`select count(*)::int as n from audit_event where type = 'delivery.delivered' and stream = any($1::text[])`, [
      opened.map((o) => `approval:${rawId(o.id)}`),
    ]);
    expect(n).toBe(6);
    // Both instances verify the same chain.
    const [ca, cb] = await Promise.all([a.gql(OPS.auditChain), b.gql(OPS.auditChain)]);
    expect(ca.data.auditChain.ok).toBe(true);
    expect(cb.data.auditChain).toEqual(ca.data.auditChain);
  });
});
