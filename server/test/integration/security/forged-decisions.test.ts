import { createPublicKey, randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { actionDigest } from '../../../src/approvals/digest.js';
import { eventHash, rowToEvent } from '../../../src/audit/log.js';
import { parseAuditSigningKey, verifySignature } from '../../../src/audit/signing.js';
import { deliveryMessageId } from '../../../src/delivery/queue.js';
import { startAgUiFixture, type AgUiFixture } from '../../../src/fixture-agent/agui.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { resumeRunIdOf } from '../../../src/agui/decision.js';
import { logDestination } from '../../../src/log.js';
import { JWKS_PATH } from '../../../src/verify-approval/index.js';
import { createMember, eventually, OPS, startTestInstance, TEST_AUDIT_KEY, type TestInstance, ok, rawId } from '../../support/harness.js';
import { createPolicy } from '../../support/policies.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// Issue 22, finding 2: with only the app role (the server's own DATABASE_URL login), rows that
// say a decision was taken are not enough. A forged APPROVE (decision, delivery and job rows), a
// request whose action was rewritten after its genuine decision, forged quorum votes and a forged
// command grant are each refused, reported (a signed integrity.alert, the metric, the log line,
// Approval.integrityAlerts) and never acted on: nothing reaches the agent, nothing is signed,
// nothing counts, no grant is used (audit/decision-record.ts).
//
// The tampering runs as the app role over its own Postgres connection; the instance runs the job
// worker, so a forged job is taken by graphile-worker as any other. One attempt per delivery
// (TASKBAY_DELIVERY_MAX_ATTEMPTS=1): a genuine send made to fail once ends FAILED and waits for a
// reviewer's retry, the window in which the request is rewritten.

const PUBLIC_URL = 'https://taskbay.example';
const DROP = { kind: 'send_message' as const, text: 'DROP DATABASE production' };

let t: TestInstance;
let agent: FixtureAgent;
let aguiAgent: AgUiFixture;
let app: pg.Client;
let showcaseId: string;
let adminUserId: string;
const reviewers: { id: string; uuid: string; token: string }[] = [];

beforeAll(async () => {
  agent = await startFixtureAgent();
  aguiAgent = await startAgUiFixture();
  t = await startTestInstance({ env: { TASKBAY_PUBLIC_URL: PUBLIC_URL, TASKBAY_DELIVERY_MAX_ATTEMPTS: '1' } });
  // The agent checks the approval JWS against Taskbay's JWKS, as an agent that verifies does.
  agent.trustApprovalsFrom({ issuer: PUBLIC_URL, jwksUrl: `${t.instance.url}${JWKS_PATH}` });
  aguiAgent.trust(PUBLIC_URL, `${t.instance.url}${JWKS_PATH}`);
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  adminUserId = rawId(ok(await t.gql('{ viewer { id } }')).viewer.id);
  for (let i = 0; i < 2; i++) {
    const m = await createMember(t);
    ok(await t.gql(OPS.grant, { userId: m.id, agentId: showcaseId, permission: 'OPERATE' }));
    reviewers.push({ id: m.id, uuid: rawId(m.id), token: m.token });
  }
  app = new pg.Client({ connectionString: t.appUrl });
  await app.connect();
});

afterAll(async () => {
  await app?.end();
  await t?.stop();
  await agent?.close();
  await aguiAgent?.close();
});

afterEach(() => vi.restoreAllMocks());

/** As the app role, in one transaction. */
async function asApp(fn: (c: pg.Client) => Promise<unknown>) {
  await app.query('begin');
  try {
    await fn(app);
    await app.query('commit');
  } catch (e) {
    await app.query('rollback');
    throw e;
  }
}

const globalId = (uuid: string) => Buffer.from(`Approval:${uuid}`).toString('base64');
const APPROVAL = `query($id: ID!) { approval(id: $id) { id status revision digest
  execution { status attempts lastError }
  quorum { count required met approvals { id } } } }`;
const getApproval = async (uuid: string) => ok(await t.gql(APPROVAL, { id: globalId(uuid) })).approval;
/** What the console shows of the request's integrity alerts. */
const shownAlerts = async (uuid: string) =>
  ok(await t.gql(`query($id: ID!) { approval(id: $id) { integrityAlerts { at kind problem message } } }`, { id: globalId(uuid) })).approval.integrityAlerts;

