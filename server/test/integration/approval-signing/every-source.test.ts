import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { JWKS_PATH } from '../../../src/verify-approval/index.js';
import {
  appendProbeEvent,
  createMember,
  eventually,
  OPS,
  startTestInstance,
  subscribe,
  untilProbeArrives,
  type GqlResult,
  type TestInstance,
  ok,
  rawId,
} from '../../support/harness.js';
import { canon, sha256 } from '../../support/independent-digest.js';
import { createPolicy } from '../../support/policies.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';
import { SAMPLES } from '../../support/doc-samples.js';

// Issue 23, items 2 to 4: every approving decision carries a signed approval, whatever opened the
// request (a person's createApproval, a command hook, an A2A agent), readable by the requester as
// Decision.signedApproval (and Approval.signedApproval), live through approvalChanged, and in the
// command-approvals REST answers as signed_approval. Each one is checked here as an integrator
// would: the JWS with jose against the JWKS fetched from /.well-known/jwks.json, the digest of the
// action recomputed without the product's code (support/independent-digest.ts). Rejections,
// votes and rows written behind Taskbay's back carry none. Also externalId (stored, filterable,
// outside the digest, never edited, in the claims, the creation event and webhooks elsewhere)
// and editable: false (no edit then approve, whatever the policy says).

const PUBLIC_URL = 'https://taskbay.example';
const TYP = 'taskbay-approval+jwt';

let t: TestInstance;
let agent: FixtureAgent;
let requester: { id: string; token: string };
let app: pg.Client;

const SIGNED = 'signedApproval { requestId decisionId revision revisionDigest signature action externalId }';
const CREATE = `mutation($input: CreateApprovalInput!) { createApproval(input: $input) { id revision digest externalId editable status } }`;
const READ = `query($id: ID!) { approval(id: $id) { id status revision digest externalId editable ${SIGNED}
  decisions { id outcome vote revision ${SIGNED} } } }`;
const read = async (id: string, token = requester.token) => ok(await t.gql(READ, { id }, token)).approval;

const jwks = async (): Promise<JSONWebKeySet> => (await fetch(`${t.instance.url}${JWKS_PATH}`)).json() as Promise<JSONWebKeySet>;
/** The JWS verified as an integrator does: jose, the published JWKS, the typ and the issuer Taskbay is configured with. */
const verified = async (jws: string) => (await jwtVerify(jws, createLocalJWKSet(await jwks()), { issuer: PUBLIC_URL, typ: TYP })).payload;
/** When the decision was recorded, in the epoch seconds a JWT's iat counts. */
const decidedAtSeconds = async (decisionId: string) =>
  Math.floor((await t.sql(`select decided_at from decision where id = $1`, [decisionId]))[0].decided_at.getTime() / 1000);

async function open(input: Record<string, unknown>, token = requester.token) {
  return ok(await t.gql(CREATE, { input: { title: 'Deploy web 2.4.1', action: { kind: 'send_message', text: 'Deploy web 2.4.1' }, ...input } }, token))
    .createApproval;
}

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance({ env: { TASKBAY_PUBLIC_URL: PUBLIC_URL } });
  // A member asks (a request without an approver scope: the admin decides it).
  requester = await createMember(t);
  app = new pg.Client({ connectionString: t.appUrl });
  await app.connect();
});

afterAll(async () => {
  await app?.end();
  await t?.stop();
  await agent?.close();
});

