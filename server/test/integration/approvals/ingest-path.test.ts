import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTENER_APPLICATION_NAME } from '../../../src/events/listener.js';
import { CSRF_HEADER } from '../../../src/http/console.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { codeOf, createMember, eventually, OPS, type GqlResult, type TestInstance, ok, rawId, startReplicas } from '../../support/harness.js';
import { recordStatements, type RecordedStatement, type StatementRecorder } from '../../support/statements.js';

// Issue 11, ingest: fewer round trips on the write path. A request resolves its API token or
// session from the instance's memory (auth/viewer-cache.ts), and a revocation committed anywhere
// is applied before the next request on any instance is answered; createApproval runs only the
// statements it needs. Two instances on one database, no job worker (its polling would be
// counted); statements are counted by wrapping pg's Client#query (support/statements.ts).

let a: TestInstance;
let b: TestInstance;
let agent: FixtureAgent;
let agentId: string;
let recorder: StatementRecorder;

const VIEWER = `{ viewer { email } }`;
const ADMIN_ONLY = `{ agentGrants { id } }`;
const CREATE = `mutation($agentId: ID) { createApproval(input: { title: "Deploy", agentId: $agentId, risk: LOW, action: { kind: "send_message", text: "x" } }) { id } }`;

const isToken = (s: RecordedStatement) => /api_token|web_session|app_user/.test(s.text);

beforeAll(async () => {
  agent = await startFixtureAgent();
  [a, b] = await startReplicas(
    { worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } },
    { worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } },
  );
  const reg = await a.gql(OPS.register, { url: agent.cardUrl('approver') });
  expect(reg.errors).toBeUndefined();
  agentId = reg.data.registerAgent.id;
  recorder = recordStatements();
});

afterAll(async () => {
  recorder?.restore();
  await b?.stop();
  await a?.stop();
  await agent?.close();
});

/** GraphQL with the console's session cookie (in process, as t.gql). */
async function withCookie(t: TestInstance, query: string, cookie: string): Promise<{ body: GqlResult; setCookie: string | null }> {
  const res = await t.instance.yoga.fetch('http://taskbay.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: '1' },
    body: JSON.stringify({ query }),
  });
  return { body: (await res.json()) as GqlResult, setCookie: res.headers.get('set-cookie') };
}

describe('a token or session resolves from memory', () => {
  it('a request with a token seen before runs no statement for it (one round trip on the LISTEN connection instead)', async () => {
    const member = await createMember(a);
    // The first request reads the token and its user: one statement.
    const first = await recorder.during(() => a.gql(VIEWER, {}, member.token));
    expect(ok(first.result).viewer.email).toBe(member.email);
    expect(first.statements.filter(isToken)).toHaveLength(2); // the token with its user, then the viewer field's own read of the user
    // Later requests: none, on any connection of the pool; the LISTEN connection's empty round
    // trip is what makes a revocation committed before the request count.
    for (let i = 0; i < 3; i++) {
      const again = await recorder.during(() => a.gql(VIEWER, {}, member.token));
      expect(ok(again.result).viewer.email).toBe(member.email);
      const [loader, ...rest] = again.statements.filter(isToken);
      expect(loader!.text).toMatch(/^select \* from "app_user" where "id" in /); // the viewer field's own read of the user (a plain row: graphql/loaders.ts)
      expect(rest).toEqual([]);
      // On the LISTEN connection itself: only the empty round trip. Its reader connection may
      // meanwhile load events committed earlier (createMember's): per event, not per request.
      expect(again.listener.filter((s) => s.application === LISTENER_APPLICATION_NAME).map((s) => s.text)).toEqual(['']);
    }
  });

  it('an unknown token is refused every time (nothing is cached for it)', async () => {
    for (let i = 0; i < 2; i++) expect(codeOf(await a.gql(ADMIN_ONLY, {}, `tb_${randomUUID()}`))).toBe('UNAUTHENTICATED');
  });
});