async function openRequest(opts: { skillId?: string } = {}) {
  const task = ok(await t.gql(OPS.startTask, { agentId: showcaseId, text: 'approve', skillId: opts.skillId })).startTask;
  const node = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest status } } } }`, { t: task.id })).approvals.edges[0]
    .node;
  expect(node.status).toBe('PENDING');
  return { id: node.id as string, uuid: rawId(node.id), revision: node.revision as number, digest: node.digest as string, taskId: task.id as string };
}

const receivedFor = (uuid: string) => agent.received.filter((r) => (r.message.metadata as any)?.approval?.requestId === uuid);
const deliveryOf = async (uuid: string) =>
  (await t.sql(`select id, status, attempts, last_error, approval_signature from delivery where approval_id = $1`, [uuid]))[0];
/** Waits until the delivery is no longer QUEUED (sent or refused) and returns it. */
const untilEnded = async (uuid: string) => eventually(async () => ((await deliveryOf(uuid))?.status !== 'QUEUED' ? deliveryOf(uuid) : null), 20_000);
const jobsOf = (deliveryId: string) => t.sql(`select id from graphile_worker.jobs where key = $1`, [`deliver:${deliveryId}`]);

/** The integrity alerts in the approval's stream, each checked against the audit key independently of the product's check. */
async function signedAlerts(uuid: string) {
  const key = createPublicKey(parseAuditSigningKey(TEST_AUDIT_KEY));
  const rows = await t.sql(`select * from audit_event where stream = $1 and type = 'integrity.alert' order by seq`, [`approval:${uuid}`]);
  return rows.map((r) => {
    const e = rowToEvent(r);
    return { data: e.data, actorType: e.actorType, signed: eventHash(e) === e.hash && !!e.sig && verifySignature(key, 'event', e.hash, e.sig) };
  });
}

function metric(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(m[3]);
  }
  return total;
}
const alertsMetric = async (kind: string) => metric(await (await fetch(`${t.instance.url}/metrics`)).text(), 'taskbay_integrity_alerts_total', { kind });

/** The log lines written while fn runs that report an integrity alert. */
async function alertLinesDuring(fn: () => Promise<void>): Promise<Record<string, any>[]> {
  const written = vi.spyOn(logDestination, 'write');
  await fn();
  const lines = written.mock.calls.map((c) => JSON.parse(String(c[0]).trimEnd()) as Record<string, any>);
  written.mockRestore();
  return lines.filter((l) => l.integrityAlert);
}

/** The reviewer's forgery: a PENDING request rewritten to DROP DATABASE, an APPROVE decision, a delivery and its job, all as the app role. */
async function forgeApproval(o: { uuid: string; revision: number }) {
  const decisionId = randomUUID();
  const deliveryId = randomUUID();
  const digest = actionDigest(DROP);
  await asApp(async (c) => {
    await c.query(`update approval set action = $2::jsonb, digest = $3, status = 'APPROVED', closed_at = now() where id = $1 and status = 'PENDING'`, [
      o.uuid,
      JSON.stringify(DROP),
      digest,
    ]);
    await c.query(
      `insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote, decided_at) values ($1, $2, 'APPROVE', $3, $4, $5, false, now())`,
      [decisionId, o.uuid, o.revision, digest, adminUserId],
    );
    await c.query(
      `insert into delivery (id, approval_id, decision_id, status, attempts, attempts_at_queue, message_id, created_at, updated_at)
       values ($1, $2, $3, 'QUEUED', 0, 0, $4, now(), now())`,
      [deliveryId, o.uuid, decisionId, deliveryMessageId(decisionId)],
    );
    await c.query(`select graphile_worker.add_job('deliver_approval', json_build_object('deliveryId', $1::text), job_key => 'deliver:' || $1::text)`, [
      deliveryId,
    ]);
  });
  return { decisionId, deliveryId, digest };
}

describe('a decision nobody gave (issue 22, finding 2)', () => {
  it('forged PENDING -> APPROVE with decision, delivery and job rows as the app role: the agent never receives it, nothing is signed, the delivery is refused and reported', async () => {
    const o = await openRequest();
    const before = await alertsMetric('delivery');
    let forged!: Awaited<ReturnType<typeof forgeApproval>>;
    let d: any;
    const lines = await alertLinesDuring(async () => {
      forged = await forgeApproval(o);
      d = await untilEnded(o.uuid);
    });

    expect(receivedFor(o.uuid)).toEqual([]);
    expect(d).toMatchObject({ id: forged.deliveryId, status: 'FAILED', approval_signature: null });
    expect(d.last_error).toBe(`refused: the decision has no valid signed record (no signed audit event records decision ${forged.decisionId})`);
    // Ended, not retried: no job is left.
    expect(await jobsOf(forged.deliveryId)).toEqual([]);

    const alerts = await signedAlerts(o.uuid);
    expect(alerts).toEqual([
      {
        actorType: 'system',
        signed: true,
        data: expect.objectContaining({
          kind: 'delivery',
          problem: 'no_signed_event',
          approvalId: o.uuid,
          decisionId: forged.decisionId,
          deliveryId: forged.deliveryId,
        }),
      },
    ]);
    expect((await alertsMetric('delivery')) - before).toBe(1);
    expect(lines).toEqual([expect.objectContaining({ level: 'error', integrityAlert: 'delivery', problem: 'no_signed_event', decisionId: forged.decisionId })]);

    expect((await getApproval(o.uuid)).execution).toMatchObject({ status: 'FAILED', lastError: d.last_error });
    expect(await shownAlerts(o.uuid)).toEqual([
      { at: expect.any(String), kind: 'delivery', problem: 'no_signed_event', message: `no signed audit event records decision ${forged.decisionId}` },
    ]);

    // The audit log was not touched (the app role cannot change it), so it verifies, and it now
    // says what happened: no approval.decided for a request its row calls APPROVED, the refused
    // delivery and the signed alert. auditChain, Approval.chain and the full verification (verifyAuditChain) all
    // say ok: they vouch for the log, not for the rows; the rows are checked against the log
    // where they would be acted on (above), and what they found is in the log.
    expect((await t.sql(`select type from audit_event where stream = $1 order by seq`, [`approval:${o.uuid}`])).map((r) => r.type)).toEqual([
      'approval.requested',
      'delivery.failed',
      'integrity.alert',
    ]);
    expect((await t.sql(`select status from approval where id = $1`, [o.uuid]))[0]).toEqual({ status: 'APPROVED' });
    const sound = { ok: true, firstBrokenSeq: null, reason: null };
    expect(ok(await t.gql(`{ auditChain { ok firstBrokenSeq reason failure { id } } }`)).auditChain).toEqual({ ...sound, failure: null });
    expect(ok(await t.gql(`query($id: ID!) { approval(id: $id) { chain { ok firstBrokenSeq reason } } }`, { id: o.id })).approval.chain).toEqual(sound);
    const asked = ok(await t.gql(`mutation { verifyAuditChain { fullVerification { requestedAt } } }`)).verifyAuditChain.fullVerification;
    const full = await eventually(async () => {
      const c = ok(await t.gql(`{ auditChain { ok firstBrokenSeq reason failure { id } fullVerification { state requestedAt } } }`)).auditChain;
      return c.fullVerification.state === 'DONE' && c;
    }, 60_000);
    expect(full).toEqual({ ...sound, failure: null, fullVerification: { state: 'DONE', requestedAt: asked.requestedAt } });
  });

  it("a reviewer's retry of the refused delivery is refused again, and reported again: still nothing sent", async () => {
    const o = await openRequest();
    const forged = await forgeApproval(o);
    await untilEnded(o.uuid);
    const r = ok(await t.gql(`mutation($id: ID!) { retryDelivery(approvalId: $id) { id } }`, { id: o.id }));
    expect(r.retryDelivery.id).toBe(o.id);
    expect(await untilEnded(o.uuid)).toMatchObject({ status: 'FAILED', attempts: 2 });
    expect(receivedFor(o.uuid)).toEqual([]);
    expect((await signedAlerts(o.uuid)).map((a) => [a.signed, a.data.kind, a.data.decisionId])).toEqual([
      [true, 'delivery', forged.decisionId],
      [true, 'delivery', forged.decisionId],
    ]);
    expect((await deliveryOf(o.uuid)).approval_signature).toBeNull();
    expect(await jobsOf(forged.deliveryId)).toEqual([]);
  });

  it('a genuine approval whose action and digest are rewritten after the decision, before delivery: refused, the rewritten action never reaches the agent', async () => {
    const o = await openRequest();
    // The genuine send fails (the agent answers 503), so the delivery waits, FAILED, for a retry.
    agent.failNext('showcase', 1);
    const decision = ok(await t.gql(OPS.approve, { id: o.id, revision: o.revision, digest: o.digest })).approve;
    const failed = await untilEnded(o.uuid);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(receivedFor(o.uuid)).toEqual([]);
    // That attempt signed what was approved (stored with its outcome).
    const claimsOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claimsOf(failed.approval_signature)).toMatchObject({ requestId: o.uuid, decisionId: decision.id, revisionDigest: o.digest });

    // The app role cannot update a closed request (approval_final), but it can delete the row and
    // insert it again, with its id, status and decision, and another action and digest.
    await asApp(async (c) => {
      const { rows } = await c.query(`delete from approval where id = $1 returning to_jsonb(approval.*) as row`, [o.uuid]);
      const row = { ...rows[0].row, action: DROP, digest: actionDigest(DROP) };
      await c.query(`insert into approval select * from jsonb_populate_record(null::approval, $1::jsonb)`, [JSON.stringify(row)]);
    });
    const [rewritten] = await t.sql(`select status, digest, action from approval where id = $1`, [o.uuid]);
    expect(rewritten).toEqual({ status: 'APPROVED', digest: actionDigest(DROP), action: DROP });

    const before = await alertsMetric('delivery');
    ok(await t.gql(`mutation($id: ID!) { retryDelivery(approvalId: $id) { id } }`, { id: o.id }));
    const d = await untilEnded(o.uuid);
    expect(receivedFor(o.uuid)).toEqual([]);
    // Nothing new was signed: the stored signature is still the one over the approved digest.
    expect(d).toMatchObject({ status: 'FAILED', attempts: 2, approval_signature: failed.approval_signature });
    expect(d.last_error).toBe(
      `refused: the decision has no valid signed record (the request's digest, action differ from what decision ${decision.id} signed (digest ${o.digest}))`,
    );
    expect((await signedAlerts(o.uuid))[0]).toMatchObject({ signed: true, data: { kind: 'delivery', problem: 'action_digest', decisionId: decision.id } });
    expect((await alertsMetric('delivery')) - before).toBe(1);
    expect(await shownAlerts(o.uuid)).toMatchObject([{ kind: 'delivery', problem: 'action_digest' }]);
  });

  it('a genuine approval is delivered as before (signed, verified by the agent), with no alert', async () => {
    const o = await openRequest();
    const decision = ok(await t.gql(OPS.approve, { id: o.id, revision: o.revision, digest: o.digest })).approve;
    expect(await untilEnded(o.uuid)).toMatchObject({ status: 'DELIVERED', last_error: null });
    const got = receivedFor(o.uuid);
    expect(got.map((r) => (r.message.metadata as any).approval.decisionId)).toEqual([decision.id]);
    const task = ok(await t.gql(`query($id: ID!) { task(id: $id) { state messages { parts } } }`, { id: o.taskId })).task;
    expect(task.messages.at(-1).parts[0].text).toMatch(/Signature verified/);
    expect(await shownAlerts(o.uuid)).toEqual([]);
  });
});