describe('createApproval -> approve: the requester reads a signed approval it can verify', () => {
  it('signedApproval verifies with jose against the published JWKS; its claims name the request, the decision, the digest of the action and the externalId', async () => {
    const action = { kind: 'send_message', text: 'Deploy web 2.4.1 to production', data: { service: 'web', version: '2.4.1' } };
    const opened = await open({ action, externalId: 'thread-42/call_7' });
    expect(opened).toMatchObject({ externalId: 'thread-42/call_7', editable: true, status: 'PENDING' });
    expect((await read(opened.id)).signedApproval).toBeNull();

    const decision = ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest })).approve;
    const a = await read(opened.id);
    expect(a.status).toBe('APPROVED');
    const s = a.decisions[0].signedApproval;
    expect(a.signedApproval).toEqual(s);
    expect(s).toMatchObject({ requestId: rawId(opened.id), decisionId: decision.id, revision: 1, externalId: 'thread-42/call_7' });
    // The action as the digest covers it (data null when absent), recomputed independently.
    expect(s.action).toEqual(action);
    expect(sha256(canon(s.action))).toBe(s.revisionDigest);
    expect(s.revisionDigest).toBe(opened.digest);

    expect(await verified(s.signature)).toEqual({
      iss: PUBLIC_URL,
      iat: await decidedAtSeconds(decision.id),
      requestId: rawId(opened.id),
      decisionId: decision.id,
      revision: 1,
      revisionDigest: sha256(canon(action)),
      taskId: null,
      externalId: 'thread-42/call_7',
    });
  });

  it('without externalId the claims are exactly the A2A ones (no externalId claim), data null in the action', async () => {
    const opened = await open({});
    const decision = ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest })).approve;
    const s = (await read(opened.id)).signedApproval;
    expect(s.action).toEqual({ kind: 'send_message', text: 'Deploy web 2.4.1', data: null });
    expect(s.externalId).toBeNull();
    const claims = await verified(s.signature);
    expect(Object.keys(claims).sort()).toEqual(['decisionId', 'iat', 'iss', 'requestId', 'revision', 'revisionDigest', 'taskId']);
    expect(claims).toMatchObject({ decisionId: decision.id, revisionDigest: sha256(canon(s.action)), taskId: null });
  });

  it('edit then approve signs the edited action (revision 2, its digest); the externalId is not part of the action and an edit cannot change it', async () => {
    const opened = await open({ externalId: 'run-9' });
    const edit = { kind: 'send_message', text: 'Deploy web 2.4.2 to production', externalId: 'someone-else' };
    const decision = ok(await t.gql(OPS.editAndApprove, { id: opened.id, revision: opened.revision, digest: opened.digest, action: edit })).editAndApprove;
    const edited = { kind: 'send_message', text: 'Deploy web 2.4.2 to production', data: null };
    expect(decision).toMatchObject({ revision: 2, digest: sha256(canon(edited)) });

    const a = await read(opened.id);
    expect(a).toMatchObject({ revision: 2, externalId: 'run-9' });
    const s = a.signedApproval;
    expect(s).toMatchObject({ decisionId: decision.id, revision: 2, externalId: 'run-9' });
    expect(s.action).toEqual(edited);
    expect(sha256(canon(s.action))).toBe(s.revisionDigest);
    expect(await verified(s.signature)).toMatchObject({ revision: 2, revisionDigest: sha256(canon(edited)), externalId: 'run-9' });
    expect(s.revisionDigest).not.toBe(opened.digest);
  });

  it('a rejection, and a request for changes, carry none', async () => {
    const rejected = await open({});
    ok(await t.gql(OPS.reject, { id: rejected.id, revision: rejected.revision, digest: rejected.digest }));
    const r = await read(rejected.id);
    expect(r.status).toBe('REJECTED');
    expect(r.decisions.map((d: any) => [d.outcome, d.signedApproval])).toEqual([['REJECT', null]]);
    expect(r.signedApproval).toBeNull();

    const sentBack = await open({});
    ok(await t.gql(OPS.requestChanges, { id: sentBack.id, revision: sentBack.revision, digest: sentBack.digest, comment: 'smaller steps' }));
    expect((await read(sentBack.id)).decisions.map((d: any) => [d.outcome, d.signedApproval])).toEqual([['REQUEST_CHANGES', null]]);
    const [row] = await t.sql(`select signature from decision where approval_id = $1`, [rawId(rejected.id)]);
    expect(row.signature).toBeNull();
  });

  it('the requester waiting on approvalChanged gets the signed approval with the event that approves', async () => {
    const opened = await open({ externalId: 'waiting-1' });
    const sub = subscribe(
      t.ws(requester.token),
      `subscription($id: ID) { approvalChanged(approvalId: $id) { id status ${SIGNED} decisions { outcome ${SIGNED} } } }`,
      { id: opened.id },
    );
    await untilProbeArrives(async () => {
      const before = sub.received.length;
      await appendProbeEvent(t, opened.id);
      return () => sub.received.length > before;
    });
    const decision = ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest })).approve;
    const approved = await eventually(async () => sub.received.find((e) => e.data?.approvalChanged?.status === 'APPROVED')?.data.approvalChanged);
    sub.dispose();
    expect(approved.signedApproval).toMatchObject({ decisionId: decision.id, externalId: 'waiting-1' });
    expect(approved.decisions[0].signedApproval).toEqual(approved.signedApproval);
    expect(await verified(approved.signedApproval.signature)).toMatchObject({ decisionId: decision.id, requestId: rawId(opened.id), externalId: 'waiting-1' });
  });
});

