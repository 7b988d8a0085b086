import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, openOrm } from '../../../src/db/orm.js';
import { migrationsList } from '../../../src/db/migrations/index.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { withDatabase } from '../../support/db-url.js';
import { codeOf, createMember, eventually, OPS, startTestInstance, subscribe, type GqlResult, type TestInstance, ok, rawId } from '../../support/harness.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// Every approval has an approver scope (security finding: "Anyone in a tenant can approve a
// request with no agent, including a coding agent's `git push --force` command request").
// A command request belongs to its hook's agent record (kind COMMAND_HOOK) and needs OPERATE on
// it like any agent; a person's request without a task names its scope (agentId, skillId) or
// is decided by admins only. A member without a grant neither sees nor decides either.

let t: TestInstance;
let fixture: FixtureAgent;
let showcaseId: string; // global id; skills deploy and cleanup
let hook: { id: string; email: string; token: string };

const payload = (command: string) => sealedPayload(command, { rationale: 'rewrites the remote history', verification: 'git log origin/main' });

const api = (method: string, path: string, token: string | null, body?: unknown) => rest(t, token, method, path, body);

/** The hook asks (REST, as the real hook does): a unique `git push --force` each time. */
async function askCommand(token = hook.token) {
  const command = `git push --force origin main # ${randomBytes(4).toString('hex')}`;
  const r = await api('POST', '/api/command-approvals', token, { agent_id: 'a1b2c3d4', payload: payload(command) });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json as { id: string; approval_id: string; approval_uuid: string; revision: number; digest: string };
}

const CREATE = `mutation($input: CreateApprovalInput!) { createApproval(input: $input) { id revision digest agent { id } task { id } } }`;
async function createRequest(token: string, scope: { agentId?: string; skillId?: string } = {}) {
  const r = await t.gql(
    CREATE,
    { input: { title: `Buy a build server ${randomBytes(2).toString('hex')}`, action: { kind: 'send_message', text: 'Buy it.' }, ...scope } },
    token,
  );
  return ok(r).createApproval as { id: string; revision: number; digest: string; agent: { id: string } | null; task: null };
}

const decideVars = (a: { id: string; revision: number; digest: string }) => ({ id: a.id, revision: a.revision, digest: a.digest });
const approve = (a: { id: string; revision: number; digest: string }, token: string) => t.gql(OPS.approve, decideVars(a), token);
const reject = (a: { id: string; revision: number; digest: string }, token: string) => t.gql(OPS.reject, decideVars(a), token);

async function rowOf(gid: string) {
  const uuid = rawId(gid);
  const [row] = await t.sql(
    `select a.status, a.agent_id, a.skill_id,
            (select count(*)::int from decision d where d.approval_id = a.id) as decisions,
            (select count(*)::int from approval_grant g where g.command_approval_id = a.id) as grants
       from approval a where a.id = $1`,
    [uuid],
  );
  return row as { status: string; agent_id: string | null; skill_id: string | null; decisions: number; grants: number };
}

const APPROVAL = `query($id: ID!) { approval(id: $id) { id status } }`;
const INBOX = `{ approvals(first: 100) { edges { node { id } } } }`;
const inboxOf = async (token: string) => ok(await t.gql(INBOX, {}, token)).approvals.edges.map((e: { node: { id: string } }) => e.node.id) as string[];
const seenBy = async (gid: string, token: string) => ok(await t.gql(APPROVAL, { id: gid }, token)).approval;

/** The global id of the hook's agent record, read as the admin. */
async function hookAgentOf(approvalGid: string): Promise<string> {
  const a = ok(await t.gql(`query($id: ID!) { approval(id: $id) { agent { id kind } } }`, { id: approvalGid })).approval;
  expect(a.agent.kind).toBe('COMMAND_HOOK');
  return a.agent.id;
}

async function member(grants: { agentId: string; permission: 'VIEW' | 'OPERATE'; skillId?: string }[] = []) {
  const m = await createMember(t);
  for (const g of grants) ok(await t.gql(OPS.grant, { userId: m.id, ...g }));
  return m;
}

beforeAll(async () => {
  // Skill routing on: grants limited to a skill need it (seed 003, "Skill routing").
  fixture = await startFixtureAgent({ skillRouting: true });
  t = await startTestInstance();
  showcaseId = ok(await t.gql(OPS.register, { url: fixture.cardUrl('showcase') })).registerAgent.id;
  hook = await createMember(t);
});

