import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryMessageId, DELIVER_JOB } from '../../../src/delivery/queue.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import type { ReceivedMessage } from '../../../src/fixture-agent/tasks.js';
import { appendProbeEvent, eventually, OPS, startTestInstance, subscribe, untilProbeArrives, type TestInstance, ok, rawId } from '../../support/harness.js';
import { freePort } from '../../support/free-port.js';

// Issue 14, "Agent outages": an agent that is down (its port closed) or answers 5xx gets the
// delivery retried with backoff, FAILED after TASKBAY_DELIVERY_MAX_ATTEMPTS, visibly, and
// retryDelivery sends the same messageId once it is back. A push-mode agent answers WORKING and
// pushes the outcome later: the execution record shows the pushed state (docs/ARCHITECTURE.md "The flow" 8,
// "the task state observed afterwards"). 5xx answers are covered in delivery/approved-message.test.ts.

const MAX_ATTEMPTS = 2;

let t: TestInstance;
let door: Forwarder;
let behind: FixtureAgent;
let pusher: FixtureAgent;
/** Push mode: awaited before the push agent pushes (set per test). */
let beforePush: (remoteTaskId: string) => Promise<void> = async () => {};
/** Push mode: awaited before the push agent answers a message (set per test). */
let beforeReply: (m: ReceivedMessage) => Promise<void> = async () => {};

/**
 * A TCP forwarder in front of the fixture agent. down() closes its port (connections are
 * refused, open ones cut); up() opens the same port again, and the agent is back with its tasks.
 */
interface Forwarder {
  port: number;
  up(): Promise<void>;
  down(): Promise<void>;
}
async function forwarder(target: () => number): Promise<Forwarder> {
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  const f: Forwarder = {
    port: 0,
    up: () =>
      new Promise<void>((resolve, reject) => {
        const s = createServer((client) => {
          const upstream = connect(target(), '127.0.0.1');
          const cut = () => {
            client.destroy();
            upstream.destroy();
            sockets.delete(client);
            sockets.delete(upstream);
          };
          for (const sock of [client, upstream]) {
            sockets.add(sock);
            sock.on('error', cut);
            sock.on('close', cut);
          }
          client.pipe(upstream).pipe(client);
        });
        s.once('error', reject);
        s.listen(f.port, '127.0.0.1', () => {
          f.port = (s.address() as AddressInfo).port;
          server = s;
          resolve();
        });
      }),
    down: () =>
      new Promise<void>((resolve) => {
        const s = server!;
        server = null;
        s.close(() => resolve());
        for (const sock of sockets) sock.destroy();
      }),
  };
  await f.up();
  return f;
}

beforeAll(async () => {
  // The agent behind the forwarder: its card names the forwarder's address.
  const behindPort = await freePort();
  door = await forwarder(() => behindPort);
  behind = await startFixtureAgent({ port: behindPort, publicUrl: `http://127.0.0.1:${door.port}` });
  pusher = await startFixtureAgent({
    push: true,
    deferredReplyMs: 0,
    whileWorking: (remoteTaskId) => beforePush(remoteTaskId),
    beforeReply: (m) => beforeReply(m),
  });
  // Push callbacks need the server's public URL, hence a port chosen before it starts.
  const port = await freePort();
  t = await startTestInstance({
    env: { TASKBAY_DELIVERY_MAX_ATTEMPTS: String(MAX_ATTEMPTS), PORT: String(port), TASKBAY_PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
});
afterAll(async () => {
  await t?.stop();
  await door?.down().catch(() => undefined);
  await behind?.close();
  await pusher?.close();
});

const APPROVAL = `query($id: ID!) { approval(id: $id) { id status revision digest
  execution { status attempts messageId lastError observedTaskState observedAt }
  events { type at data } task { state statusHistory { state } } } }`;
const RETRY = `mutation($id: ID!) { retryDelivery(approvalId: $id) { id execution { status messageId } } }`;
const AGENT_ERROR = `query($id: ID!) { agent(id: $id) { lastError { kind message detail at } } }`;

const getApproval = async (id: string) => ok(await t.gql(APPROVAL, { id })).approval;
const approvedMessagesTo = (agent: FixtureAgent, approvalId: string) =>
  agent.received.filter((r) => (r.message.metadata as any)?.approval?.requestId === rawId(approvalId));

/** Opens a request (showcase "approve") and approves it; returns the approval and the decision. */
async function openAndApprove(agentId: string, untilOpen?: (taskId: string) => Promise<void>) {
  const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
  await untilOpen?.(task.id);
  const approval = await eventually(async () => {
    const r = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id }));
    return r.approvals.edges[0]?.node;
  });
  return { task, approval, approve: async () => ok(await t.gql(OPS.approve, approval)).approve as { id: string } };
}