/** Runs docs/samples/verify-signed-approval.mjs (docs/VERIFYING-APPROVALS.md) as an integrator would, against this Taskbay. */
function runVerifySample(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const sample = join(SAMPLES, 'verify-signed-approval.mjs');
  const env = {
    ...process.env,
    TASKBAY_URL: t.instance.url,
    TASKBAY_ISSUER: PUBLIC_URL,
    TASKBAY_JWKS_URL: `${t.instance.url}${JWKS_PATH}`,
    TASKBAY_TOKEN: requester.token,
  };
  const child = spawn(process.execPath, [sample, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('the sample of docs/VERIFYING-APPROVALS.md ("Approvals of requests without an A2A task")', () => {
  it('verifies an approved request and prints the action to run; refuses one still pending, and one approved for another externalId', async () => {
    const action = { kind: 'send_message', text: 'Rotate the API key', data: { key: 'billing' } };
    const opened = await open({ action, externalId: 'call_sample_1' });
    const pending = await runVerifySample([opened.id, 'call_sample_1']);
    expect(pending).toMatchObject({ code: 1, stdout: '', stderr: 'not running it: the request is PENDING, not approved\n' });

    const decision = ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest })).approve;
    const run = await runVerifySample([opened.id, 'call_sample_1']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ decisionId: decision.id, revision: 1, action });
    expect(sha256(canon(action))).toBe(opened.digest);

    const other = await runVerifySample([opened.id, 'call_sample_2']);
    expect(other).toMatchObject({ code: 1, stdout: '', stderr: 'not running it: this approval is for call_sample_1, not call_sample_2\n' });
  });
});