describe('forged quorum votes', () => {
  it('an APPROVE vote inserted as the app role is not counted: one genuine approval of a 2-of-N quorum leaves the request PENDING, and the forged row is reported', async () => {
    await createPolicy(t, { name: 'quorum of two', condition: 'skill == "deploy"', quorum: { approvals: 2, rejectionRejects: true, fromGroupIds: [] } });
    const o = await openRequest({ skillId: 'deploy' });
    const forgedId = randomUUID();
    // A vote "by the admin", as decide() would write it, but without its signed approval.voted event.
    await asApp((c) =>
      c.query(
        `insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote, decided_at) values ($1, $2, 'APPROVE', $3, $4, $5, true, now())`,
        [forgedId, o.uuid, o.revision, o.digest, adminUserId],
      ),
    );
    // Shown as not counting before anyone decides.
    expect((await getApproval(o.uuid)).quorum).toMatchObject({ count: 0, required: 2, met: false, approvals: [] });

    const before = await alertsMetric('quorum_vote');
    const [a, b] = reviewers;
    const first = ok(await t.gql(OPS.approve, { id: o.id, revision: o.revision, digest: o.digest }, a!.token)).approve;
    let shown = await getApproval(o.uuid);
    expect(shown.status).toBe('PENDING');
    expect(shown.quorum).toMatchObject({ count: 1, required: 2, met: false, approvals: [{ id: first.id }] });
    expect(await deliveryOf(o.uuid)).toBeUndefined();
    expect(receivedFor(o.uuid)).toEqual([]);
    const [voted] = await t.sql(`select data from audit_event where stream = $1 and type = 'approval.voted'`, [`approval:${o.uuid}`]);
    expect(voted.data.quorum).toEqual({ count: 1, required: 2 });
    expect(await signedAlerts(o.uuid)).toEqual([
      { actorType: 'system', signed: true, data: expect.objectContaining({ kind: 'quorum_vote', problem: 'no_signed_event', decisionId: forgedId }) },
    ]);
    expect((await alertsMetric('quorum_vote')) - before).toBe(1);
    expect(await shownAlerts(o.uuid)).toMatchObject([{ kind: 'quorum_vote', problem: 'no_signed_event' }]);

    // A second genuine approval meets the quorum: approved and delivered once.
    const second = ok(await t.gql(OPS.approve, { id: o.id, revision: o.revision, digest: o.digest }, b!.token)).approve;
    expect(await untilEnded(o.uuid)).toMatchObject({ status: 'DELIVERED' });
    shown = await getApproval(o.uuid);
    expect(shown.status).toBe('APPROVED');
    expect(shown.quorum).toMatchObject({ count: 2, met: true, approvals: [{ id: first.id }, { id: second.id }] });
    expect(receivedFor(o.uuid).map((r) => (r.message.metadata as any).approval.decisionId)).toEqual([second.id]);
  });
});

