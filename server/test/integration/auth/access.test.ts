import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startInstance } from '../../../src/app.js';
import { hashApiToken } from '../../../src/auth/credentials.js';
import { loadConfig } from '../../../src/config.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import {
  codeOf,
  createMember,
  createTestDatabase,
  hasEvent,
  idOf,
  nextBesides,
  OPS,
  probeRequests,
  startTestInstance,
  subscribe,
  TEST_APPROVAL_KEY,
  testPinDir,
  TEST_AUDIT_KEY,
  type GqlResult,
  type TestInstance,
  untilProbeArrives,
  rawId,
} from '../../support/harness.js';

// docs/ARCHITECTURE.md, "Integration contract": errors carry `extensions.code` in UNAUTHENTICATED,
// FORBIDDEN, NOT_FOUND, BAD_USER_INPUT, ...; "Admins have OPERATE on every agent of their
// tenant; members need a grant" (optionally limited to one skill).
// docs/ARCHITECTURE.md, "Rules that must hold": "Tenant isolation: nothing of another tenant is visible or
// decidable (answer `NOT_FOUND`)."

let t: TestInstance;
let agent: FixtureAgent;
let agentId: string; // global id of the showcase agent (skills deploy and cleanup)

const gid = (type: string, id: string) => Buffer.from(`${type}:${id}`).toString('base64');

const Q = {
  lists: `{ agents { id } tasks { edges { node { id } } } approvals { edges { node { id } } } }`,
  approval: `query($id: ID!) { approval(id: $id) { id status } }`,
  task: `query($id: ID!) { task(id: $id) { id } }`,
  agent: `query($id: ID!) { agent(id: $id) { id name } }`,
  node: `query($id: ID!) { node(id: $id) { id } }`,
  send: `mutation($taskId: ID!, $text: String) { sendTaskMessage(input: { taskId: $taskId, text: $text }) { id state } }`,
  refresh: `mutation($id: ID!) { refreshAgentCard(id: $id) { id } }`,
  requested: `subscription { approvalRequested { id title } }`,
  retry: `mutation($id: ID!) { retryDelivery(approvalId: $id) { id } }`,
  ask: `mutation($taskId: ID!) { createApproval(input: { taskId: $taskId, title: "asked on the task", action: { kind: "send_message", text: "x" } }) { id } }`,
  revoke: `mutation($id: ID!) { revokeAgentAccess(grantId: $id) { id } }`,
};

/** Opens a PENDING approval through the given token (admin by default): startTask "approve". */
async function openApproval(opts: { skillId?: string; token?: string; agent?: string; inst?: TestInstance } = {}) {
  const inst = opts.inst ?? t;
  const st = await inst.gql(OPS.startTask, { agentId: opts.agent ?? agentId, text: 'approve', skillId: opts.skillId }, opts.token);
  expect(st.errors).toBeUndefined();
  const list = await inst.gql(
    `query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest status } } } }`,
    { t: st.data.startTask.id },
    opts.token,
  );
  const approval = list.data.approvals.edges[0].node as { id: string; revision: number; digest: string; status: string };
  expect(approval.status).toBe('PENDING');
  return { taskId: st.data.startTask.id as string, approval };
}

const decideVars = (a: { id: string; revision: number; digest: string }) => ({ id: a.id, revision: a.revision, digest: a.digest });
const ids = (r: GqlResult) => ({
  agents: r.data.agents.map((a: { id: string }) => a.id).sort(),
  tasks: r.data.tasks.edges.map((e: { node: { id: string } }) => e.node.id).sort(),
  approvals: r.data.approvals.edges.map((e: { node: { id: string } }) => e.node.id).sort(),
});

async function statusOf(id: string) {
  const r = await t.gql(Q.approval, { id });
  return r.data.approval.status as string;
}

async function grant(userId: string, permission: 'VIEW' | 'OPERATE', skillId?: string) {
  const r = await t.gql(OPS.grant, { userId, agentId, permission, skillId });
  expect(r.errors).toBeUndefined();
}

beforeAll(async () => {
  // Skill routing on: grants limited to a skill need it (seed 003, "Skill routing").
  agent = await startFixtureAgent({ skillRouting: true });
  t = await startTestInstance();
  const reg = await t.gql(OPS.register, { url: agent.cardUrl('showcase') });
  expect(reg.errors).toBeUndefined();
  agentId = reg.data.registerAgent.id;
});

