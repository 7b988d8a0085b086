import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../src/fixture-agent/server.js';
import { WORKER_LOCKS_APPLICATION_NAME } from '../../src/jobs/recovery.js';
import { eventually, OPS, startTestInstance, type TestInstance } from '../support/harness.js';
import { recordStatements, type RecordedStatement, type StatementRecorder } from '../support/statements.js';

// Issue 11: "decision -> agent receipt p99 <= 8 ms". Between the decision's commit and the agent
// receiving the approved message sit graphile-worker's pick-up (a NOTIFY, then one statement
// taking the job) and what the delivery job does before it sends. That part is one statement:
// it counts the attempt and reads the delivery, its request, task and the agent's card together.
// Counted by wrapping pg's Client#query (support/statements.ts); the moment of receipt is the
// fixture agent's, in this process.

let t: TestInstance;
let agent: FixtureAgent;
let agentId: string;
let recorder: StatementRecorder;
/** The statements sent until the agent received the approved message (copied at that moment). */
let sentBeforeReceipt: RecordedStatement[] | null = null;
let recording: RecordedStatement[] = [];

beforeAll(async () => {
  agent = await startFixtureAgent({
    beforeReply: (m) => {
      if ((m.message.metadata as { approval?: unknown } | undefined)?.approval) sentBeforeReceipt ??= [...recording];
    },
  });
  t = await startTestInstance({ env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } });
  const reg = await t.gql(OPS.register, { url: agent.cardUrl('approver') });
  expect(reg.errors).toBeUndefined();
  agentId = reg.data.registerAgent.id;
  recorder = recordStatements();
});

afterAll(async () => {
  recorder?.restore();
  await t?.stop();
  await agent?.close();
});

describe('decision -> agent', () => {
  it('once the worker has taken the delivery job, one statement precedes the message to the agent; its signature is stored with the outcome, after', async () => {
    const st = await t.gql(OPS.startTask, { agentId, text: 'approve' });
    expect(st.errors).toBeUndefined();
    const list = await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: st.data.startTask.id });
    const a = list.data.approvals.edges[0].node;
    await recorder.during(async (live) => {
      recording = live.statements;
      const d = await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest });
      expect(d.errors).toBeUndefined();
      await eventually(async () => sentBeforeReceipt !== null, 15_000, 10);
    });
    const sent = sentBeforeReceipt!;
    // graphile-worker's own statements (idle workers polling, the job taken) and the job
    // recovery's lock connection are not the delivery's.
    const taken = sent.map((s) => /_private_jobs/.test(s.text) && /is_available/.test(s.text)).lastIndexOf(true);
    expect(taken).toBeGreaterThan(-1);
    const delivery = sent.slice(taken + 1).filter((s) => !/graphile_worker/.test(s.text) && s.application !== WORKER_LOCKS_APPLICATION_NAME);
    expect(delivery.map((s) => s.text.replace(/\s+/g, ' ').slice(0, 60))).toEqual([
      expect.stringMatching(/^with d as \( update delivery set attempts = attempts \+ 1/),
    ]);
    const [row] = await eventually(async () => {
      const rows = await t.sql(
        `select d.status, d.approval_signature from delivery d join approval a on a.id = d.approval_id where a.task_id is not null order by d.created_at desc limit 1`,
      );
      return rows[0]?.status === 'DELIVERED' && rows;
    });
    expect(row.approval_signature).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});