afterAll(async () => {
  await t?.stop();
  await fixture?.close();
});

describe("command requests belong to the hook's agent record (kind COMMAND_HOOK)", () => {
  it('made on the first command request of a person, reused afterwards; another person gets their own; it has no card', async () => {
    const first = await askCommand();
    const second = await askCommand();
    const agentId = await hookAgentOf(first.id);
    expect(await hookAgentOf(second.id)).toBe(agentId);
    const agent = ok(
      await t.gql(
        `query($id: ID!) { agent(id: $id) { id kind name cardUrl card { number } snapshots { number } extensions skills { id } startForm hookUser { id } } }`,
        {
          id: agentId,
        },
      ),
    ).agent;
    expect(agent).toEqual({
      id: agentId,
      kind: 'COMMAND_HOOK',
      name: `Command hook of ${hook.email}`,
      cardUrl: null,
      card: null,
      snapshots: [],
      extensions: [],
      skills: [],
      startForm: null,
      hookUser: { id: hook.id },
    });
    const rows = await t.sql(`select id, kind, card_url from agent where hook_user_id = $1`, [rawId(hook.id)]);
    expect(rows).toEqual([{ id: rawId(agentId), kind: 'COMMAND_HOOK', card_url: null }]);
    const created = await t.sql(`select data from audit_event where type = 'agent.command_hook_created' and data->>'hookUserId' = $1`, [rawId(hook.id)]);
    expect(created).toHaveLength(1);
    // The routing agentId of the command's events is the hook agent (approvalChanged(agentId:) works).
    const [requested] = await t.sql(`select data from audit_event where stream = $1 and type = 'REQUESTED'`, [`approval:${first.approval_uuid}`]);
    expect(requested.data.agentId).toBe(rawId(agentId));
    // The seed's coding-agent id stays on the command row.
    expect((await t.sql(`select agent_id from command_approval where id = $1`, [first.approval_uuid]))[0].agent_id).toBe('a1b2c3d4');

    const other = await createMember(t);
    const theirs = await askCommand(other.token);
    expect(await hookAgentOf(theirs.id)).not.toBe(agentId);
    const kinds = ok(await t.gql(`{ agents { id kind } }`)).agents;
    expect(kinds).toEqual(
      expect.arrayContaining([
        { id: showcaseId, kind: 'A2A' },
        { id: agentId, kind: 'COMMAND_HOOK' },
      ]),
    );
  });

  it('a hook agent has no card: refreshAgentCard and startTask are BAD_USER_INPUT and store nothing; no snapshot of it can exist; a skill grant on it is refused', async () => {
    const a = await askCommand();
    const agentId = await hookAgentOf(a.id);
    const counts = () =>
      t.sql(`select (select count(*)::int from card_snapshot) s, (select count(*)::int from task) t, (select count(*)::int from agent_grant) g`);
    const before = await counts();
    const refresh = await t.gql(`mutation($id: ID!) { refreshAgentCard(id: $id) { id } }`, { id: agentId });
    expect(codeOf(refresh)).toBe('BAD_USER_INPUT');
    expect(refresh.errors![0]!.message).toMatch(/command hook/);
    const start = await t.gql(OPS.startTask, { agentId, text: 'hi' });
    expect(codeOf(start)).toBe('BAD_USER_INPUT');
    expect(start.errors![0]!.message).toMatch(/takes no tasks/);
    const m = await createMember(t);
    expect(codeOf(await t.gql(OPS.grant, { userId: m.id, agentId, permission: 'OPERATE', skillId: 'deploy' }))).toBe('BAD_USER_INPUT');
    expect(await counts()).toEqual(before);
    await expect(
      t.sql(`insert into card_snapshot (id, agent_id, number, card) values ($1, $2, 1, '{}'::jsonb)`, [randomUUID(), rawId(agentId)]),
    ).rejects.toThrow(/no Agent Card/);
    // The database keeps the two kinds apart: a hook agent cannot also carry a card URL.
    await expect(t.sql(`update agent set card_url = 'http://127.0.0.1:1/card.json' where id = $1`, [rawId(agentId)])).rejects.toThrow(/agent_kind_shape/);
  });
});