describe('a forged command grant', () => {
  const api = (method: string, path: string, token: string, body?: unknown) => rest(t, token, method, path, body);

  it("command approval rows written as the app role (approved, a PENDING grant, an APPROVE decision) are not consumable by the hook's token", async () => {
    const hook = await createMember(t);
    const command = `rm -rf /srv/data-${randomBytes(4).toString('hex')}`;
    const payload = sealedPayload(command, { rationale: 'r', verification: 'v' });
    const asked = await api('POST', '/api/command-approvals', hook.token, { agent_id: 'a1b2c3d4', payload });
    expect(asked.status, JSON.stringify(asked.json)).toBe(201);
    const uuid = asked.json.approval_uuid as string;
    const grantId = randomUUID();
    const decisionId = randomUUID();
    await asApp(async (c) => {
      await c.query(`update approval set status = 'APPROVED', closed_at = now() where id = $1`, [uuid]);
      await c.query(`update command_approval set status = 'approved' where id = $1`, [uuid]);
      await c.query(
        `insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote, decided_at)
         select $1, id, 'APPROVE', revision, digest, $3, false, now() from approval where id = $2`,
        [decisionId, uuid, adminUserId],
      );
      await c.query(
        `insert into approval_grant (id, command_approval_id, tenant_id, status, fingerprint, expires_at, created_at)
         select $1, id, tenant_id, 'PENDING', fingerprint, now() + interval '10 minutes', now() from command_approval where id = $2`,
        [grantId, uuid],
      );
    });
    const view = await api('GET', `/api/command-approvals/${asked.json.approval_id}`, hook.token);
    expect(view.json).toMatchObject({ status: 'approved', grant: { status: 'PENDING' } });

    const before = await alertsMetric('command_grant');
    const consumed = await api('POST', `/api/command-approvals/${asked.json.approval_id}/consume`, hook.token, { agent_id: 'a1b2c3d4' });
    expect(consumed.status).toBe(403);
    expect(consumed.json).toMatchObject({
      error: 'FORBIDDEN',
      message: `the grant of ${asked.json.approval_id} is not used: refused: the decision has no valid signed record (no signed audit event records decision ${decisionId})`,
    });
    const [grant] = await t.sql(`select status, consumed_at from approval_grant where id = $1`, [grantId]);
    expect(grant).toEqual({ status: 'PENDING', consumed_at: null });
    expect(await t.sql(`select type from audit_event where stream = $1 and type = 'command.grant_consumed'`, [`approval:${uuid}`])).toEqual([]);
    expect(await signedAlerts(uuid)).toEqual([
      { actorType: 'system', signed: true, data: expect.objectContaining({ kind: 'command_grant', problem: 'no_signed_event', decisionId }) },
    ]);
    expect((await alertsMetric('command_grant')) - before).toBe(1);
  });

  it('a genuinely approved command grant is consumed as before', async () => {
    const hook = await createMember(t);
    const command = `rm -rf build-${randomBytes(4).toString('hex')}`;
    const payload = sealedPayload(command, { rationale: 'r', verification: 'v' });
    const asked = await api('POST', '/api/command-approvals', hook.token, { agent_id: 'a1b2c3d4', payload });
    ok(await t.gql(OPS.approve, { id: asked.json.id, revision: asked.json.revision, digest: asked.json.digest }));
    const consumed = await api('POST', `/api/command-approvals/${asked.json.approval_id}/consume`, hook.token, { agent_id: 'a1b2c3d4' });
    expect(consumed.status, JSON.stringify(consumed.json)).toBe(200);
    expect(consumed.json.grant).toMatchObject({ status: 'CONSUMED' });
    expect(await signedAlerts(asked.json.approval_uuid)).toEqual([]);
  });
});

