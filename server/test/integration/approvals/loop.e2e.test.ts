import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { eventually, OPS, startTestInstance, subscribe, type GqlResult, type TestInstance, ok, rawId } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';

// The whole approval loop on real ports (seed 000 "Try it"): a real fixture agent on its own
// port, a real Taskbay instance (HTTP + graphql-ws on one port), real Postgres, the job worker.
// "Sending the showcase agent the message approve produced a pending request titled 'Delete the
// staging cluster' with risk high and no requester."

let t: TestInstance;
let agent: FixtureAgent;

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

/** GraphQL over the instance's real HTTP port (not yoga.fetch). */
async function http<T = any>(query: string, variables: Record<string, unknown> = {}, token: string | null = t.adminToken): Promise<GqlResult<T>> {
  const res = await fetch(`${t.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.headers.get('content-type')).toMatch(/json/);
  return (await res.json()) as GqlResult<T>;
}

const SUB_FIELDS = `id key source status title summary risk revision digest action requester { id } agent { id } task { id }
  decisions { id outcome revision digest } execution { status attempts messageId observedTaskState }`;

describe('approval loop end to end (real ports)', () => {
  it('agent asks, the subscription shows it, a reviewer approves over HTTP, the agent receives it once and completes', async () => {
    // Everything below over the instance's HTTP port and its WebSocket.
    const viewer = ok(await http(`{ viewer { id email } }`)).viewer;
    expect(viewer.email).toBe('admin@localhost');
    const registered = ok(await http(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent;
    const agentId: string = registered.id;
    expect(registered.extensions).toContain('https://extensions.allsrc.dev/agent-taskbay/approval-request/v1');

    // Subscriptions opened BEFORE startTask.
    const ws = t.ws();
    const requested = subscribe(ws, `subscription { approvalRequested { ${SUB_FIELDS} } }`);
    const changed = subscribe(ws, `subscription { approvalChanged { ${SUB_FIELDS} } }`);
    // graphql-ws has no subscription ack: both are live once a probe request (a person's own,
    // without a task) reaches both of them. Probe events are skipped when reading below.
    const probeIds = new Set<string>();
    const has = (sub: { received: GqlResult[] }, field: string, id: string) => sub.received.some((e) => e.data?.[field]?.id === id);
    let live = false;
    for (let i = 0; i < 10 && !live; i++) {
      const p = ok(
        await http(`mutation($action: JSON!) { createApproval(input: { title: "probe", action: $action }) { id } }`, {
          action: { kind: 'send_message', text: 'probe' },
        }),
      ).createApproval;
      probeIds.add(p.id);
      live = await eventually(async () => has(requested, 'approvalRequested', p.id) && has(changed, 'approvalChanged', p.id), 1000, 20).catch(() => false);
    }
    expect(live).toBe(true);
    const next = async (sub: typeof requested, field: string) => {
      for (;;) {
        const e = await sub.next(10_000);
        expect(e.errors).toBeUndefined();
        if (!probeIds.has(e.data[field].id)) return e.data[field];
      }
    };

    const task = ok(await http(OPS.startTask, { agentId, text: 'approve' })).startTask;
    expect(task.state).toBe('INPUT_REQUIRED');

    // The request arrives on the subscription.
    const approval = await next(requested, 'approvalRequested');
    expect(approval).toMatchObject({
      title: 'Delete the staging cluster',
      summary: 'Removes all staging nodes and volumes.',
      risk: 'HIGH',
      source: 'AGENT',
      status: 'PENDING',
      requester: null,
      revision: 1,
      agent: { id: agentId },
      task: { id: task.id },
      action: { kind: 'send_message', text: 'Approved. Delete the staging cluster.' },
      decisions: [],
      execution: null,
    });
    // Seed 000's digest, computed here without the product's code.
    expect(approval.digest).toBe(sha256(canon({ kind: 'send_message', text: 'Approved. Delete the staging cluster.', data: null })));
    const approvalUuid = rawId(approval.id);
    expect(await t.sql(`select id from approval where title = 'Delete the staging cluster'`)).toEqual([{ id: approvalUuid }]);
    expect(approval.key).toMatch(new RegExp(`^agent:${rawId(task.id)}:[^:]+:${approval.digest.slice(0, 16)}$`));

    // approvalChanged saw the request open too.
    expect(await next(changed, 'approvalChanged')).toMatchObject({ id: approval.id, status: 'PENDING' });

    // Nothing is sent before a decision.
    expect(agent.received.filter((r) => (r.message.metadata as any)?.approval)).toEqual([]);

    // Approve over real HTTP with the revision and digest seen.
    const decision = ok(await http(OPS.approve, { id: approval.id, revision: approval.revision, digest: approval.digest })).approve;
    expect(decision).toMatchObject({ outcome: 'APPROVE', revision: 1, digest: approval.digest });

    // The status change reaches approvalChanged, and later the delivery.
    const statuses: string[] = [];
    let delivered: any;
    for (;;) {
      const a = await next(changed, 'approvalChanged');
      expect(a.id).toBe(approval.id);
      statuses.push(a.status);
      if (a.execution?.status === 'DELIVERED') {
        delivered = a;
        break;
      }
    }
    expect(statuses[0]).toBe('APPROVED');
    expect(new Set(statuses)).toEqual(new Set(['APPROVED']));
    expect(delivered.execution).toMatchObject({ status: 'DELIVERED', attempts: 1, observedTaskState: 'COMPLETED' });
    expect(delivered.decisions).toEqual([{ id: decision.id, outcome: 'APPROVE', revision: 1, digest: approval.digest }]);

    // Over HTTP as well: DELIVERED, COMPLETED.
    const after = ok(
      await http(
        `query($id: ID!) { approval(id: $id) { status execution { status attempts messageId observedTaskState } task { state messages { role parts messageId metadata } } } }`,
        { id: approval.id },
      ),
    ).approval;
    expect(after.status).toBe('APPROVED');
    expect(after.execution).toMatchObject({ status: 'DELIVERED', observedTaskState: 'COMPLETED' });
    expect(after.task.state).toBe('COMPLETED');

    // Exactly one message carrying metadata.approval for this request, not a duplicate.
    const withApproval = agent.received.filter((r) => (r.message.metadata as any)?.approval);
    expect(withApproval).toHaveLength(1);
    const got = withApproval[0]!;
    expect(got.duplicate).toBe(false);
    expect(got.taskId).toBe(task.remoteTaskId);
    expect(got.message.messageId).toBe(after.execution.messageId);
    expect(got.message.parts).toEqual([{ text: 'Approved. Delete the staging cluster.' }]);
    expect((got.message.metadata as any).approval).toEqual({
      requestId: approvalUuid,
      decisionId: decision.id,
      revision: 1,
      revisionDigest: approval.digest,
      // Taskbay's signature (docs/VERIFYING-APPROVALS.md; integration/approval-signing/approved-message.test.ts verifies it).
      signature: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    expect(got.headers['a2a-version']).toBe('1.0');
    expect(got.headers['a2a-extensions']).toContain('https://extensions.allsrc.dev/agent-taskbay/approval-request/v1');

    // The agent accepted it: it recomputed the digest and said so.
    const lastAgent = after.task.messages.filter((m: any) => m.role === 'AGENT').at(-1);
    expect(lastAgent.parts).toEqual([{ text: `Done. Approved revision 1, digest ${approval.digest}` }]);
    expect(agent.getTask(task.remoteTaskId)!.status.state).toBe('TASK_STATE_COMPLETED');
    // The delivered message is in the transcript once, with its metadata.
    const sent = after.task.messages.filter((m: any) => m.messageId === got.message.messageId);
    expect(sent).toHaveLength(1);
    expect(sent[0].metadata.approval.revisionDigest).toBe(approval.digest);

    // The audit chain holds and tells the story of this approval.
    const chain = ok(await http(OPS.auditChain)).auditChain;
    expect(chain).toMatchObject({ ok: true, firstBrokenSeq: null });
    expect(chain.events).toBeGreaterThan(0);
    const events = ok(await http(`query($id: ID!) { approval(id: $id) { events { type actorType } } }`, { id: approval.id })).approval.events;
    expect(events.map((e: any) => e.type)).toEqual(['approval.requested', 'approval.decided', 'delivery.queued', 'delivery.delivered']);
    expect(events[0].actorType).toBe('agent');
    expect(events[1].actorType).toBe('user');

    requested.dispose();
    changed.dispose();
  });

  it('refused decisions over real HTTP (stale digest, no token) and a reject send nothing to the agent', async () => {
    const agentId = ok(await http(`{ agents { id name } }`)).agents.find((a: any) => a.name.includes('showcase')).id;
    const task = ok(await http(OPS.startTask, { agentId, text: 'approve' })).startTask;
    const approval = ok(await http(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest status } } } }`, { t: task.id })).approvals
      .edges[0].node;
    const stale = await http(OPS.approve, { id: approval.id, revision: 1, digest: '0'.repeat(64) });
    expect(stale.errors?.[0]?.extensions).toMatchObject({ code: 'STALE_REVISION', currentRevision: 1, currentDigest: approval.digest });
    const unauth = await http(OPS.approve, { id: approval.id, revision: 1, digest: approval.digest }, null);
    expect(unauth.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const rejected = ok(await http(OPS.reject, { id: approval.id, revision: 1, digest: approval.digest })).reject;
    expect(rejected.outcome).toBe('REJECT');
    const a = ok(await http(`query($id: ID!) { approval(id: $id) { status execution { status } } }`, { id: approval.id })).approval;
    expect(a).toEqual({ status: 'REJECTED', execution: null });
    expect(agent.received.filter((r) => r.taskId === task.remoteTaskId && (r.message.metadata as any)?.approval)).toEqual([]);
    expect(await t.sql(`select count(*)::int as n from delivery where approval_id = $1`, [rawId(approval.id)])).toEqual([{ n: 0 }]);
  });
});