describe('who sees and decides a command request', () => {
  it('a member without any grant: not in the inbox, null by id, NOT_FOUND for every decision and on REST and the contract export; nothing changes', async () => {
    const a = await askCommand();
    const stranger = await member();
    expect(await inboxOf(stranger.token)).not.toContain(a.id);
    expect(await seenBy(a.id, stranger.token)).toBeNull();
    expect(
      ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { approvalId } }`, { p: a.approval_id }, stranger.token)).commandApproval,
    ).toBeNull();
    expect(codeOf(await approve(a, stranger.token))).toBe('NOT_FOUND');
    expect(codeOf(await reject(a, stranger.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.delegate, { ...decideVars(a), to: stranger.id }, stranger.token))).toBe('NOT_FOUND');
    expect((await api('GET', `/api/command-approvals/${a.approval_id}`, stranger.token)).json).toMatchObject({ error: 'NOT_FOUND' });
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/consume`, stranger.token)).status).toBe(404);
    expect((await api('GET', `/contracts/agents.approval@1/approvals/${a.approval_uuid}`, stranger.token)).status).toBe(404);
    expect(await rowOf(a.id)).toMatchObject({ status: 'PENDING', decisions: 0, grants: 0 });
    expect((await t.sql(`select status from command_approval where id = $1`, [a.approval_uuid]))[0].status).toBe('pending');
  });

  it('VIEW on the hook agent sees it but cannot decide (FORBIDDEN); OPERATE on it approves and the grant forms', async () => {
    const a = await askCommand();
    const agentId = await hookAgentOf(a.id);
    const viewer = await member([{ agentId, permission: 'VIEW' }]);
    const operator = await member([{ agentId, permission: 'OPERATE' }]);
    // A grant on another agent does not reach it.
    const elsewhere = await member([{ agentId: showcaseId, permission: 'OPERATE' }]);
    expect(codeOf(await approve(a, elsewhere.token))).toBe('NOT_FOUND');

    expect(await inboxOf(viewer.token)).toContain(a.id);
    expect(await seenBy(a.id, viewer.token)).toEqual({ id: a.id, status: 'PENDING' });
    expect((await api('GET', `/api/command-approvals/${a.approval_id}`, viewer.token)).status).toBe(200);
    expect(codeOf(await approve(a, viewer.token))).toBe('FORBIDDEN');
    expect(codeOf(await reject(a, viewer.token))).toBe('FORBIDDEN');
    expect(await rowOf(a.id)).toMatchObject({ status: 'PENDING', decisions: 0, grants: 0 });

    // Delegation needs OPERATE too: not to the VIEW holder.
    expect(codeOf(await t.gql(OPS.delegate, { ...decideVars(a), to: viewer.id }))).toBe('BAD_USER_INPUT');

    const d = ok(await approve(a, operator.token)).approve;
    expect(d.outcome).toBe('APPROVE');
    expect(await rowOf(a.id)).toMatchObject({ status: 'APPROVED', decisions: 1, grants: 1 });
  });

  it("the hook's token owner follows its own request without a grant (inbox, by id, REST, consume, outcome) but never decides it (SEPARATION_OF_DUTIES)", async () => {
    const a = await askCommand();
    const agentId = await hookAgentOf(a.id);
    expect((await t.sql(`select count(*)::int as n from agent_grant where user_id = $1`, [rawId(hook.id)]))[0].n).toBe(0);
    expect(await inboxOf(hook.token)).toContain(a.id);
    expect(await seenBy(a.id, hook.token)).toEqual({ id: a.id, status: 'PENDING' });
    expect((await api('GET', `/api/command-approvals/${a.approval_id}`, hook.token)).json).toMatchObject({ approval_id: a.approval_id, status: 'pending' });
    expect(codeOf(await approve(a, hook.token))).toBe('SEPARATION_OF_DUTIES');
    expect(codeOf(await reject(a, hook.token))).toBe('SEPARATION_OF_DUTIES');
    // Even OPERATE on its own hook agent does not let it decide its own request.
    ok(await t.gql(OPS.grant, { userId: hook.id, agentId, permission: 'OPERATE' }));
    expect(codeOf(await approve(a, hook.token))).toBe('SEPARATION_OF_DUTIES');
    expect(await rowOf(a.id)).toMatchObject({ status: 'PENDING', decisions: 0 });

    const operator = await member([{ agentId, permission: 'OPERATE' }]);
    ok(await approve(a, operator.token));
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/consume`, hook.token)).json).toMatchObject({ grant: { status: 'CONSUMED' } });
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/outcome`, hook.token, { exit_code: 0 })).json.event).toBe('EXECUTED');

    // Another person's hook sees nothing of it.
    const otherHook = await createMember(t);
    await askCommand(otherHook.token);
    expect(await inboxOf(otherHook.token)).not.toContain(a.id);
    expect((await api('GET', `/api/command-approvals/${a.approval_id}`, otherHook.token)).status).toBe(404);
  });

  it("a COMMAND_SET id is content-derived: another person's hook asking the same set gets no view of this one (BAD_USER_INPUT), its requester gets it again", async () => {
    const commands = ['git fetch origin', `git push --force origin main # ${randomBytes(4).toString('hex')}`];
    const body = { agent_id: 'a1b2c3d4', payload: payload(commands.join(' && ')), commands };
    const first = await api('POST', '/api/command-approvals', hook.token, body);
    expect(first.status).toBe(201);
    const otherHook = await createMember(t);
    const theirs = await api('POST', '/api/command-approvals', otherHook.token, body);
    expect(theirs).toEqual({ status: 400, json: { error: 'BAD_USER_INPUT', reason: 'APPROVAL_ID_USED', message: expect.any(String) } });
    expect(JSON.stringify(theirs.json)).not.toContain(first.json.approval_uuid);
    const again = await api('POST', '/api/command-approvals', hook.token, body);
    expect(again).toMatchObject({ status: 200, json: { approval_uuid: first.json.approval_uuid, created: false } });
  });
});