describe('a forged AG-UI answer', () => {
  const REGISTER = `mutation($url: String!, $name: String!) { registerAgUiAgent(input: { endpointUrl: $url, name: $name }) { id } }`;

  it('an interrupt request forged APPROVED (rewritten action, decision, delivery, the resume and its job) as the app role: the run is not resumed, nothing signed, reported', async () => {
    const agentId = ok(await t.gql(REGISTER, { url: aguiAgent.url('approval'), name: 'Mailer' })).registerAgUiAgent.id;
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'Please send the Q3 report.' })).startTask;
    const node = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision status } } } }`, { t: task.id })).approvals.edges[0].node;
    expect(node.status).toBe('PENDING');
    const uuid = rawId(node.id);
    const [{ run_row_id: runRowId, thread_id: threadId }] = await t.sql(
      `select i.run_row_id, r.thread_id from agui_interrupt i join agui_run r on r.id = i.run_row_id where i.approval_id = $1`,
      [uuid],
    );
    const decisionId = randomUUID();
    const deliveryId = randomUUID();
    const digest = actionDigest(DROP);
    const before = await alertsMetric('agui_resume');
    await asApp(async (c) => {
      await c.query(`update approval set action = $2::jsonb, digest = $3, status = 'APPROVED', closed_at = now() where id = $1`, [
        uuid,
        JSON.stringify(DROP),
        digest,
      ]);
      await c.query(
        `insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote, decided_at) values ($1, $2, 'APPROVE', $3, $4, $5, false, now())`,
        [decisionId, uuid, node.revision, digest, adminUserId],
      );
      await c.query(
        `insert into delivery (id, approval_id, decision_id, status, attempts, attempts_at_queue, message_id, created_at, updated_at)
         values ($1, $2, $3, 'QUEUED', 0, 0, $4, now(), now())`,
        [deliveryId, uuid, decisionId, deliveryMessageId(decisionId)],
      );
      await c.query(`update agui_run set resume_status = 'QUEUED', resume_run_id = $2 where id = $1`, [runRowId, resumeRunIdOf(runRowId)]);
      await c.query(`select graphile_worker.add_job('agui_resume', json_build_object('runRowId', $1::text), job_key => 'agui-resume:' || $1::text)`, [
        runRowId,
      ]);
    });
    const run = await eventually(async () => {
      const [r] = await t.sql(`select resume_status, resume_error from agui_run where id = $1`, [runRowId]);
      return r.resume_status !== 'QUEUED' ? r : null;
    }, 20_000);
    const refusal = `refused: the decision has no valid signed record (no signed audit event records decision ${decisionId})`;
    expect(run).toEqual({ resume_status: 'FAILED', resume_error: `request ${uuid}: ${refusal}` });
    expect(aguiAgent.resumes.filter((r) => r.threadId === threadId)).toEqual([]);
    expect(await deliveryOf(uuid)).toMatchObject({ status: 'FAILED', approval_signature: null, last_error: `request ${uuid}: ${refusal}` });
    expect(await signedAlerts(uuid)).toEqual([
      { actorType: 'system', signed: true, data: expect.objectContaining({ kind: 'agui_resume', problem: 'no_signed_event', decisionId, deliveryId }) },
    ]);
    expect((await alertsMetric('agui_resume')) - before).toBe(1);
  });
});