afterAll(async () => {
  await t?.stop();
  await agent?.close();
});

describe('authentication (Authorization: Bearer <api token>, on HTTP and graphql-ws)', () => {
  it('without a token protected fields answer UNAUTHENTICATED; viewer is null', async () => {
    expect(codeOf(await t.gql(`{ approvals { edges { node { id } } } }`, {}, null))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(OPS.register, { url: agent.cardUrl('approver') }, null))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi' }, null))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(OPS.auditChain, {}, null))).toBe('UNAUTHENTICATED');
    const v = await t.gql(`{ viewer { id } }`, {}, null);
    expect(v.errors).toBeUndefined();
    expect(v.data.viewer).toBeNull();
    const [{ n }] = await t.sql(`select count(*)::int as n from agent`);
    expect(n).toBe(1); // the refused registration stored nothing
  });

  it('a bad token answers UNAUTHENTICATED over HTTP (in-process and on the real port)', async () => {
    expect(codeOf(await t.gql(`{ approvals { edges { node { id } } } }`, {}, 'tb_not-a-real-token'))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(OPS.register, { url: agent.cardUrl('approver') }, 'tb_not-a-real-token'))).toBe('UNAUTHENTICATED');
    for (const authorization of ['Bearer tb_not-a-real-token', 'Basic YWRtaW46YWRtaW4=', `Bearer ${t.adminToken}x`]) {
      const res = await fetch(`${t.instance.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ query: `{ approvals { edges { node { id } } } }` }),
      });
      expect(codeOf((await res.json()) as GqlResult)).toBe('UNAUTHENTICATED');
    }
    // The same request with the real token works: the refusal is about the token.
    const ok = await fetch(`${t.instance.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: `{ approvals { edges { node { id } } } }` }),
    });
    expect(((await ok.json()) as GqlResult).errors).toBeUndefined();
  });

  it('a graphql-ws connection with a bad token, or with none, is refused (4403)', async () => {
    const connect = (authorization?: string) => {
      const client = createClient({
        url: `ws://127.0.0.1:${t.instance.port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: authorization === undefined ? {} : { authorization },
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => {},
      });
      const outcome = new Promise<{ connected: boolean; code?: number }>((resolve) => {
        client.on('connected', () => resolve({ connected: true }));
        client.on('closed', (e) => resolve({ connected: false, code: (e as { code?: number }).code }));
      });
      return { client, outcome };
    };
    const bad = connect('Bearer tb_not-a-real-token');
    expect(await bad.outcome).toEqual({ connected: false, code: 4403 });
    const malformed = connect('not a bearer header');
    expect(await malformed.outcome).toEqual({ connected: false, code: 4403 });
    // Issue 22: an anonymous socket was acknowledged (and held); its subscriptions answered UNAUTHENTICATED.
    const none = connect();
    expect(await none.outcome).toEqual({ connected: false, code: 4403 });
    const good = connect(`Bearer ${t.adminToken}`);
    expect(await good.outcome).toEqual({ connected: true });
    await Promise.all([bad.client.dispose(), malformed.client.dispose(), none.client.dispose(), good.client.dispose()]);
  });
});

describe('roles and grants (members need a grant; VIEW sees, OPERATE decides)', () => {
  it('a MEMBER cannot registerAgent, refreshAgentCard, createUser or grantAgentAccess (FORBIDDEN), and nothing is stored', async () => {
    const m = await createMember(t);
    await grant(m.id, 'OPERATE'); // even OPERATE on the agent does not make an admin
    const before = await t.sql(`select (select count(*)::int from agent) a, (select count(*)::int from app_user) u, (select count(*)::int from agent_grant) g`);
    expect(codeOf(await t.gql(OPS.register, { url: agent.cardUrl('approver') }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.refresh, { id: agentId }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(OPS.createUser, { email: 'x@example.test', name: 'x', role: 'ADMIN' }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(OPS.grant, { userId: m.id, agentId, permission: 'OPERATE' }, m.token))).toBe('FORBIDDEN');
    expect(
      await t.sql(`select (select count(*)::int from agent) a, (select count(*)::int from app_user) u, (select count(*)::int from agent_grant) g`),
    ).toEqual(before);
    const [{ n }] = await t.sql(`select count(*)::int as n from card_snapshot`);
    expect(n).toBe(1);
  });

  it('a member without a grant sees no agents, tasks or approvals, and cannot reach them by id', async () => {
    const { taskId, approval } = await openApproval();
    const m = await createMember(t);
    expect(ids(await t.gql(Q.lists, {}, m.token))).toEqual({ agents: [], tasks: [], approvals: [] });
    expect((await t.gql(Q.approval, { id: approval.id }, m.token)).data.approval).toBeNull();
    expect((await t.gql(Q.task, { id: taskId }, m.token)).data.task).toBeNull();
    expect((await t.gql(Q.agent, { id: agentId }, m.token)).data.agent).toBeNull();
    for (const id of [approval.id, taskId, agentId]) expect((await t.gql(Q.node, { id }, m.token)).data.node).toBeNull();
    expect(codeOf(await t.gql(OPS.approve, decideVars(approval), m.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi' }, m.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.send, { taskId, text: 'hi' }, m.token))).toBe('NOT_FOUND');
    expect(await statusOf(approval.id)).toBe('PENDING');
    // The admin of the same tenant sees them: the empty lists are about the grant.
    const admin = ids(await t.gql(Q.lists));
    expect(admin.agents).toContain(agentId);
    expect(admin.tasks).toContain(taskId);
    expect(admin.approvals).toContain(approval.id);
  });

  it('VIEW: sees the agent, its tasks and approvals, but cannot decide, start tasks or reply (FORBIDDEN)', async () => {
    const { taskId, approval } = await openApproval();
    const m = await createMember(t);
    await grant(m.id, 'VIEW');
    const seen = ids(await t.gql(Q.lists, {}, m.token));
    expect(seen.agents).toEqual([agentId]);
    expect(seen.tasks).toContain(taskId);
    expect(seen.approvals).toContain(approval.id);
    expect((await t.gql(Q.approval, { id: approval.id }, m.token)).data.approval).toEqual({ id: approval.id, status: 'PENDING' });

    const sentBefore = agent.received.length;
    expect(codeOf(await t.gql(OPS.approve, decideVars(approval), m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(OPS.reject, decideVars(approval), m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi' }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.send, { taskId, text: 'hi' }, m.token))).toBe('FORBIDDEN');
    expect(agent.received.length).toBe(sentBefore);
    expect(await statusOf(approval.id)).toBe('PENDING');
    const [{ n }] = await t.sql(`select count(*)::int as n from decision where approval_id = $1`, [rawId(approval.id)]);
    expect(n).toBe(0);
  });

  it('retryDelivery and createApproval on a task keep the one rule (auth/visibility.ts authorize): no VIEW is NOT_FOUND, VIEW without OPERATE is FORBIDDEN', async () => {
    const { taskId, approval } = await openApproval();
    const stranger = await createMember(t);
    const viewer = await createMember(t);
    await grant(viewer.id, 'VIEW');
    expect(codeOf(await t.gql(Q.retry, { id: approval.id }, stranger.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.retry, { id: approval.id }, viewer.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(Q.ask, { taskId }, stranger.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.ask, { taskId }, viewer.token))).toBe('FORBIDDEN');

    // A member asks on the task with OPERATE, then loses the grant. They still see their own
    // request, so retrying its delivery is FORBIDDEN, not NOT_FOUND (it was NOT_FOUND while
    // retryDelivery wrote the rule out by hand, ignoring the requester).
    const requester = await createMember(t);
    const g = await t.gql(OPS.grant, { userId: requester.id, agentId, permission: 'OPERATE' });
    const asked = await t.gql(Q.ask, { taskId }, requester.token);
    expect(asked.errors).toBeUndefined();
    const own = asked.data.createApproval.id as string;
    expect((await t.gql(Q.revoke, { id: g.data.grantAgentAccess.id })).errors).toBeUndefined();
    expect((await t.gql(Q.approval, { id: own }, requester.token)).data.approval).toEqual({ id: own, status: 'PENDING' });
    expect(codeOf(await t.gql(Q.retry, { id: own }, requester.token))).toBe('FORBIDDEN');
    // With OPERATE the rule lets the call through to what it does: there is no FAILED delivery.
    expect(codeOf(await t.gql(Q.retry, { id: own }))).toBe('BAD_USER_INPUT');
    const [{ n }] = await t.sql(`select count(*)::int as n from delivery where approval_id = any($1::uuid[])`, [[rawId(approval.id), rawId(own)]]);
    expect(n).toBe(0);
  });

  it('OPERATE: starts tasks, replies, and decides', async () => {
    const m = await createMember(t);
    await grant(m.id, 'OPERATE');
    const own = await openApproval({ token: m.token });
    const [task] = await t.sql(`select created_by_id from task where id = $1`, [rawId(own.taskId)]);
    expect(task.created_by_id).toBe(rawId(m.id));
    const d = await t.gql(OPS.approve, decideVars(own.approval), m.token);
    expect(d.errors).toBeUndefined();
    expect(d.data.approve.outcome).toBe('APPROVE');
    expect(await statusOf(own.approval.id)).toBe('APPROVED');

    const other = await openApproval(); // opened by the admin
    const r = await t.gql(OPS.reject, decideVars(other.approval), m.token);
    expect(r.errors).toBeUndefined();
    expect(await statusOf(other.approval.id)).toBe('REJECTED');
    const reply = await t.gql(Q.send, { taskId: other.taskId, text: 'hello' }, m.token);
    expect(reply.errors).toBeUndefined();
  });

  it('a grant limited to a skill reaches only the tasks and approvals of that skill', async () => {
    const deploy = await openApproval({ skillId: 'deploy' });
    const cleanup = await openApproval({ skillId: 'cleanup' });
    const m = await createMember(t);
    await grant(m.id, 'OPERATE', 'deploy');

    const seen = ids(await t.gql(Q.lists, {}, m.token));
    expect(seen.agents).toEqual([agentId]);
    expect(seen.tasks).toContain(deploy.taskId);
    expect(seen.tasks).not.toContain(cleanup.taskId);
    expect(seen.approvals).toContain(deploy.approval.id);
    expect(seen.approvals).not.toContain(cleanup.approval.id);
    // Everything the member sees belongs to the deploy skill.
    const skills = await t.sql(`select distinct skill_id from task where id = any($1::uuid[])`, [seen.tasks.map(rawId)]);
    expect(skills).toEqual([{ skill_id: 'deploy' }]);

    // The agent the member may use is visible by id too (consistent with the list).
    expect((await t.gql(Q.agent, { id: agentId }, m.token)).data.agent?.id).toBe(agentId);
    expect((await t.gql(Q.node, { id: agentId }, m.token)).data.node?.id).toBe(agentId);
    expect((await t.gql(Q.approval, { id: cleanup.approval.id }, m.token)).data.approval).toBeNull();
    expect((await t.gql(Q.task, { id: cleanup.taskId }, m.token)).data.task).toBeNull();
    expect((await t.gql(Q.node, { id: cleanup.approval.id }, m.token)).data.node).toBeNull();

    expect(codeOf(await t.gql(OPS.approve, decideVars(cleanup.approval), m.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.send, { taskId: cleanup.taskId, text: 'hi' }, m.token))).toBe('NOT_FOUND');
    expect(await statusOf(cleanup.approval.id)).toBe('PENDING');
    const sentBefore = agent.received.length;
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi', skillId: 'cleanup' }, m.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi' }, m.token))).toBe('FORBIDDEN');
    expect(agent.received.length).toBe(sentBefore);

    const d = await t.gql(OPS.approve, decideVars(deploy.approval), m.token);
    expect(d.errors).toBeUndefined();
    expect(await statusOf(deploy.approval.id)).toBe('APPROVED');
    const own = await openApproval({ token: m.token, skillId: 'deploy' });
    expect((await t.gql(Q.approval, { id: own.approval.id }, m.token)).data.approval.status).toBe('PENDING');
  });
});

describe('tenant isolation: nothing of another tenant is visible or decidable (NOT_FOUND)', () => {
  let other: { tenantId: string; adminId: string; adminToken: string; memberId: string; memberToken: string };

  beforeAll(async () => {
    const tenantId = randomUUID();
    const adminId = randomUUID();
    const memberId = randomUUID();
    const adminToken = `tb_${randomBytes(32).toString('base64url')}`;
    const memberToken = `tb_${randomBytes(32).toString('base64url')}`;
    await t.sql(`insert into tenant (id, name) values ($1, $2)`, [tenantId, `other-${tenantId.slice(0, 8)}`]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'admin@other.test', 'Other admin', 'ADMIN')`, [adminId, tenantId]);
    await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'member@other.test', 'Other member', 'MEMBER')`, [memberId, tenantId]);
    await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'test', $3), ($4, $5, 'test', $6)`, [
      randomUUID(),
      adminId,
      hashApiToken(adminToken),
      randomUUID(),
      memberId,
      hashApiToken(memberToken),
    ]);
    other = { tenantId, adminId, adminToken, memberId, memberToken };
  });

  it("another tenant's admin gets null by id, empty lists, NOT_FOUND on decisions and messages", async () => {
    const { taskId, approval } = await openApproval();
    const tok = other.adminToken;
    const v = await t.gql(`{ viewer { email role } }`, {}, tok);
    expect(v.data.viewer).toEqual({ email: 'admin@other.test', role: 'ADMIN' });

    expect(ids(await t.gql(Q.lists, {}, tok))).toEqual({ agents: [], tasks: [], approvals: [] });
    expect((await t.gql(Q.approval, { id: approval.id }, tok)).data.approval).toBeNull();
    expect((await t.gql(Q.task, { id: taskId }, tok)).data.task).toBeNull();
    expect((await t.gql(Q.agent, { id: agentId }, tok)).data.agent).toBeNull();
    const [admin1] = await t.sql(`select id from app_user where email = 'admin@localhost'`);
    for (const id of [approval.id, taskId, agentId, gid('User', admin1.id)]) {
      const r = await t.gql(Q.node, { id }, tok);
      expect(r.errors).toBeUndefined();
      expect(r.data.node).toBeNull();
    }
    expect((await t.gql(`query($a: ID!) { approvals(agentId: $a) { edges { node { id } } } }`, { a: agentId }, tok)).data.approvals.edges).toEqual([]);
    expect((await t.gql(`query($a: ID!) { tasks(agentId: $a) { edges { node { id } } } }`, { a: agentId }, tok)).data.tasks.edges).toEqual([]);

    const sentBefore = agent.received.length;
    for (const op of [OPS.approve, OPS.reject]) expect(codeOf(await t.gql(op, decideVars(approval), tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.requestChanges, { ...decideVars(approval), comment: 'no' }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.editAndApprove, { ...decideVars(approval), action: { text: 'forged' } }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.delegate, { ...decideVars(approval), to: gid('User', other.adminId) }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.send, { taskId, text: 'hi' }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi' }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.refresh, { id: agentId }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.grant, { userId: gid('User', other.memberId), agentId, permission: 'OPERATE' }, tok))).toBe('NOT_FOUND');
    expect(agent.received.length).toBe(sentBefore);
    expect(await statusOf(approval.id)).toBe('PENDING');
    const [{ n }] = await t.sql(`select count(*)::int as n from decision where approval_id = $1`, [rawId(approval.id)]);
    expect(n).toBe(0);

    // Its own audit chain holds none of the first tenant's events.
    const chain = await t.gql(OPS.auditChain, {}, tok);
    expect(chain.data.auditChain).toMatchObject({ ok: true, events: 0 });
  });

  it("even a grant row naming another tenant's agent reveals nothing", async () => {
    const { taskId, approval } = await openApproval();
    // Not creatable through the API (grantAgentAccess looks the agent up in the caller's tenant): forged in SQL.
    await t.sql(`insert into agent_grant (id, tenant_id, user_id, agent_id, permission) values ($1, $2, $3, $4, 'OPERATE')`, [
      randomUUID(),
      other.tenantId,
      other.memberId,
      rawId(agentId),
    ]);
    const tok = other.memberToken;
    expect(ids(await t.gql(Q.lists, {}, tok))).toEqual({ agents: [], tasks: [], approvals: [] });
    expect((await t.gql(Q.approval, { id: approval.id }, tok)).data.approval).toBeNull();
    expect((await t.gql(Q.agent, { id: agentId }, tok)).data.agent).toBeNull();
    expect(codeOf(await t.gql(OPS.approve, decideVars(approval), tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(Q.send, { taskId, text: 'hi' }, tok))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(OPS.startTask, { agentId, text: 'hi' }, tok))).toBe('NOT_FOUND');
    expect(await statusOf(approval.id)).toBe('PENDING');
  });

  it("subscriptions: a request reaches its own tenant's (granted) subscribers only", async () => {
    const viewer = await createMember(t);
    await grant(viewer.id, 'VIEW');
    const ungranted = await createMember(t);
    const subs = {
      admin1: subscribe(t.ws(), Q.requested),
      viewer1: subscribe(t.ws(viewer.token), Q.requested),
      ungranted1: subscribe(t.ws(ungranted.token), Q.requested),
      admin2: subscribe(t.ws(other.adminToken), Q.requested),
    };
    // Each subscriber's own probe request (a requester sees their own) reaches it: it is live,
    // and whatever was committed before that probe has reached it or never will.
    const probes = probeRequests(() => t);
    const isProbe = (e: GqlResult) => probes.ids.has(idOf(e, 'approvalRequested')!);
    const notProbes = (sub: { received: GqlResult[] }) => sub.received.filter((e) => !isProbe(e));
    const probe = (sub: (typeof subs)[keyof typeof subs], token: string) =>
      untilProbeArrives(async () => {
        const id = await probes.open({ token });
        return () => hasEvent(sub, 'approvalRequested', id);
      });
    const tokens = { admin1: t.adminToken, viewer1: viewer.token, ungranted1: ungranted.token, admin2: other.adminToken };
    const probeAll = (names: (keyof typeof subs)[]) => Promise.all(names.map((n) => probe(subs[n], tokens[n])));
    await probeAll(['admin1', 'viewer1', 'ungranted1', 'admin2']);

    const first = await openApproval();
    expect((await nextBesides(subs.admin1, isProbe)).data?.approvalRequested.id).toBe(first.approval.id);
    expect((await nextBesides(subs.viewer1, isProbe)).data?.approvalRequested.id).toBe(first.approval.id);
    await probeAll(['admin2', 'ungranted1']);
    expect(notProbes(subs.admin2)).toEqual([]);
    expect(notProbes(subs.ungranted1)).toEqual([]);

    // The other tenant's subscription is live: its own tenant's request reaches it (and only it).
    const reg2 = await t.gql(OPS.register, { url: agent.cardUrl('showcase') }, other.adminToken);
    expect(reg2.errors).toBeUndefined();
    expect(reg2.data.registerAgent.id).not.toBe(agentId);
    const second = await openApproval({ token: other.adminToken, agent: reg2.data.registerAgent.id });
    expect((await nextBesides(subs.admin2, isProbe)).data?.approvalRequested.id).toBe(second.approval.id);
    await probeAll(['admin1', 'viewer1', 'ungranted1']);
    expect(notProbes(subs.admin1)).toEqual([]);
    expect(notProbes(subs.viewer1)).toEqual([]);
    expect(notProbes(subs.ungranted1)).toEqual([]);
    for (const s of Object.values(subs)) s.dispose();
  });
});

describe('ids', () => {
  it('an invalid global id is BAD_USER_INPUT (not an internal error)', async () => {
    // Each maker gives the bad id for the type the field expects.
    const bad: Record<string, (type: string) => string> = {
      'not base64 of anything': () => 'garbage',
      empty: () => '',
      'malformed local id': (type) => gid(type, 'not-a-uuid'),
      'unknown type': () => gid('Bogus', randomUUID()),
    };
    const fields = [
      [Q.approval, 'Approval'],
      [Q.task, 'Task'],
      [Q.agent, 'Agent'],
      [Q.node, 'Approval'],
      [OPS.approve, 'Approval'],
    ] as const;
    const wrong: unknown[] = [];
    for (const [what, make] of Object.entries(bad)) {
      for (const [q, type] of fields) {
        const r = await t.gql(q, { id: make(type), revision: 1, digest: 'x' });
        if (codeOf(r) !== 'BAD_USER_INPUT') {
          wrong.push({ what, field: q.slice(0, 40), code: codeOf(r) ?? null, message: r.errors?.[0]?.message.slice(0, 80) ?? null });
        }
      }
    }
    // Every case at once, so a failure lists all of them.
    expect(wrong).toEqual([]);
    // An id of another type where an Approval is expected.
    expect(codeOf(await t.gql(Q.approval, { id: agentId }))).toBe('BAD_USER_INPUT');
    // A well-formed id of nothing is simply not found.
    const none = await t.gql(Q.approval, { id: gid('Approval', randomUUID()) });
    expect(none.errors).toBeUndefined();
    expect(none.data.approval).toBeNull();
  });
});

describe('bootstrap (docs/ARCHITECTURE.md "Authentication")', () => {
  it('TASKBAY_ADMIN_TOKEN gives an admin of tenant default holding that token; starting twice duplicates nothing', async () => {
    const db = await createTestDatabase();
    const token = `tb_boot_${randomUUID()}`;
    const env = { TASKBAY_ADMIN_EMAIL: 'Root@Example.test' };
    const a = await startTestInstance({ databaseUrl: db, adminToken: token, env, worker: false });
    try {
      expect(a.instance.bootstrap).toEqual({ email: 'root@example.test' }); // made without a password: serve shows a sign-in link
      expect((await a.gql(`{ viewer { email role } }`)).data.viewer).toEqual({ email: 'root@example.test', role: 'ADMIN' });
      const rows = await a.sql(
        `select t.name, u.email, u.role, u.password_hash, k.token_hash from app_user u join tenant t on t.id = u.tenant_id join api_token k on k.user_id = u.id`,
      );
      expect(rows).toEqual([{ name: 'default', email: 'root@example.test', role: 'ADMIN', password_hash: null, token_hash: hashApiToken(token) }]);
    } finally {
      await a.stop();
    }
    const b = await startTestInstance({ databaseUrl: db, adminToken: token, env, worker: false });
    try {
      expect(b.instance.bootstrap).toBeNull();
      const [c] = await b.sql(
        `select (select count(*)::int from tenant) tenants, (select count(*)::int from app_user) users, (select count(*)::int from api_token) tokens,
                (select count(*)::int from audit_event where type = 'user.created') created`,
      );
      expect(c).toEqual({ tenants: 1, users: 1, tokens: 1, created: 1 });
      expect((await b.gql(`{ viewer { email } }`)).data.viewer.email).toBe('root@example.test');
    } finally {
      await b.stop();
    }
  });

  it('without the token an empty database gets an admin, once, without a password (serve shows a one-time sign-in link)', async () => {
    const db = await createTestDatabase();
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY,
      TASKBAY_APPROVAL_KEY: TEST_APPROVAL_KEY,
      TASKBAY_AUDIT_PIN_DIR: testPinDir(),
    });
    expect(config.adminToken).toBeNull();
    const first = await startInstance(config, db, { worker: false });
    try {
      expect(first.bootstrap).toEqual({ email: 'admin@localhost' });
    } finally {
      await first.stop();
    }
    const second = await startInstance(config, db, { worker: false });
    try {
      expect(second.bootstrap).toBeNull();
    } finally {
      await second.stop();
    }
    // One admin, with no password (the start-up link is their way in: auth/sign-in-links.test.ts).
    const third = await startTestInstance({ databaseUrl: db, worker: false });
    try {
      const users = await third.sql(`select u.email, u.role, u.password_hash, t.name from app_user u join tenant t on t.id = u.tenant_id`);
      expect(users).toHaveLength(1);
      expect(users[0]).toMatchObject({ email: 'admin@localhost', role: 'ADMIN', name: 'default', password_hash: null });
      // A later start with TASKBAY_ADMIN_TOKEN gives that same admin the token (no second admin).
      expect(third.instance.bootstrap).toBeNull();
      expect((await third.gql(`{ viewer { email role } }`)).data.viewer).toEqual({ email: 'admin@localhost', role: 'ADMIN' });
      const [{ n }] = await third.sql(`select count(*)::int as n from app_user`);
      expect(n).toBe(1);
      expect(await third.sql(`select label from api_token`)).toEqual([{ label: 'TASKBAY_ADMIN_TOKEN' }]); // none before this start
    } finally {
      await third.stop();
    }
  });
});
