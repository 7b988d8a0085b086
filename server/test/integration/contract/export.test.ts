import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiToken } from '../../../src/auth/credentials.js';
import { validateApprovalContract } from '../../../src/contract/validate.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, OPS, startTestInstance, untilExpiryPassed, type TestInstance, ok, rawId } from '../../support/harness.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// agents.approval@1 (seed 001) exported over HTTP: GET /contracts/agents.approval@1/approvals/<id>
// returns the same object as the GraphQL `contract` field, valid against the schema, for every
// approval state reachable through the API (and for a COMMAND approval of seed 002).

let t: TestInstance;
let agent: FixtureAgent;
let showcaseId: string;
let hook: { id: string; token: string };

const aprId = (uuid: string) => `apr_${uuid.replace(/-/g, '')}`;

async function exportContract(id: string, token: string | null = t.adminToken) {
  const res = await fetch(`${t.instance.url}/contracts/agents.approval@1/approvals/${encodeURIComponent(id)}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, json: (await res.json()) as any, type: res.headers.get('content-type') };
}

/** Exports by raw uuid and by apr_ id, checks both equal the GraphQL field, validates, returns it. */
async function exported(gid: string) {
  const uuid = rawId(gid);
  const byUuid = await exportContract(uuid);
  expect(byUuid.status, JSON.stringify(byUuid.json)).toBe(200);
  expect(byUuid.type).toMatch(/application\/json/);
  const byApr = await exportContract(aprId(uuid));
  expect(byApr.json).toEqual(byUuid.json);
  const field = ok(await t.gql(`query($id: ID!) { approval(id: $id) { contract } }`, { id: gid })).approval.contract;
  expect(field).toEqual(byUuid.json);
  const v = validateApprovalContract(byUuid.json);
  expect(v, JSON.stringify(v.errors)).toEqual({ valid: true, errors: [] });
  expect(byUuid.json.id).toBe(aprId(uuid));
  return byUuid.json;
}

const APPROVALS_OF_TASK = `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { id status revision digest } } } }`;

async function openShowcase() {
  const task = ok(await t.gql(OPS.startTask, { agentId: showcaseId, text: 'approve' })).startTask;
  const edges = ok(await t.gql(APPROVALS_OF_TASK, { taskId: task.id })).approvals.edges;
  expect(edges).toHaveLength(1);
  return { task, approval: edges[0].node };
}

const decide = (op: string, a: any, extra: Record<string, unknown> = {}) => t.gql(op, { id: a.id, revision: a.revision, digest: a.digest, ...extra });

async function askCommand(command: string) {
  const asked = await rest(t, hook.token, 'POST', '/api/command-approvals', {
    agent_id: 'a0c0ffee',
    payload: sealedPayload(command, { rationale: 'cleanup', verification: 'ls' }),
  });
  expect(asked.status).toBe(201);
  return asked.json;
}

let adminUsr: string;

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  showcaseId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  hook = await createMember(t);
  adminUsr = `usr_${rawId(ok(await t.gql(`{ viewer { id } }`)).viewer.id).replace(/-/g, '')}`;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('"every approval state exported and valid"', () => {
  it('pending: decided_by, decided_at and answer null ("absent (or null) while it waits"); run_id is the task; step_seq the asking step', async () => {
    const { task, approval } = await openShowcase();
    const c = await exported(approval.id);
    expect(c).toMatchObject({ run_id: `tsk_${rawId(task.id).replace(/-/g, '')}`, decided_by: null, decided_at: null, answer: null });
    // Seed 001: "The seq of the run's step that asked": the step of the agent message that carried
    // the request (the person's message is step 1, the agent's answer step 2).
    const [asked] = await t.sql<{ step_seq: number }>(
      `select m.step_seq from approval a join task_message m on m.task_id = a.task_id and m.message_id = a.source_message_id
        where a.id = $1 and m.role = 'ROLE_AGENT'`,
      [rawId(approval.id)],
    );
    expect(asked?.step_seq).toBe(2);
    expect(c.step_seq).toBe(asked!.step_seq);
    // The console's buttons, in its order (web/src/pages/approval/DecisionPanel.tsx draws them from the same list).
    expect(c.options).toEqual([
      { id: 'approve', label: 'Approve' },
      { id: 'edit_and_approve', label: 'Edit then approve' },
      { id: 'request_changes', label: 'Request changes' },
      { id: 'reject', label: 'Reject' },
    ]);
    expect(c.what).not.toContain('{');
  });

  it.each([
    ['approved', OPS.approve, {}, 'approve'],
    ['edit-approved', OPS.editAndApprove, { action: { text: 'Approved, but only the staging-2 cluster.' } }, 'edit_and_approve'],
    ['rejected', OPS.reject, {}, 'reject'],
    ['changes requested', OPS.requestChanges, { comment: 'only staging-2' }, 'request_changes'],
  ])('%s: answer is the chosen option id, decided_by the reviewer', async (_name, op, extra, answer) => {
    const { approval } = await openShowcase();
    ok(await decide(op, approval, extra));
    const c = await exported(approval.id);
    expect(c).toMatchObject({ answer, decided_by: { type: 'user', id: adminUsr } });
    expect(c.options.map((o: any) => o.id)).toContain(answer);
    const [decided] = await t.sql<{ decided_at: Date }>('select decided_at from decision where approval_id = $1', [rawId(approval.id)]);
    expect(c.decided_at).toBe(decided!.decided_at.toISOString());
  });

  it('superseded and expired: exported undecided (no answer)', async () => {
    const { task, approval } = await openShowcase();
    // A person's request on the same task supersedes the agent's (one live approval per task).
    ok(
      await t.gql(
        `mutation($taskId: ID!) { createApproval(input: { taskId: $taskId, title: "Instead", action: { kind: "send_message", text: "do this instead" } }) { id } }`,
        { taskId: task.id },
      ),
    );
    expect(ok(await t.gql(`query($id: ID!) { approval(id: $id) { status } }`, { id: approval.id })).approval.status).toBe('SUPERSEDED');
    expect(await exported(approval.id)).toMatchObject({ decided_by: null, decided_at: null, answer: null });

    const short = ok(
      await t.gql(
        `mutation { createApproval(input: { title: "Quick", expiresInSeconds: 1, action: { kind: "send_message", text: "now" } }) { id revision digest } }`,
        {},
        hook.token,
      ),
    ).createApproval;
    await untilExpiryPassed(t, short.id);
    expect(codeOf(await decide(OPS.approve, short))).toBe('EXPIRED');
    expect(await exported(short.id)).toMatchObject({ decided_by: null, decided_at: null, answer: null });
  });

  it('COMMAND (seed 002): "run rm -rf build on your machine"; options approve/reject, Approve labelled with the nonce; run_id the coding-agent session', async () => {
    const a = await askCommand('rm -rf build');
    expect(a.approval_id).toMatch(/^P-[0-9a-f]{32}$/);
    const pending = await exported(a.id);
    expect(pending).toMatchObject({
      run_id: 'a0c0ffee',
      what: 'Run rm -rf build on the machine of coding agent a0c0ffee',
      // Seed 002: the label the reviewer selects is "Approve [P-xxxxxxxx]", the first 8 hex of the id.
      options: [
        { id: 'approve', label: `Approve [${a.approval_id.slice(0, 10)}]` },
        { id: 'reject', label: 'Reject' },
      ],
      answer: null,
    });
    const second = await askCommand('rm -rf dist');
    expect((await exported(second.id)).step_seq).toBe(pending.step_seq + 1);
    ok(await decide(OPS.approve, a));
    expect(await exported(a.id)).toMatchObject({ answer: 'approve', decided_by: { type: 'user', id: adminUsr } });
    ok(await decide(OPS.reject, second));
    expect(await exported(second.id)).toMatchObject({ answer: 'reject' });
  });
});

describe('"Schema https://openvibe.network/contracts/agents/approval.v1.json" (seed 001)', () => {
  it('the schema file is that schema (its $id), and every export validates against it, compiled here on its own', async () => {
    const file = JSON.parse(readFileSync(new URL('../../../src/contract/agents.approval.v1.schema.json', import.meta.url), 'utf8'));
    // Seed 001, as written under "Schema".
    expect(file.$id).toBe('https://openvibe.network/contracts/agents/approval.v1.json');
    const ajv = new Ajv({ allErrors: true, strict: true });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    const validate = ajv.compile(file);
    const { approval } = await openShowcase();
    const cmd = await askCommand(`rm -rf out-${randomBytes(2).toString('hex')}`);
    const records = [(await exportContract(rawId(approval.id))).json, (await exportContract(cmd.approval_uuid)).json];
    ok(await decide(OPS.approve, approval));
    ok(await decide(OPS.reject, cmd));
    records.push((await exportContract(rawId(approval.id))).json, (await exportContract(cmd.approval_uuid)).json);
    expect(records.map((r) => r.answer)).toEqual([null, null, 'approve', 'reject']);
    for (const r of records) expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('"an answer decided once is never decided again"', () => {
  it('export, a second decision (NOT_PENDING), export again: identical', async () => {
    const { approval } = await openShowcase();
    ok(await decide(OPS.reject, approval));
    const before = await exportContract(rawId(approval.id));
    for (const op of [OPS.approve, OPS.reject]) expect(codeOf(await decide(op, approval))).toBe('NOT_PENDING');
    expect(codeOf(await decide(OPS.requestChanges, approval, { comment: 'again' }))).toBe('NOT_PENDING');
    const after = await exportContract(rawId(approval.id));
    expect(JSON.stringify(after.json)).toBe(JSON.stringify(before.json));
    expect(after.json.answer).toBe('reject');

    const cmd = await askCommand(`rm -rf cache-${randomBytes(2).toString('hex')}`);
    ok(await decide(OPS.approve, cmd));
    const c1 = await exportContract(cmd.approval_uuid);
    expect(codeOf(await decide(OPS.reject, cmd))).toBe('NOT_PENDING');
    expect((await exportContract(cmd.approval_uuid)).json).toEqual(c1.json);
  });
});

describe('the HTTP export is authenticated and tenant-scoped', () => {
  it("401 without a token, 404 for an unknown, malformed or other tenant's id", async () => {
    const { approval } = await openShowcase();
    const uuid = rawId(approval.id);
    expect((await exportContract(uuid, null)).status).toBe(401);
    expect((await exportContract(uuid, 'tb_not-a-token')).json).toEqual(expect.objectContaining({ error: 'UNAUTHENTICATED' }));
    expect((await exportContract(randomUUID())).status).toBe(404);
    expect((await exportContract('apr_xyz')).status).toBe(404);
    expect((await exportContract('%E0%A4%A')).status).toBe(404);

    const tenantId = randomUUID();
    const userId = randomUUID();
    const token = `tb_${randomBytes(32).toString('base64url')}`;
    await t.sql(`insert into tenant (id, name) values ($1, $2)`, [tenantId, `other-${tenantId.slice(0, 8)}`]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'admin@other.test', 'Other', 'ADMIN')`, [userId, tenantId]);
    await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'test', $3)`, [randomUUID(), userId, hashApiToken(token)]);
    const other = await exportContract(uuid, token);
    expect(other).toMatchObject({ status: 404, json: { error: 'NOT_FOUND' } });
    // A member without a grant on the agent does not see the agent's request either.
    const stranger = await createMember(t);
    expect((await exportContract(uuid, stranger.token)).status).toBe(404);
  });
});

describe('"WHAT is the act in plain words": what approving does, for every source', () => {
  const CREATE = `mutation($input: CreateApprovalInput!) { createApproval(input: $input) { id revision digest } }`;

  it("a person's request without a task (with or without an approver scope): approving sends nothing, and `what` says so", async () => {
    // The requester may name as the scope an agent they see.
    ok(await t.gql(OPS.grant, { userId: hook.id, agentId: showcaseId, permission: 'VIEW' }));
    for (const scope of [{}, { agentId: showcaseId }]) {
      const title = `Buy a build server ${randomBytes(2).toString('hex')}`;
      const a = ok(
        await t.gql(CREATE, { input: { title, action: { kind: 'send_message', text: 'Buy the 64-core one.' }, ...scope } }, hook.token),
      ).createApproval;
      const pending = await exported(a.id);
      expect(pending.what).not.toMatch(/^Send /);
      expect(pending.what).not.toMatch(/the requester|the agent/);
      expect(pending.what).toBe(
        `Agree to "${title}" (no task: approving records the answer and sends nothing; the proposed message reads "Buy the 64-core one.")`,
      );
      ok(await decide(OPS.approve, a));
      expect(await exported(a.id)).toMatchObject({ what: pending.what, answer: 'approve' });
      expect(ok(await t.gql(`query($id: ID!) { approval(id: $id) { execution { status } } }`, { id: a.id })).approval.execution).toBeNull();
    }
    const form = ok(
      await t.gql(
        CREATE,
        {
          input: {
            title: 'Pick a size',
            action: { kind: 'send_data', form: { schema: { type: 'object', properties: { size: { type: 'integer' } } } }, values: { size: 64 } },
          },
        },
        hook.token,
      ),
    ).createApproval;
    expect((await exported(form.id)).what).toBe(
      'Agree to "Pick a size" (no task: approving records the answer and sends nothing; the proposed form values: size)',
    );
  });

  it("a person's request on a task: approving sends the message to the task's agent, and `what` names it", async () => {
    const { task } = await openShowcase();
    const a = ok(
      await t.gql(CREATE, { input: { taskId: task.id, title: 'Instead', action: { kind: 'send_message', text: 'do this instead' } } }),
    ).createApproval;
    const name = ok(await t.gql(`query($id: ID!) { agent(id: $id) { name } }`, { id: showcaseId })).agent.name;
    expect((await exported(a.id)).what).toBe(`Send the agent "${name}" the message "do this instead" (Instead)`);
  });
});

describe('the GraphQL `contract` field is validated as the HTTP export is (one function)', () => {
  it('a record that does not validate against agents.approval@1 is served by neither', async () => {
    const a = await askCommand(`rm -rf tmp-${randomBytes(2).toString('hex')}`);
    expect((await exportContract(a.approval_uuid)).status).toBe(200);
    // run_id is the coding agent's id; 200 characters break maxLength 160 (the database allows it
    // on a pending row, and the export must still never send an invalid record).
    await t.sql(`update approval set action = jsonb_set(action, '{agent_id}', to_jsonb($2::text)) where id = $1`, [a.approval_uuid, `a${'f'.repeat(199)}`]);
    const http = await exportContract(a.approval_uuid);
    expect(http.status).toBe(500);
    expect(http.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/run_id' })]));
    const r = await t.gql(`query($id: ID!) { approval(id: $id) { id contract } }`, { id: a.id });
    expect(r.errors?.length, JSON.stringify(r)).toBeGreaterThan(0);
    expect(r.errors![0]!.path).toEqual(['approval', 'contract']);
    expect(JSON.stringify(r.data ?? null)).not.toContain('fffff');
  });
});