describe('a decision nobody gave carries no signed approval (issue 22)', () => {
  it('an APPROVE row inserted with SQL by the app role has none; a genuine signature copied into it does not verify for it and is not shown', async () => {
    const genuine = await open({});
    ok(await t.gql(OPS.approve, { id: genuine.id, revision: genuine.revision, digest: genuine.digest }));
    const copied = (await read(genuine.id)).signedApproval.signature as string;

    const [admin] = await t.sql(`select id from app_user where role = 'ADMIN' order by created_at limit 1`);
    const forge = async (signature: string | null) => {
      const target = await open({});
      const forgedId = randomUUID();
      await app.query('begin');
      await app.query(
        `insert into decision (id, approval_id, outcome, revision, digest, reviewer_id, vote, decided_at, signature)
         values ($1, $2, 'APPROVE', 1, $3, $4, false, now(), $5)`,
        [forgedId, rawId(target.id), target.digest, admin.id, signature],
      );
      await app.query(`update approval set status = 'APPROVED', closed_at = now() where id = $1`, [rawId(target.id)]);
      await app.query('commit');
      return { target, forgedId };
    };

    const bare = await forge(null);
    const a = await read(bare.target.id);
    expect(a.status).toBe('APPROVED');
    expect(a.decisions).toEqual([expect.objectContaining({ id: bare.forgedId, outcome: 'APPROVE', signedApproval: null })]);
    expect(a.signedApproval).toBeNull();

    const stolen = await forge(copied);
    const b = await read(stolen.target.id);
    expect(b.decisions).toEqual([expect.objectContaining({ id: stolen.forgedId, signedApproval: null })]);
    expect(b.signedApproval).toBeNull();
    // The JWS itself is Taskbay's, but it names the other request and decision: a verifier that
    // checks the claims against what it asked for refuses it.
    const claims = await verified(copied);
    expect(claims.requestId).toBe(rawId(genuine.id));
    expect(claims.requestId).not.toBe(rawId(stolen.target.id));
    expect(claims.decisionId).not.toBe(stolen.forgedId);
  });
});

describe('only what hashes to the decided digest is signed', () => {
  it("a pending request whose action was rewritten behind Taskbay's back (digest kept) cannot be approved: INVALID_ACTION, nothing decided or signed; it can still be rejected", async () => {
    const opened = await open({});
    await app.query(`update approval set action = $2::jsonb where id = $1`, [
      rawId(opened.id),
      JSON.stringify({ kind: 'send_message', text: 'DROP DATABASE production' }),
    ]);
    const r = await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_ACTION', reason: 'ACTION_DIGEST_MISMATCH' });
    expect(await read(opened.id)).toMatchObject({ status: 'PENDING', decisions: [], signedApproval: null });
    ok(await t.gql(OPS.reject, { id: opened.id, revision: opened.revision, digest: opened.digest }));
    expect((await read(opened.id)).decisions.map((d: any) => [d.outcome, d.signedApproval])).toEqual([['REJECT', null]]);
  });
});

describe('externalId', () => {
  it('bad values are BAD_USER_INPUT and open nothing: empty, over 200 characters, not printable ASCII, not a string', async () => {
    const count = async () => Number((await t.sql(`select count(*)::int as n from approval`))[0].n);
    const before = await count();
    for (const externalId of ['', 'x'.repeat(201), 'café', 'line\nbreak', 'tab\there', 'del\u007f']) {
      const r = await t.gql(CREATE, { input: { title: 'x', action: { kind: 'send_message', text: 'x' }, externalId } }, requester.token);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(externalId)).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.message).toMatch(/^externalId must be 1 to 200 characters of printable ASCII \(space to ~\)/);
    }
    const notString = await t.gql(`mutation { createApproval(input: { title: "x", action: { kind: "send_message", text: "x" }, externalId: 7 }) { id } }`);
    expect(notString.errors?.length).toBeGreaterThan(0);
    expect(await count()).toBe(before);
    // 200 printable characters, spaces and punctuation included, are taken exactly.
    const longest = ` ${'~!a Z0'.repeat(33)}`.slice(0, 200);
    expect((await open({ externalId: longest })).externalId).toBe(longest);
  });

  it('is kept out of the digest, stored, and recorded in the creation event', async () => {
    const plain = await open({ title: 'Same action' });
    const tagged = await open({ title: 'Same action', externalId: 'lg-thread:abc' });
    expect(tagged.digest).toBe(plain.digest);
    expect(tagged.digest).toBe(sha256(canon({ kind: 'send_message', text: 'Deploy web 2.4.1', data: null })));
    const [row] = await t.sql(`select external_id, action from approval where id = $1`, [rawId(tagged.id)]);
    expect(row).toEqual({ external_id: 'lg-thread:abc', action: { kind: 'send_message', text: 'Deploy web 2.4.1' } });
    const [event] = await t.sql(`select data from audit_event where stream = $1 and type = 'approval.requested'`, [`approval:${rawId(tagged.id)}`]);
    expect(event.data.externalId).toBe('lg-thread:abc');
    const [untagged] = await t.sql(`select data from audit_event where stream = $1 and type = 'approval.requested'`, [`approval:${rawId(plain.id)}`]);
    expect(untagged.data).not.toHaveProperty('externalId');
  });

  it('approvals(externalId:) finds every request of that id (not unique), newest first, and only those', async () => {
    const id = `crash-${randomUUID()}`;
    const first = await open({ externalId: id });
    await open({ externalId: `${id}-other` });
    const second = await open({ externalId: id });
    const Q = `query($e: String) { approvals(externalId: $e) { edges { node { id externalId } } } }`;
    const found = ok(await t.gql(Q, { e: id }, requester.token)).approvals.edges.map((e: any) => e.node);
    expect(found).toEqual([
      { id: second.id, externalId: id },
      { id: first.id, externalId: id },
    ]);
    expect(codeOfFirst(await t.gql(Q, { e: 'x'.repeat(201) }, requester.token))).toBe('BAD_USER_INPUT');
    // The index that serves it (the requester's list is scoped by tenant first).
    const [index] = await t.sql(`select indexdef from pg_indexes where indexname = 'approval_tenant_external_id'`);
    expect(index.indexdef).toMatch(/\(tenant_id, external_id, created_at DESC, id DESC\) WHERE \(external_id IS NOT NULL\)/);
  });
});

