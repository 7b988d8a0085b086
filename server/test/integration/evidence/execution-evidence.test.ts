import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_EVIDENCE_EXTENSION as SERVER_URI, MEDIA_TYPE } from '../../../src/a2a/extensions.js';
import { APPROVAL_REQUEST, approvalPart } from '../../../src/fixture-agent/content.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { EXECUTION_EVIDENCE_EXTENSION, EXECUTION_EVIDENCE_MEDIA_TYPE, executionEvidencePart, JWKS_PATH } from '../../../src/verify-approval/index.js';
import { createTestDatabase, eventually, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';

// Executed-as-approved evidence (issue 12 items 3 and 4; docs/VERIFYING-APPROVALS.md "Reporting
// execution"). The fixture's reporter agent verifies the signed approval and reports executing
// exactly it; the divergent agent reports another digest; the unlisted agent reports without
// advertising the extension; the scripted agent sends whatever report a test scripts. Everything
// over real HTTP: Taskbay's JWKS, the agents' A2A endpoints.

const PUBLIC_URL = 'https://taskbay.example';

let t: TestInstance;
let agent: FixtureAgent;
const ids: Record<string, string> = {};

const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { id status revision digest } } } }`;
const EVIDENCE_FIELDS = 'id decisionId outcome detail reportedDigest approvedDigest digestMatches messageId reportedAt';
const LEDGER = `query($id: ID!) { approval(id: $id) {
  status
  task { state messages { role messageId parts } }
  execution { status messageId observedTaskState digestMismatch evidence { ${EVIDENCE_FIELDS} } }
  executionEvidence { id }
  events { type data }
} }`;
const SEND = `mutation($taskId: ID!, $data: JSON) { sendTaskMessage(input: { taskId: $taskId, data: $data }) { id state } }`;
const SYNC = `mutation($taskId: ID!) { syncTask(taskId: $taskId) { id state } }`;

async function openRequest(variant: string) {
  const task = ok(await t.gql(OPS.startTask, { agentId: ids[variant], text: 'approve' })).startTask;
  const [edge] = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
  return { taskId: task.id as string, approval: edge.node as { id: string; revision: number; digest: string } };
}

/** Opens a request on `variant`, approves it and answers the ledger once the delivery is DELIVERED (the agent's reply observed). */
async function approvedOn(variant: string) {
  const o = await openRequest(variant);
  const decision = ok(await t.gql(OPS.approve, { id: o.approval.id, revision: o.approval.revision, digest: o.approval.digest })).approve;
  await eventually(async () => {
    const now = ok(await t.gql(`query($id: ID!) { approval(id: $id) { execution { status } } }`, { id: o.approval.id })).approval;
    return now.execution?.status === 'DELIVERED' || now.execution?.status === 'FAILED' ? now : null;
  });
  // Read again once the delivery has ended: one GraphQL request is not one snapshot, so a ledger
  // read across the delivery's commit could hold its evidence but not yet its audit events.
  const ledger = ok(await t.gql(LEDGER, { id: o.approval.id })).approval;
  // A delivery that failed (on a loaded machine, an attempt can time out) says why here, not in a later assertion.
  expect(ledger.execution.status, JSON.stringify(await t.sql('select status, last_error from delivery where approval_id = $1', [rawId(o.approval.id)]))).toBe(
    'DELIVERED',
  );
  return { ...o, requestId: rawId(o.approval.id), decisionId: decision.id as string, ledger };
}

const evidenceRows = (approvalId: string) => t.sql('select * from execution_evidence where approval_id = $1', [rawId(approvalId)]);
const refusals = (taskId: string) =>
  t.sql(`select data from audit_event where stream = $1 and type = 'evidence.refused' order by seq`, [`task:${rawId(taskId)}`]);
const evidenceEventTypes = (ledger: any) => ledger.events.map((e: { type: string }) => e.type).filter((x: string) => x.startsWith('evidence.'));

/** A scripted agent's reply: its next status carries exactly these parts. */
const scripted = (state: string, ...parts: unknown[]) => ({ reply: { state, parts } });

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance({ databaseUrl: await createTestDatabase(), env: { TASKBAY_PUBLIC_URL: PUBLIC_URL, TASKBAY_DELIVERY_MAX_ATTEMPTS: '1' } });
  // The reporting agents check Taskbay's signature before acting (docs/VERIFYING-APPROVALS.md).
  agent.trustApprovalsFrom({ issuer: PUBLIC_URL, jwksUrl: `${t.instance.url}${JWKS_PATH}` });
  for (const variant of ['reporter', 'divergent', 'unlisted', 'approver', 'scripted']) {
    ids[variant] = ok(await t.gql(OPS.register, { url: agent.cardUrl(variant as never) })).registerAgent.id;
  }
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('the execution-evidence extension', () => {
  it('one URI and media type: the shipped module spells them as the server does; the reporting agents advertise the extension', async () => {
    expect(EXECUTION_EVIDENCE_EXTENSION).toBe(SERVER_URI);
    expect(EXECUTION_EVIDENCE_MEDIA_TYPE).toBe(MEDIA_TYPE.executionEvidence);
    const extensions = async (variant: string) => ok(await t.gql(`query($id: ID!) { agent(id: $id) { extensions } }`, { id: ids[variant] })).agent.extensions;
    expect(await extensions('reporter')).toContain(SERVER_URI);
    expect(await extensions('divergent')).toContain(SERVER_URI);
    expect(await extensions('unlisted')).not.toContain(SERVER_URI);
    // Taskbay names the extension in A2A-Extensions to the agents that advertise it.
    await openRequest('reporter');
    expect(agent.received.at(-1)!.headers['a2a-extensions']).toContain(SERVER_URI);
  });
});

describe('executed as approved, reported by the agent', () => {
  it('a matching report is recorded as evidence, shown in the ledger and audited as evidence.reported', async () => {
    const d = await approvedOn('reporter');
    const x = d.ledger.execution;
    expect(d.ledger.status).toBe('APPROVED');
    expect(x.status).toBe('DELIVERED');
    // The agent verified the signature, then reported what it executed: the digest recomputed from what it received.
    const approvedDigest = sha256(canon({ kind: 'send_message', text: APPROVAL_REQUEST.action.text, data: null }));
    const reply = d.ledger.task.messages.at(-1);
    expect(reply.parts[0].text).toMatch(/Signature verified/);
    expect(x.evidence, JSON.stringify({ refusals: await refusals(d.taskId), parts: reply.parts, rows: await evidenceRows(d.approval.id) })).toEqual([
      {
        id: expect.any(String),
        decisionId: d.decisionId,
        outcome: 'SUCCEEDED',
        detail: 'Executed the approved action.',
        reportedDigest: approvedDigest,
        approvedDigest,
        digestMatches: true,
        messageId: reply.messageId,
        reportedAt: expect.any(String),
      },
    ]);
    expect(x.digestMismatch).toBe(false);
    expect(d.ledger.executionEvidence).toEqual([{ id: x.evidence[0].id }]);
    expect(evidenceEventTypes(d.ledger)).toEqual(['evidence.reported']);
    const event = d.ledger.events.find((e: { type: string }) => e.type === 'evidence.reported');
    expect(event.data).toMatchObject({ decisionId: d.decisionId, reportedDigest: approvedDigest, digestMatches: true, outcome: 'SUCCEEDED' });
    // The part stays in the message as the agent sent it.
    expect(reply.parts[1]).toEqual({
      data: executionEvidencePart(d, approvedDigest, 'succeeded', 'Executed the approved action.').data,
      mediaType: MEDIA_TYPE.executionEvidence,
    });

    // Evidence is a fact: the database refuses to change it.
    await expect(t.sql(`update execution_evidence set outcome = 'FAILED' where id = $1`, [x.evidence[0].id])).rejects.toThrow(/append-only/);
  });

  it('evidence is distinct from the observed task state: an agent that reports nothing leaves only the observation', async () => {
    const quiet = await approvedOn('approver');
    expect(quiet.ledger.execution.observedTaskState).toBe('COMPLETED');
    expect(quiet.ledger.task.state).toBe('COMPLETED');
    expect(quiet.ledger.execution.evidence).toEqual([]);
    expect(quiet.ledger.executionEvidence).toEqual([]);
    expect(evidenceEventTypes(quiet.ledger)).toEqual([]);

    // The divergent agent's task completes as well: the observed state alone does not tell it executed something else.
    const other = await approvedOn('divergent');
    expect(other.ledger.execution.observedTaskState).toBe('COMPLETED');
    expect(other.ledger.execution.evidence).toHaveLength(1);
    // Recording the evidence changed neither the request nor the delivery.
    expect(other.ledger.status).toBe('APPROVED');
    expect(other.ledger.execution.status).toBe('DELIVERED');
  });

  it('a report naming another digest is flagged loudly: evidence.digest_mismatch, digestMatches false, digestMismatch true, a webhook', async () => {
    const receiver = ok(
      await t.gql(
        `mutation($url: String!, $types: [WebhookEventType!]!) { createWebhookEndpoint(input: { url: $url, eventTypes: $types }) { endpoint { id } } }`,
        { url: 'http://127.0.0.1:9/hook', types: ['EVIDENCE_DIGEST_MISMATCH'] },
      ),
    ).createWebhookEndpoint.endpoint;
    const d = await approvedOn('divergent');
    const x = d.ledger.execution;
    const executed = sha256(canon({ kind: 'send_message', text: 'Delete the production cluster.', data: null }));
    expect(x.evidence).toMatchObject([
      { decisionId: d.decisionId, reportedDigest: executed, approvedDigest: d.approval.digest, digestMatches: false, outcome: 'SUCCEEDED' },
    ]);
    expect(x.digestMismatch).toBe(true);
    expect(evidenceEventTypes(d.ledger)).toEqual(['evidence.digest_mismatch']);
    const [hook] = await t.sql(`select event_type, payload from webhook_delivery where endpoint_id = $1`, [rawId(receiver.id)]);
    expect(hook.event_type).toBe('evidence.digest_mismatch');
    const payload = JSON.parse(hook.payload);
    expect(payload.data.evidence).toEqual({
      decisionId: d.decisionId,
      outcome: 'SUCCEEDED',
      reportedDigest: executed,
      approvedDigest: d.approval.digest,
      messageId: x.evidence[0].messageId,
    });
    // The agent's own words stay in Taskbay.
    expect(hook.payload).not.toContain('Ran a different command');
  });

  it('a report observed again (GetTask after the fact) records nothing twice', async () => {
    const d = await approvedOn('reporter');
    expect(await evidenceRows(d.approval.id)).toHaveLength(1);
    ok(await t.gql(SYNC, { taskId: d.taskId }));
    ok(await t.gql(SYNC, { taskId: d.taskId }));
    expect(await evidenceRows(d.approval.id)).toHaveLength(1);
    const ledger = ok(await t.gql(LEDGER, { id: d.approval.id })).approval;
    expect(evidenceEventTypes(ledger)).toEqual(['evidence.reported']);
  });
});

describe('reports that are not attributed', () => {
  it('an agent whose card does not advertise the extension: its part stays ordinary content, nothing is recorded or refused', async () => {
    const d = await approvedOn('unlisted');
    const reply = d.ledger.task.messages.at(-1);
    expect(reply.parts.map((p: { mediaType?: string }) => p.mediaType ?? null)).toEqual([null, MEDIA_TYPE.executionEvidence]);
    expect(reply.parts[1].data).toMatchObject({ decisionId: d.decisionId, executedDigest: d.approval.digest });
    expect(d.ledger.execution.evidence).toEqual([]);
    expect(evidenceEventTypes(d.ledger)).toEqual([]);
    expect(await evidenceRows(d.approval.id)).toEqual([]);
    expect(await refusals(d.taskId)).toEqual([]);
  });

  it("a report naming another task's decision, an unknown decision, a rejection or a malformed part is refused with a reason", async () => {
    const mine = await approvedOn('reporter');
    const before = await evidenceRows(mine.approval.id);

    // The scripted agent (advertising the extension) opens a request of its own, which is rejected.
    const task = ok(
      await t.gql(OPS.startTask, { agentId: ids.scripted, data: scripted('TASK_STATE_INPUT_REQUIRED', { text: 'Approve?' }, approvalPart(APPROVAL_REQUEST)) }),
    ).startTask;
    const [edge] = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
    const rejected = ok(await t.gql(OPS.reject, { id: edge.node.id, revision: edge.node.revision, digest: edge.node.digest })).reject;

    const report = (decision: { requestId: string; decisionId: string }, extra: Record<string, unknown> = {}) => {
      const part = executionEvidencePart(decision, mine.approval.digest, 'succeeded');
      return { ...part, data: { ...part.data, ...extra } };
    };
    const send = (part: unknown) => t.gql(SEND, { taskId: task.id, data: scripted('TASK_STATE_INPUT_REQUIRED', { text: 'Executed.' }, part) });
    ok(await send(report({ requestId: mine.requestId, decisionId: mine.decisionId })));
    ok(await send(report({ requestId: mine.requestId, decisionId: randomUUID() })));
    ok(await send(report({ requestId: rawId(edge.node.id), decisionId: rejected.id })));
    ok(await send(report({ requestId: randomUUID(), decisionId: rejected.id })));
    ok(await send(report({ requestId: mine.requestId, decisionId: mine.decisionId }, { outcome: 'done', detail: '<b>x</b>' })));

    const reasons = (await refusals(task.id)).map((r) => [r.data.reason, r.data.decisionId]);
    expect(reasons).toEqual([
      ['OTHER_TASK', mine.decisionId],
      ['UNKNOWN_DECISION', expect.any(String)],
      ['NOT_APPROVED', rejected.id],
      ['REQUEST_MISMATCH', rejected.id],
      ['INVALID_PART', mine.decisionId],
    ]);
    // Never attributed: the named request gained no evidence and no event; the rejected one neither.
    expect(await evidenceRows(mine.approval.id)).toEqual(before);
    expect(await evidenceRows(edge.node.id)).toEqual([]);
    const ledger = ok(await t.gql(LEDGER, { id: mine.approval.id })).approval;
    expect(evidenceEventTypes(ledger)).toEqual(['evidence.reported']);
    // The task itself is observed as usual.
    expect(ok(await t.gql(`query($id: ID!) { task(id: $id) { state } }`, { id: task.id })).task.state).toBe('INPUT_REQUIRED');
  });
});