describe('agent down: its port closed', () => {
  it('each attempt is refused and retried with backoff; FAILED after the limit, visible on the execution, in the audit and on the agent; back up on the same port, retryDelivery delivers the same messageId once', async () => {
    const agentId = ok(await t.gql(OPS.register, { url: `http://127.0.0.1:${door.port}/showcase/card.json` })).registerAgent.id;
    const { approval, approve } = await openAndApprove(agentId);

    await door.down();
    const decision = await approve();
    const messageId = deliveryMessageId(decision.id);

    // The first attempt is refused: still QUEUED, the error visible, the next attempt backed off.
    const once = await eventually(async () => {
      const a = await getApproval(approval.id);
      return a.execution?.attempts === 1 && a.execution.lastError ? a : null;
    });
    expect(once.execution).toMatchObject({ status: 'QUEUED', messageId });
    expect(once.execution.lastError).toMatch(/connection refused/);
    const firstError = ok(await t.gql(AGENT_ERROR, { id: agentId })).agent.lastError;
    expect(firstError).toMatchObject({ kind: 'unreachable' });
    expect(firstError.detail).toMatch(/ECONNREFUSED/);
    // The first attempt was the deciding instance's own send; its failure scheduled the next, by
    // the delivery's job (not run yet), exp(n) seconds after the n-th failure.
    const [job] = await t.sql<{ run_at: Date; attempts: number }>(
      `select j.run_at, j.attempts from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
        join delivery d on d.id::text = j.payload->>'deliveryId' where k.identifier = $1 and d.approval_id = $2`,
      [DELIVER_JOB, rawId(approval.id)],
    );
    expect(job!.attempts).toBe(0);
    // Product times (the job's run_at, the error's time): about e seconds, neither at once nor an
    // hour later (the schedule is the behaviour; 5 s of slack for when the error was recorded).
    const backoffMs = job!.run_at.getTime() - Date.parse(firstError.at);
    expect(backoffMs).toBeGreaterThan(Math.exp(1) * 1000 - 300);
    expect(backoffMs).toBeLessThan(Math.exp(1) * 1000 + 5000);

    // The last attempt fails: FAILED, with the error, a delivery.failed event, nothing at the agent.
    // FAILED and its delivery.failed event (both written by the last attempt's failure handler).
    const failed = await eventually(async () => {
      const a = await getApproval(approval.id);
      return a.execution?.status === 'FAILED' && a.events.some((e: any) => e.type === 'delivery.failed') ? a : null;
    }, 20_000);
    expect(failed.status).toBe('APPROVED');
    expect(failed.execution).toMatchObject({ status: 'FAILED', attempts: MAX_ATTEMPTS, messageId, observedTaskState: null });
    expect(failed.execution.lastError).toMatch(/connection refused/);
    const lastError = ok(await t.gql(AGENT_ERROR, { id: agentId })).agent.lastError;
    // The second attempt came no earlier than its backoff allowed.
    expect(Date.parse(lastError.at)).toBeGreaterThanOrEqual(job!.run_at.getTime() - 50);
    const failedEvent = failed.events.find((e: any) => e.type === 'delivery.failed');
    expect(failedEvent.data).toMatchObject({ attempts: MAX_ATTEMPTS, error: failed.execution.lastError });
    expect(approvedMessagesTo(behind, approval.id)).toEqual([]);

    // The agent is back on the same port; a reviewer retries: the same message, delivered once.
    await door.up();
    expect(ok(await t.gql(RETRY, { id: approval.id })).retryDelivery.execution).toEqual({ status: 'QUEUED', messageId });
    // DELIVERED and its delivery.delivered event (one transaction, read in two statements).
    const delivered = await eventually(async () => {
      const a = await getApproval(approval.id);
      return a.execution?.status === 'DELIVERED' && a.events.some((e: any) => e.type === 'delivery.delivered') ? a : null;
    });
    expect(delivered.execution).toMatchObject({ attempts: MAX_ATTEMPTS + 1, messageId, lastError: null, observedTaskState: 'COMPLETED' });
    const got = approvedMessagesTo(behind, approval.id);
    expect(got.map((r) => [r.message.messageId, r.duplicate])).toEqual([[messageId, false]]);
    expect(delivered.events.map((e: any) => e.type).filter((ty: string) => ty.startsWith('delivery.'))).toEqual([
      'delivery.queued',
      'delivery.failed',
      'delivery.retried',
      'delivery.delivered',
    ]);
    expect(ok(await t.gql(OPS.auditChain)).auditChain.ok).toBe(true);
  });
});