const codeOfFirst = (r: GqlResult) => r.errors?.[0]?.extensions?.code;

describe('editable: false', () => {
  it('editAndApprove is refused (OUTCOME_NOT_ALLOWED, NOT_EDITABLE) even under a policy that allows it; nothing changes; approve still works and is signed; the export offers no edit', async () => {
    await createPolicy(t, {
      name: 'every outcome',
      condition: 'title.startsWith("Not editable")',
      allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'],
    });
    const opened = await open({ title: 'Not editable: rotate the key', editable: false });
    expect(opened.editable).toBe(false);
    const policy = ok(await t.gql(`query($id: ID!) { approval(id: $id) { policy { name allowedOutcomes } contract } }`, { id: opened.id })).approval;
    expect(policy.policy).toMatchObject({ name: 'every outcome', allowedOutcomes: expect.arrayContaining(['EDIT_AND_APPROVE']) });
    expect(policy.contract.options.map((o: any) => o.id)).toEqual(['approve', 'request_changes', 'reject']);

    const edit = await t.gql(OPS.editAndApprove, {
      id: opened.id,
      revision: opened.revision,
      digest: opened.digest,
      action: { kind: 'send_message', text: 'something else' },
    });
    expect(edit.errors?.[0]?.extensions).toMatchObject({ code: 'OUTCOME_NOT_ALLOWED', reason: 'NOT_EDITABLE', outcome: 'EDIT_AND_APPROVE' });
    expect(edit.errors?.[0]?.message).toMatch(/editable: false/);
    const unchanged = await read(opened.id);
    expect(unchanged).toMatchObject({ status: 'PENDING', revision: 1, digest: opened.digest, editable: false, decisions: [] });

    const decision = ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest })).approve;
    expect(await verified((await read(opened.id)).signedApproval.signature)).toMatchObject({ decisionId: decision.id, revisionDigest: opened.digest });
  });

  it('editable defaults to true, and an editable request is edited as before', async () => {
    const opened = await open({});
    expect(opened.editable).toBe(true);
    const r = ok(
      await t.gql(OPS.editAndApprove, { id: opened.id, revision: opened.revision, digest: opened.digest, action: { kind: 'send_message', text: 'edited' } }),
    );
    expect(r.editAndApprove.revision).toBe(2);
  });
});

