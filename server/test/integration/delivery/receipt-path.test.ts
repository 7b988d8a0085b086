import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVER_JOB } from '../../../src/delivery/queue.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { WORKER_LOCKS_APPLICATION_NAME } from '../../../src/jobs/recovery.js';
import { eventually, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { recordStatements, type RecordedStatement, type StatementRecorder } from '../../support/statements.js';

// Issue 11: "decision -> agent receipt p99 <= 8 ms". The deciding instance sends the approved
// message itself right after the decision's commit (delivery/direct.ts); the delivery's job is the
// fallback, and sends when that attempt failed. On either path one statement sits between the
// start and the send: it takes the delivery's claim, counts the attempt and reads the delivery,
// its request, task and the agent's card together. Counted by wrapping pg's Client#query
// (support/statements.ts); the moment of receipt is the fixture agent's, in this process.

let t: TestInstance;
let agent: FixtureAgent;
let agentId: string;
let recorder: StatementRecorder;
/** The statements sent until the agent received an approved message (copied at that moment). */
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

/** Opens a request, approves it while recording, and returns what was sent until the agent received it. */
async function approveAndRecord(beforeApproving = () => {}): Promise<RecordedStatement[]> {
  const st = await t.gql(OPS.startTask, { agentId, text: 'approve' });
  expect(st.errors).toBeUndefined();
  const list = await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: st.data.startTask.id });
  const a = list.data.approvals.edges[0].node;
  sentBeforeReceipt = null;
  beforeApproving();
  await recorder.during(async (live) => {
    recording = live.statements;
    const d = await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest });
    expect(d.errors).toBeUndefined();
    await eventually(async () => sentBeforeReceipt !== null, 15_000, 10);
  });
  return sentBeforeReceipt!;
}

/** The delivery's own statements: graphile-worker's (idle workers polling) and the job recovery's lock connection are not. */
const deliveryStatements = (sent: RecordedStatement[]) =>
  sent.filter((s) => !/graphile_worker/.test(s.text) && s.application !== WORKER_LOCKS_APPLICATION_NAME).map((s) => s.text.replace(/\s+/g, ' ').slice(0, 200));

const BEGIN_ATTEMPT =
  /^with c as \(select '[0-9a-f-]{36}'::uuid as id, \d+::int \* interval '1 millisecond' as lease\), d as \( update delivery set attempts = attempts \+/;

async function storedSignatureOfLatest() {
  const [row] = await eventually(async () => {
    const rows = await t.sql(
      `select d.status, d.approval_signature from delivery d join approval a on a.id = d.approval_id where a.task_id is not null order by d.created_at desc limit 1`,
    );
    return rows[0]?.status === 'DELIVERED' && rows;
  });
  return row.approval_signature;
}

/**
 * What was sent after the transaction that (re)scheduled the delivery's job committed (the
 * decision's, or a failed attempt's outcome): its add_job, then the commit on the same connection.
 */
function afterScheduled(sent: RecordedStatement[]): RecordedStatement[] {
  const scheduled = sent.map((s) => /graphile_worker\.add_job/.test(s.text) && s.text.includes(`'${DELIVER_JOB}'`)).lastIndexOf(true);
  expect(scheduled).toBeGreaterThan(-1);
  const connection = sent[scheduled]!.connection;
  const committed = sent.findIndex((s, i) => i > scheduled && s.connection === connection && /^commit/i.test(s.text.trim()));
  expect(committed).toBeGreaterThan(scheduled);
  return sent.slice(committed + 1);
}

describe('decision -> agent', () => {
  it('once the decision has committed, one statement precedes the message to the agent (sent by the deciding instance); its signature is stored with the outcome, after', async () => {
    const sent = afterScheduled(await approveAndRecord());
    expect(deliveryStatements(sent)).toEqual([expect.stringMatching(BEGIN_ATTEMPT)]);
    expect(await storedSignatureOfLatest()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('when that send failed, the job sends again: once the failure has scheduled it, graphile-worker takes it and one statement precedes the message', async () => {
    const sent = afterScheduled(await approveAndRecord(() => agent.failNext('approver', 1)));
    // graphile-worker's statement taking a job (idle workers poll with the same one).
    expect(sent.some((s) => /_private_jobs/.test(s.text) && /is_available/.test(s.text))).toBe(true);
    expect(deliveryStatements(sent)).toEqual([expect.stringMatching(BEGIN_ATTEMPT)]);
    expect(await storedSignatureOfLatest()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const [d] = await t.sql(`select attempts from delivery order by created_at desc limit 1`);
    expect(d.attempts).toBe(2);
  });
});