describe("a person's request without a task names its approver scope", () => {
  it('agentId: OPERATE on that agent decides, VIEW sees without deciding, a member without a grant sees nothing; approving it sends the agent nothing', async () => {
    const requester = await member([{ agentId: showcaseId, permission: 'VIEW' }]);
    const operator = await member([{ agentId: showcaseId, permission: 'OPERATE' }]);
    const viewer = await member([{ agentId: showcaseId, permission: 'VIEW' }]);
    const stranger = await member();
    const a = await createRequest(requester.token, { agentId: showcaseId });
    expect(a).toMatchObject({ agent: { id: showcaseId }, task: null });
    expect(await rowOf(a.id)).toMatchObject({ agent_id: rawId(showcaseId), skill_id: null });

    expect(await inboxOf(stranger.token)).not.toContain(a.id);
    expect(await seenBy(a.id, stranger.token)).toBeNull();
    expect(codeOf(await approve(a, stranger.token))).toBe('NOT_FOUND');
    expect(await inboxOf(viewer.token)).toContain(a.id);
    expect(codeOf(await approve(a, viewer.token))).toBe('FORBIDDEN');
    expect(codeOf(await approve(a, requester.token))).toBe('SEPARATION_OF_DUTIES');
    expect(await rowOf(a.id)).toMatchObject({ status: 'PENDING', decisions: 0 });

    const sent = fixture.received.length;
    ok(await approve(a, operator.token));
    const after = ok(await t.gql(`query($id: ID!) { approval(id: $id) { status execution { status } contract } }`, { id: a.id }, operator.token)).approval;
    expect(after).toMatchObject({ status: 'APPROVED', execution: null });
    // The export does not claim the agent receives anything: the scope decides who reviews.
    expect(after.contract.what).not.toContain('fixture');
    expect(fixture.received.length).toBe(sent);
  });

  it('agentId + skillId: a grant limited to another skill does not reach it; one on that skill decides', async () => {
    const requester = await member([{ agentId: showcaseId, permission: 'VIEW' }]);
    const cleanup = await member([{ agentId: showcaseId, permission: 'OPERATE', skillId: 'cleanup' }]);
    const deploy = await member([{ agentId: showcaseId, permission: 'OPERATE', skillId: 'deploy' }]);
    const a = await createRequest(requester.token, { agentId: showcaseId, skillId: 'deploy' });
    expect(await rowOf(a.id)).toMatchObject({ skill_id: 'deploy' });
    expect(await inboxOf(cleanup.token)).not.toContain(a.id);
    expect(codeOf(await approve(a, cleanup.token))).toBe('NOT_FOUND');
    expect(await inboxOf(deploy.token)).toContain(a.id);
    ok(await approve(a, deploy.token));
    expect(await rowOf(a.id)).toMatchObject({ status: 'APPROVED' });
  });

  it('the scope must be an agent the requester sees (NOT_FOUND) and well formed (BAD_USER_INPUT); a refused request stores nothing', async () => {
    const requester = await member([{ agentId: showcaseId, permission: 'VIEW' }]);
    const scripted = ok(await t.gql(OPS.register, { url: fixture.cardUrl('scripted') })).registerAgent.id; // no grant on it
    const count = async () => (await t.sql(`select count(*)::int as n from approval`))[0].n;
    const before = await count();
    const create = (input: Record<string, unknown>, token = requester.token) =>
      t.gql(CREATE, { input: { title: 'Scoped', action: { kind: 'send_message', text: 'x' }, ...input } }, token);
    expect(codeOf(await create({ agentId: scripted }))).toBe('NOT_FOUND');
    expect(codeOf(await create({ agentId: Buffer.from(`Agent:${randomUUID()}`).toString('base64') }))).toBe('NOT_FOUND');
    expect(codeOf(await create({ agentId: showcaseId, skillId: 'no-such-skill' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await create({ skillId: 'deploy' }))).toBe('BAD_USER_INPUT');
    const task = ok(await t.gql(OPS.startTask, { agentId: showcaseId, text: 'hello' })).startTask;
    expect(codeOf(await create({ taskId: task.id, agentId: showcaseId }, t.adminToken))).toBe('BAD_USER_INPUT');
    expect(await count()).toBe(before);
  });

  it('without a scope: only admins decide; its requester and admins see it; members with OPERATE on every agent neither see nor decide it', async () => {
    const requester = await member();
    const a = await createRequest(requester.token);
    expect(a).toMatchObject({ agent: null, task: null });
    const agentIds = ok(await t.gql(`{ agents { id } }`)).agents.map((x: { id: string }) => x.id);
    const everywhere = await member(agentIds.map((agentId: string) => ({ agentId, permission: 'OPERATE' as const })));
    const stranger = await member();
    for (const m of [everywhere, stranger]) {
      expect(await inboxOf(m.token)).not.toContain(a.id);
      expect(await seenBy(a.id, m.token)).toBeNull();
      expect(codeOf(await approve(a, m.token))).toBe('NOT_FOUND');
    }
    expect(await seenBy(a.id, requester.token)).toEqual({ id: a.id, status: 'PENDING' });
    expect(await inboxOf(requester.token)).toContain(a.id);
    expect(codeOf(await approve(a, requester.token))).toBe('SEPARATION_OF_DUTIES');
    // Delegation of an unscoped request: only to an admin.
    expect(codeOf(await t.gql(OPS.delegate, { ...decideVars(a), to: everywhere.id }))).toBe('BAD_USER_INPUT');
    expect(await rowOf(a.id)).toMatchObject({ status: 'PENDING', decisions: 0 });
    ok(await approve(a, t.adminToken));
    expect(await rowOf(a.id)).toMatchObject({ status: 'APPROVED', decisions: 1 });
  });
});

describe('approvalRequested of a member without a grant', () => {
  it("carries neither a command request nor an unscoped one; the same subscription carries the member's own request", async () => {
    const stranger = await member();
    const viewerOfHook = await member([{ agentId: await hookAgentOf((await askCommand()).id), permission: 'VIEW' }]);
    const Q = `subscription { approvalRequested { id } }`;
    const subs = { stranger: subscribe(t.ws(stranger.token), Q), viewer: subscribe(t.ws(viewerOfHook.token), Q) };
    const ids = (s: { received: GqlResult[] }) => s.received.map((e) => e.data?.approvalRequested?.id ?? JSON.stringify(e.errors));
    // graphql-ws has no subscription ack: the stranger's subscription is live once one of its own
    // requests (which its requester always sees) arrives on it.
    let probe = '';
    await eventually(
      async () => {
        probe = (await createRequest(stranger.token)).id;
        return eventually(async () => ids(subs.stranger).includes(probe), 1000, 20).catch(() => false);
      },
      20_000,
      0,
    );
    const probes = new Set(ids(subs.stranger));

    const command = await askCommand();
    await createRequest(t.adminToken); // unscoped
    // Events reach a subscriber in commit order, each checked before the next: once this marker
    // (the stranger's own, opened last) has arrived, the two above were filtered out.
    const marker = (await createRequest(stranger.token)).id;
    await eventually(async () => ids(subs.stranger).includes(marker));
    expect(ids(subs.stranger).filter((id) => !probes.has(id))).toEqual([marker]);
    // The VIEW holder of the hook agent got the command request (the filter is about grants).
    await eventually(async () => ids(subs.viewer).includes(command.id));
    subs.stranger.dispose();
    subs.viewer.dispose();
  });
});

describe('migration: existing command approvals move to their hook agent', () => {
  it('approvals with agent_id null get the hook agent of their requester (one per person), closed ones too', async () => {
    const adminUrl = inject('pgAdminUrl');
    // Named like the harness's databases, so global teardown finds a leftover.
    const name = `tb_t_${inject('pgTemplate').split('_').pop()}_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = withDatabase(adminUrl, name);
    const orm = await openOrm(url, 2);
    const db = new pg.Client({ connectionString: url });
    try {
      const index = migrationsList.findIndex((m) => m.name === 'Migration20261201000600_approver_scope');
      expect(index).toBeGreaterThan(0);
      await orm.getMigrator().up({ to: migrationsList[index - 1]!.name });
      await db.connect();
      const tenant = randomUUID();
      const [u1, u2] = [randomUUID(), randomUUID()];
      await db.query(`insert into tenant (id, name) values ($1, 'default')`, [tenant]);
      await db.query(
        `insert into app_user (id, tenant_id, email, name, role) values ($1, $3, 'one@example.test', 'One', 'MEMBER'), ($2, $3, 'two@example.test', 'Two', 'MEMBER')`,
        [u1, u2, tenant],
      );
      const ask = async (userId: string, status: 'PENDING' | 'APPROVED') => {
        const id = randomUUID();
        await db.query('begin');
        await db.query(
          `insert into approval (id, tenant_id, source, status, title, risk, requester_id, revision, digest, action)
           values ($1, $2, 'COMMAND', $3, 'Run: git push --force', 'HIGH', $4, 1, $5, '{"kind":"run_command"}')`,
          [id, tenant, status, userId, 'd'.repeat(64)],
        );
        await db.query(
          `insert into command_approval (id, tenant_id, approval_id, kind, agent_id, commands, payload, fingerprint, status, requested_by_id)
           values ($1, $2, $3, 'COMMAND', 'a1b2c3d4', '["git push --force"]', '{}', $4, $5, $6)`,
          [id, tenant, `P-${randomBytes(16).toString('hex')}`, 'f'.repeat(64), status.toLowerCase(), userId],
        );
        await db.query('commit');
        return id;
      };
      const [a1, a2, b1] = [await ask(u1, 'PENDING'), await ask(u1, 'APPROVED'), await ask(u2, 'PENDING')];

      await migrate(orm, url);

      const hooks = await db.query(`select id, hook_user_id, name, card_url, kind from agent order by name`);
      expect(hooks.rows.map(({ id: _id, ...r }) => r)).toEqual([
        { hook_user_id: u1, name: 'Command hook of one@example.test', card_url: null, kind: 'COMMAND_HOOK' },
        { hook_user_id: u2, name: 'Command hook of two@example.test', card_url: null, kind: 'COMMAND_HOOK' },
      ]);
      const agentOf = async (id: string) => (await db.query(`select agent_id from approval where id = $1`, [id])).rows[0].agent_id;
      expect(await agentOf(a1)).toBe(hooks.rows[0].id);
      expect(await agentOf(a2)).toBe(hooks.rows[0].id);
      expect(await agentOf(b1)).toBe(hooks.rows[1].id);
      expect((await db.query(`select count(*)::int as n from approval where agent_id is null`)).rows[0].n).toBe(0);
    } finally {
      await db.end().catch(() => {});
      await orm.close(true);
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name}`);
      await c.end();
    }
  });
});