describe('command approvals: the REST answers carry signed_approval', () => {
  const api = (method: string, path: string, body?: unknown, token = requester.token) => rest(t, token, method, path, body);
  const payload = (command: string) => sealedPayload(command, { rationale: 'deploys to production', verification: 'curl -f https://example.test/health' });

  it('status and consume answer signed_approval once approved: the JWS verifies, and the sealed action hashes to its digest', async () => {
    const command = `git push origin release-${randomUUID().slice(0, 8)}`;
    const asked = await api('POST', '/api/command-approvals', { agent_id: 'a0c0ffee', payload: payload(command), external_id: 'claude-session-1' });
    expect(asked.status, JSON.stringify(asked.json)).toBe(201);
    expect(asked.json).toMatchObject({ external_id: 'claude-session-1', signed_approval: null });
    const pending = await api('GET', `/api/command-approvals/${asked.json.approval_id}`);
    expect(pending.json.signed_approval).toBeNull();
    expect((await read(asked.json.id)).editable).toBe(false);

    const decision = ok(await t.gql(OPS.approve, { id: asked.json.id, revision: asked.json.revision, digest: asked.json.digest })).approve;
    const status = await api('GET', `/api/command-approvals/${asked.json.approval_id}`);
    const s = status.json.signed_approval;
    expect(Object.keys(s).sort()).toEqual(['action', 'decision_id', 'external_id', 'request_id', 'revision', 'revision_digest', 'signature']);
    expect(s).toMatchObject({ request_id: asked.json.approval_uuid, decision_id: decision.id, revision: 1, external_id: 'claude-session-1' });
    expect(s.action).toEqual({ kind: 'run_command', agent_id: 'a0c0ffee', commands: [command], payload: payload(command) });
    expect(sha256(canon(s.action))).toBe(s.revision_digest);
    expect(s.revision_digest).toBe(asked.json.digest);
    expect(await verified(s.signature)).toEqual({
      iss: PUBLIC_URL,
      iat: await decidedAtSeconds(decision.id),
      requestId: asked.json.approval_uuid,
      decisionId: decision.id,
      revision: 1,
      revisionDigest: sha256(canon(s.action)),
      taskId: null,
      externalId: 'claude-session-1',
    });

    const consumed = await api('POST', `/api/command-approvals/${asked.json.approval_id}/consume`, { agent_id: 'a0c0ffee' });
    expect(consumed.status).toBe(200);
    expect(consumed.json.signed_approval).toEqual(s);
  });

  it('a bad external_id is 400 BAD_USER_INPUT and asks nothing', async () => {
    const before = Number((await t.sql(`select count(*)::int as n from command_approval`))[0].n);
    const r = await api('POST', '/api/command-approvals', { agent_id: 'a0c0ffee', payload: payload('make deploy'), external_id: 'x'.repeat(201) });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: 'BAD_USER_INPUT', message: expect.stringMatching(/^external_id must be 1 to 200 characters/) });
    expect(Number((await t.sql(`select count(*)::int as n from command_approval`))[0].n)).toBe(before);
  });
});

describe('an A2A request: the delivered message and the decision carry one signature', () => {
  it("metadata.approval.signature is the decision's signedApproval.signature", async () => {
    const agentId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    const node = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges[0].node;
    const decision = ok(await t.gql(OPS.approve, { id: node.id, revision: node.revision, digest: node.digest })).approve;
    const received = await eventually(async () => agent.received.find((r) => (r.message.metadata as any)?.approval?.decisionId === decision.id));
    const s = (await read(node.id, t.adminToken)).signedApproval;
    expect((received.message.metadata as any).approval.signature).toBe(s.signature);
    expect(decodeJwt(s.signature)).toMatchObject({ taskId: task.remoteTaskId, decisionId: decision.id });
    expect(await verified(s.signature)).toMatchObject({ taskId: task.remoteTaskId, revisionDigest: sha256(canon(s.action)) });
  });
});