describe('push-mode agent: the outcome of a delivery arrives by push', () => {
  let agentId: string;
  beforeAll(async () => {
    agentId = ok(await t.gql(OPS.register, { url: pusher.cardUrl('showcase') })).registerAgent.id;
  });
  const pushedTo = (remoteTaskId: string) => pusher.pushes.filter((p) => p.taskId === remoteTaskId);
  const remoteOf = async (taskGid: string) => (await t.sql('select remote_task_id from task where id = $1', [rawId(taskGid)]))[0].remote_task_id as string;

  it('the delivery records WORKING; the pushed COMPLETED then shows on the execution, in the audit (delivery.observed) and on approvalChanged', async () => {
    const { task, approval, approve } = await openAndApprove(agentId, async (taskId) => {
      // The request itself arrives by push.
      const remote = await remoteOf(taskId);
      await eventually(async () => pushedTo(remote).length === 1);
    });
    const remote = await remoteOf(task.id);
    const changed = subscribe(t.ws(), `subscription($id: ID!) { approvalChanged(approvalId: $id) { id execution { status observedTaskState } } }`, {
      id: approval.id,
    });
    await untilProbeArrives(async () => {
      const before = changed.received.length;
      await appendProbeEvent(t, approval.id);
      return () => changed.received.length > before;
    });

    // The agent pushes its outcome only once Taskbay has recorded the delivery (answered WORKING).
    beforePush = async (id) => {
      if (id !== remote) return;
      await eventually(async () => (await getApproval(approval.id)).execution?.status === 'DELIVERED');
    };
    try {
      const decision = await approve();
      const done = await eventually(async () => {
        const a = await getApproval(approval.id);
        // GraphQL reads the execution and the events in two statements: wait for both.
        const observed = a.events.some((e: any) => e.type === 'delivery.observed');
        return a.execution?.observedTaskState === 'COMPLETED' && observed ? a : null;
      });
      // The agent notes a push once it has read Taskbay's answer, which may be after the commit.
      await eventually(async () => pushedTo(remote).length === 2);
      expect(pushedTo(remote).map((p) => p.outcome)).toEqual([200, 200]);
      expect(done.execution).toMatchObject({ status: 'DELIVERED', attempts: 1, messageId: deliveryMessageId(decision.id), lastError: null });
      expect(done.task.state).toBe('COMPLETED');
      const deliveryEvents = done.events.filter((e: any) => e.type.startsWith('delivery.'));
      expect(deliveryEvents.map((e: any) => [e.type, e.data.observedTaskState ?? null])).toEqual([
        ['delivery.queued', null],
        ['delivery.delivered', 'TASK_STATE_WORKING'],
        ['delivery.observed', 'TASK_STATE_COMPLETED'],
      ]);
      expect(deliveryEvents[2].data).toMatchObject({ messageId: deliveryMessageId(decision.id), previousObservedTaskState: 'TASK_STATE_WORKING' });
      expect(Date.parse(done.execution.observedAt)).toBeGreaterThanOrEqual(Date.parse(deliveryEvents[1].at));
      await eventually(async () => changed.received.some((e) => e.data?.approvalChanged.execution?.observedTaskState === 'COMPLETED'));
      expect(approvedMessagesTo(pusher, approval.id)).toHaveLength(1);
    } finally {
      beforePush = async () => {};
      changed.dispose();
    }
  });

  it('a push that arrives before the WORKING answer is recorded is not undone by it: the task stays COMPLETED and so does the execution', async () => {
    const { task, approval, approve } = await openAndApprove(agentId, async (taskId) => {
      const remote = await remoteOf(taskId);
      await eventually(async () => pushedTo(remote).length === 1);
    });
    const remote = await remoteOf(task.id);
    // The agent holds its WORKING answer to the approved message until Taskbay accepted the push.
    beforeReply = async (m) => {
      if (m.taskId !== remote || !(m.message.metadata as any)?.approval) return;
      await eventually(async () => pushedTo(remote).length === 2);
    };
    try {
      await approve();
      const done = await eventually(async () => {
        const a = await getApproval(approval.id);
        return a.execution?.status === 'DELIVERED' ? a : null;
      });
      expect(pushedTo(remote).map((p) => p.outcome)).toEqual([200, 200]);
      expect(done.execution.observedTaskState).toBe('COMPLETED');
      expect(done.task.state).toBe('COMPLETED');
      // The first push (INPUT_REQUIRED) may be recorded before or after the first WORKING answer;
      // what matters here is that the late WORKING answer to the delivery adds nothing after COMPLETED.
      const states = done.task.statusHistory.map((s: { state: string }) => s.state);
      expect(states.at(-1)).toBe('COMPLETED');
      expect([...states.slice(0, -1)].sort()).toEqual(['INPUT_REQUIRED', 'WORKING']);
      const deliveryEvents = done.events.filter((e: any) => e.type.startsWith('delivery.'));
      expect(deliveryEvents.map((e: any) => [e.type, e.data.observedTaskState ?? null])).toEqual([
        ['delivery.queued', null],
        ['delivery.delivered', 'TASK_STATE_COMPLETED'],
      ]);
    } finally {
      beforeReply = async () => {};
    }
  });
});