describe('revocation reaches every instance before its next request', () => {
  it('a deleted API token is refused on the very next request on the other instance', async () => {
    const member = await createMember(a);
    for (const t of [b, b, a]) expect(ok(await t.gql(VIEWER, {}, member.token)).viewer.email).toBe(member.email);
    await a.sql('delete from api_token where user_id = (select id from app_user where email = $1)', [member.email]);
    expect(ok(await b.gql(VIEWER, {}, member.token)).viewer).toBeNull();
    expect(codeOf(await b.gql(ADMIN_ONLY, {}, member.token))).toBe('UNAUTHENTICATED');
  });

  it('signing out on A ends the session on B at once', async () => {
    const email = `s-${randomUUID().slice(0, 8)}@example.test`;
    ok(await a.gql(OPS.createUser, { email, name: email, role: 'MEMBER', password: 'correct horse battery' }));
    const signedIn = await withCookie(a, `mutation { signIn(email: "${email}", password: "correct horse battery") { email } }`, '');
    expect(signedIn.body.errors).toBeUndefined();
    const cookie = signedIn.setCookie!.split(';')[0]!;
    for (let i = 0; i < 2; i++) expect((await withCookie(b, VIEWER, cookie)).body.data?.viewer).toEqual({ email });
    expect((await withCookie(a, 'mutation { signOut }', cookie)).body.data).toEqual({ signOut: true });
    expect((await withCookie(b, VIEWER, cookie)).body.data?.viewer).toBeNull();
  });

  it('an admin demoted to member (by SQL, as an operator would) is a member on the very next request on the other instance', async () => {
    const admin = await createMember(a, { role: 'ADMIN' });
    for (let i = 0; i < 2; i++) expect(ok(await b.gql(ADMIN_ONLY, {}, admin.token)).agentGrants).toEqual([]);
    await a.sql(`update app_user set role = 'MEMBER' where email = $1`, [admin.email]);
    expect(codeOf(await b.gql(ADMIN_ONLY, {}, admin.token))).toBe('FORBIDDEN');
  });

  it('while the LISTEN connection was replaced, nothing cached before is used (a revocation sent meanwhile reached no one)', async () => {
    const member = await createMember(a);
    for (let i = 0; i < 2; i++) expect(ok(await b.gql(VIEWER, {}, member.token)).viewer.email).toBe(member.email);
    // Cut both instances' LISTEN connections, revoke while they are down, and wait until both listen again.
    const listeners = () =>
      a.sql<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and application_name = $1`, [LISTENER_APPLICATION_NAME]);
    const before = (await listeners()).map((l) => l.pid);
    expect(before).toHaveLength(2);
    await a.sql(`select pg_terminate_backend(pid) from unnest($1::int[]) pid`, [before]);
    await a.sql('delete from api_token where user_id = (select id from app_user where email = $1)', [member.email]);
    // Listening again: new connections, and each instance's listener says so (readiness). The
    // connection shows in pg_stat_activity before its LISTEN is done; until then nothing is cached,
    // so the next test's warm-up request would fill no cache (seen once against Postgres 15).
    const listening = async (t: TestInstance) =>
      ((await (await fetch(`${t.instance.url}/readyz`)).json()) as { checks: { listener: string } }).checks.listener === 'ok';
    await eventually(async () => {
      const now = (await listeners()).map((l) => l.pid);
      return now.length === 2 && now.every((pid) => !before.includes(pid)) && (await listening(a)) && (await listening(b));
    });
    expect(ok(await b.gql(VIEWER, {}, member.token)).viewer).toBeNull();
  });
});

describe('createApproval', () => {
  it('runs 5 statements: the agent it names, then one transaction writing the request with its revision (one statement) and its event (with the NOTIFY); the webhook endpoints come from memory', async () => {
    ok(await a.gql(CREATE, { agentId }));
    const { result, statements } = await recorder.during(() => a.gql(CREATE, { agentId }));
    ok(result);
    // The job worker's polling (its own pool) is not the request's.
    const kinds = statements
      .filter((s) => !/graphile_worker/.test(s.text))
      .map((s) => {
        const t = s.text.trim();
        if (/^select .* from "agent"/.test(t)) return 'agent';
        if (/^with a as \(insert into approval .*insert into approval_revision/s.test(t)) return 'approval+revision';
        if (/insert into audit_event/.test(t) && /pg_notify/.test(t)) return 'event+notify';
        if (/from webhook_endpoint/.test(t)) return 'webhooks';
        return /^(BEGIN|COMMIT|ROLLBACK);?$/.test(t) ? t.replace(/;$/, '') : t.slice(0, 80);
      });
    // No token read, no expiry job, no stream lock or head read for the new request's stream, no
    // webhook endpoint lookup (webhooks/endpoint-cache.ts; webhooks/endpoint-cache.test.ts).
    expect(kinds).toEqual(['agent', 'BEGIN', 'approval+revision', 'event+notify', 'COMMIT']);
  });
});

describe('agent-originated: startTask whose answer opens one approval', () => {
  it('inserts the task with one INSERT (no transaction of its own), reads the card once before the send and once in the observation, and never reads back the step of the message it stored', async () => {
    const START = `mutation($agentId: ID!) { startTask(input: { agentId: $agentId, text: "approve" }) { id } }`;
    const approvalsOf = async (taskId: string) => (await a.sql(`select count(*)::int as n from approval where task_id = $1`, [rawId(taskId)]))[0].n;
    ok(await a.gql(START, { agentId }));
    const { result, statements } = await recorder.during(() => a.gql(START, { agentId }));
    const taskId = ok(result).startTask.id as string;
    expect(await approvalsOf(taskId)).toBe(1);
    const texts = statements.filter((s) => !/graphile_worker/.test(s.text)).map((s) => s.text.trim());
    const taskInsert = texts.findIndex((t) => /^insert into "task" /.test(t));
    expect(taskInsert).toBeGreaterThan(0);
    expect(texts[taskInsert - 1]).not.toMatch(/^BEGIN/);
    expect(texts[taskInsert + 1]).toMatch(/^BEGIN/); // the observation's transaction, after the send
    expect(texts.filter((t) => /from "card_snapshot"/.test(t))).toHaveLength(2);
    expect(texts.filter((t) => /"step_seq" from "task_message"/.test(t))).toEqual([]);
    expect(texts).toHaveLength(22);
  });
});
