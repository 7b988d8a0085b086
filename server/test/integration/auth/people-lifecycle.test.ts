import { randomBytes, randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiToken, newApiToken } from '../../../src/auth/credentials.js';
import { CSRF_HEADER } from '../../../src/http/console.js';
import { PEOPLE_LIMITS } from '../../../src/limits.js';
import {
  OPS,
  codeOf,
  createMember,
  eventually,
  startTestInstance,
  type GqlResult,
  type TestInstance,
  ok,
  rawId,
  startReplicas,
  startReplicaOf,
} from '../../support/harness.js';
import { recordStatements, type RecordedStatement, type StatementRecorder } from '../../support/statements.js';

// Issue 22, finding 8: "API tokens cannot be listed, revoked or expired (only SQL revokes a leaked
// hook token); people cannot be removed or change role." Now: apiTokens, revokeApiToken and an
// optional expiry on createApiToken; disableUser, enableUser and setUserRole. Each change is
// audited in the tenant stream and holds on every instance from its next request on: two
// instances on one database, each having answered from its viewer cache before the change
// (auth/viewer-cache.ts), as integration/approvals/ingest-path.test.ts does for a deleted token.

let a: TestInstance;
let b: TestInstance;
let recorder: StatementRecorder;

beforeAll(async () => {
  [a, b] = await startReplicas(
    { worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } },
    { worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } },
  );
  recorder = recordStatements();
});

afterAll(async () => {
  recorder?.restore();
  await b?.stop();
  await a?.stop();
});

const VIEWER = '{ viewer { email role } }';
const ADMIN_ONLY = '{ agentGrants { id } }';
const TOKEN_FIELDS = 'id label createdAt expiresAt revokedAt user { id email }';
const LIST = `query($userId: ID) { apiTokens(userId: $userId) { ${TOKEN_FIELDS} } }`;
const CREATE = `mutation($userId: ID, $label: String!, $ttl: Int) {
  createApiToken(input: { userId: $userId, label: $label, expiresInSeconds: $ttl }) { token apiToken { ${TOKEN_FIELDS} } } }`;
const REVOKE = `mutation($id: ID!) { revokeApiToken(tokenId: $id) { ${TOKEN_FIELDS} } }`;
const DISABLE = 'mutation($id: ID!) { disableUser(userId: $id) { id disabledAt } }';
const ENABLE = 'mutation($id: ID!) { enableUser(userId: $id) { id disabledAt } }';
const SET_ROLE = 'mutation($id: ID!, $role: Role!) { setUserRole(input: { userId: $id, role: $role }) { id role } }';
const SIGN_IN = 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email } }';
const PASSWORD = 'correct horse battery';

/** The first error's code, reason and message. */
const refusal = (r: GqlResult) => ({ code: codeOf(r), reason: r.errors?.[0]?.extensions?.reason, message: r.errors?.[0]?.message });

/** GraphQL with the console's session cookie (in process, as t.gql). */
async function withCookie(t: TestInstance, query: string, variables: Record<string, unknown>, cookie: string) {
  const res = await t.instance.yoga.fetch('http://taskbay.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: '1' },
    body: JSON.stringify({ query, variables }),
  });
  return { body: (await res.json()) as GqlResult, setCookie: res.headers.get('set-cookie') };
}

async function signIn(t: TestInstance, email: string, password = PASSWORD) {
  const r = await withCookie(t, SIGN_IN, { e: email, p: password }, '');
  return { body: r.body, cookie: r.setCookie?.split(';')[0] ?? null };
}

/** A member with a password (for sign-in) and an API token. */
async function person(role: 'ADMIN' | 'MEMBER' = 'MEMBER') {
  const email = `p-${randomBytes(4).toString('hex')}@example.test`;
  const globalId = ok(await a.gql(OPS.createUser, { email, name: email, role, password: PASSWORD })).createUser.id as string;
  const token = ok(await a.gql(OPS.createToken, { userId: globalId, label: 'laptop' })).createApiToken.token as string;
  return { id: rawId(globalId), email, token };
}

const readsCredential = (s: RecordedStatement) => /api_token|web_session|app_user/.test(s.text);

/**
 * Makes both instances hold the credential in their viewer cache, and checks they do: a request
 * that reads no token, session or user. The first request loads it; a load that overlapped a
 * notification (of anyone) is not stored, so a later one may load again: three at most.
 */
async function warm(token: string) {
  for (const t of [a, b]) {
    let fromMemory = false;
    for (let i = 0; i < 3 && !fromMemory; i++) {
      const r = await recorder.during(() => t.gql('{ __typename }', {}, token));
      fromMemory = !r.statements.some(readsCredential);
    }
    expect(fromMemory).toBe(true);
  }
}

/** The tenant-stream events of these types, oldest first. */
const eventsOf = (types: string[]) =>
  a.sql<{ type: string; actor_id: string | null; data: Record<string, unknown>; sig: string | null }>(
    `select type, actor_id, data, sig from audit_event where type = any($1::text[]) and stream like 'tenant:%' order by seq`,
    [types],
  );

const adminId = async () => rawId(ok(await a.gql('{ viewer { id } }')).viewer.id);

/** Another tenant, made as an operator makes one (SQL), with an admin and a member holding tokens. */
async function otherTenant() {
  const tenantId = randomUUID();
  const [admin, member] = [randomUUID(), randomUUID()];
  const [adminToken, memberToken] = [newApiToken(), newApiToken()];
  const tag = randomBytes(4).toString('hex');
  await a.sql('insert into tenant (id, name) values ($1, $2)', [tenantId, `other-${tag}`]);
  await a.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $3, $4, 'Other admin', 'ADMIN'), ($2, $3, $5, 'Other member', 'MEMBER')`, [
    admin,
    member,
    tenantId,
    `admin-${tag}@other.test`,
    `member-${tag}@other.test`,
  ]);
  await a.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'a', $3), ($4, $5, 'm', $6)`, [
    randomUUID(),
    admin,
    hashApiToken(adminToken),
    randomUUID(),
    member,
    hashApiToken(memberToken),
  ]);
  return { tenantId, admin, member, adminToken, memberToken };
}

describe('API tokens: listed, revoked, expiring', () => {
  it('createApiToken takes an optional, bounded expiry; out of bounds is BAD_USER_INPUT and stores nothing', async () => {
    const p = await person();
    const before = Date.now();
    const created = ok(await a.gql(CREATE, { label: 'ci job', ttl: 3600 }, p.token)).createApiToken;
    const expiresAt = new Date(created.apiToken.expiresAt).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect(created.apiToken).toMatchObject({ label: 'ci job', revokedAt: null, user: { email: p.email } });
    expect(ok(await b.gql(VIEWER, {}, created.token)).viewer.email).toBe(p.email);
    // Without one it does not expire (as before).
    expect(ok(await a.gql(CREATE, { label: 'forever' }, p.token)).createApiToken.apiToken.expiresAt).toBeNull();

    const count = async () => (await a.sql('select count(*)::int as n from api_token where user_id = $1', [p.id]))[0].n;
    const stored = await count();
    for (const ttl of [0, -1, PEOPLE_LIMITS.tokenExpiresMinSeconds - 1, PEOPLE_LIMITS.tokenExpiresMaxSeconds + 1]) {
      const r = await a.gql(CREATE, { label: 'bad', ttl }, p.token);
      expect(refusal(r)).toEqual({
        code: 'BAD_USER_INPUT',
        reason: undefined,
        message: `expiresInSeconds must be ${PEOPLE_LIMITS.tokenExpiresMinSeconds} to ${PEOPLE_LIMITS.tokenExpiresMaxSeconds}`,
      });
    }
    expect(await count()).toBe(stored);
    const [event] = (await eventsOf(['token.created'])).filter((e) => e.data.tokenId === rawId(created.apiToken.id));
    expect(event).toMatchObject({ actor_id: p.id, data: { userId: p.id, label: 'ci job', expiresAt: created.apiToken.expiresAt } });
  });

  it('a name and a token label count characters (code points), not UTF-16 units: 200 emoji fit, 201 do not', async () => {
    const emoji = '\u{1F600}'; // one code point, two UTF-16 units
    const [fits, over] = [emoji.repeat(PEOPLE_LIMITS.nameMax), emoji.repeat(PEOPLE_LIMITS.nameMax + 1)];
    const email = `emoji-${randomBytes(4).toString('hex')}@example.test`;
    const created = ok(await a.gql(OPS.createUser, { email, name: fits, role: 'MEMBER' })).createUser;
    expect((await a.sql('select name from app_user where email = $1', [email]))[0].name).toBe(fits);
    const tooLong = await a.gql(OPS.createUser, { email: `x-${email}`, name: over, role: 'MEMBER' });
    expect(refusal(tooLong)).toEqual({ code: 'BAD_USER_INPUT', reason: undefined, message: `name must be 1..${PEOPLE_LIMITS.nameMax} characters` });

    const label = emoji.repeat(PEOPLE_LIMITS.tokenLabelMax);
    expect(ok(await a.gql(CREATE, { userId: created.id, label })).createApiToken.apiToken.label).toBe(label);
    const overLabel = await a.gql(CREATE, { userId: created.id, label: `${label}${emoji}` });
    expect(refusal(overLabel)).toEqual({ code: 'BAD_USER_INPUT', reason: undefined, message: `label must be 1..${PEOPLE_LIMITS.tokenLabelMax} characters` });
  });

  it("a person lists their own tokens, an admin the whole tenant's; never the secret; a member asking for another's is FORBIDDEN, another tenant's person NOT_FOUND", async () => {
    const [p, q] = [await person(), await person()];
    const own = ok(await a.gql(LIST, {}, p.token)).apiTokens;
    expect(own.map((k: { label: string; user: { email: string } }) => [k.label, k.user.email])).toEqual([['laptop', p.email]]);
    expect(ok(await a.gql(LIST, { userId: encodeGlobalID('User', p.id) }, p.token)).apiTokens).toEqual(own);
    const all = ok(await a.gql(LIST, {})).apiTokens.map((k: { user: { email: string } }) => k.user.email);
    expect(all).toEqual(expect.arrayContaining([p.email, q.email]));
    expect(ok(await a.gql(LIST, { userId: encodeGlobalID('User', q.id) })).apiTokens.map((k: { user: { email: string } }) => k.user.email)).toEqual([q.email]);
    // The type has no field that could carry the secret or its hash.
    const fields = ok(await a.gql(`{ __type(name: "ApiToken") { fields { name } } }`)).__type.fields.map((f: { name: string }) => f.name);
    expect(fields.sort()).toEqual(['createdAt', 'expiresAt', 'id', 'label', 'revokedAt', 'user']);
    expect(JSON.stringify(ok(await a.gql(LIST, {})))).not.toContain(p.token.slice(3, 20));

    expect(refusal(await a.gql(LIST, { userId: encodeGlobalID('User', q.id) }, p.token))).toMatchObject({ code: 'FORBIDDEN' });
    const other = await otherTenant();
    expect(refusal(await a.gql(LIST, { userId: encodeGlobalID('User', p.id) }, other.adminToken))).toMatchObject({ code: 'NOT_FOUND' });
    expect(ok(await a.gql(LIST, {}, other.adminToken)).apiTokens.map((k: { user: { email: string } }) => k.user.email)).not.toContain(p.email);
    // By id (node) only the owner and the tenant's admins see a token.
    const node = `query($id: ID!) { node(id: $id) { ... on ApiToken { label } } }`;
    const id = own[0].id;
    expect(ok(await a.gql(node, { id }, p.token)).node).toEqual({ label: 'laptop' });
    expect(ok(await a.gql(node, { id })).node).toEqual({ label: 'laptop' });
    expect(ok(await a.gql(node, { id }, q.token)).node).toBeNull();
    expect(ok(await a.gql(node, { id }, other.adminToken)).node).toBeNull();
  });

  it('a token revoked by its owner on one instance is refused (UNAUTHENTICATED) on the very next request on the other; audited; no longer listed', async () => {
    const p = await person();
    await warm(p.token);
    const [mine] = ok(await a.gql(LIST, {}, p.token)).apiTokens;
    const second = ok(await a.gql(CREATE, { label: 'second' }, p.token)).createApiToken;
    const revoked = ok(await a.gql(REVOKE, { id: mine.id }, second.token)).revokeApiToken;
    expect(revoked.revokedAt).not.toBeNull();
    expect(codeOf(await b.gql(ADMIN_ONLY, {}, p.token))).toBe('UNAUTHENTICATED');
    expect(ok(await b.gql(VIEWER, {}, p.token)).viewer).toBeNull();
    expect(codeOf(await a.gql(ADMIN_ONLY, {}, p.token))).toBe('UNAUTHENTICATED');
    // Its other token is untouched; the revoked one is not listed; revoking again changes nothing.
    expect(ok(await b.gql(VIEWER, {}, second.token)).viewer.email).toBe(p.email);
    expect(ok(await b.gql(LIST, {}, second.token)).apiTokens.map((k: { label: string }) => k.label)).toEqual(['second']);
    expect(ok(await b.gql(REVOKE, { id: mine.id }, second.token)).revokeApiToken.revokedAt).toBe(revoked.revokedAt);
    const events = (await eventsOf(['token.revoked'])).filter((e) => e.data.tokenId === rawId(mine.id));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor_id: p.id, data: { userId: p.id, label: 'laptop' } });
    expect(events[0]!.sig).not.toBeNull();
  });

  it("an admin revokes a member's token (refused on the other instance at once); a member revoking another's token, or an admin another tenant's, gets NOT_FOUND", async () => {
    const [p, q] = [await person(), await person()];
    await warm(p.token);
    const [pToken] = ok(await a.gql(LIST, { userId: encodeGlobalID('User', p.id) })).apiTokens;
    expect(refusal(await a.gql(REVOKE, { id: pToken.id }, q.token))).toMatchObject({ code: 'NOT_FOUND' });
    const other = await otherTenant();
    expect(refusal(await a.gql(REVOKE, { id: pToken.id }, other.adminToken))).toMatchObject({ code: 'NOT_FOUND' });
    expect(ok(await b.gql(VIEWER, {}, p.token)).viewer.email).toBe(p.email);
    expect(ok(await b.gql(REVOKE, { id: pToken.id })).revokeApiToken.user.email).toBe(p.email);
    expect(codeOf(await a.gql(ADMIN_ONLY, {}, p.token))).toBe('UNAUTHENTICATED');
    const [event] = (await eventsOf(['token.revoked'])).filter((e) => e.data.tokenId === rawId(pToken.id));
    expect(event).toMatchObject({ actor_id: await adminId(), data: { userId: p.id } });
  });

  it('an expired token is refused (UNAUTHENTICATED) on every instance, though each had it cached', async () => {
    const p = await person();
    const created = ok(await a.gql(CREATE, { label: 'short', ttl: PEOPLE_LIMITS.tokenExpiresMinSeconds }, p.token)).createApiToken;
    // Shortened, as an operator could (SQL; the change notifies, so both instances forget it),
    // then cached again by both: nothing tells them of the expiry itself.
    const [row] = await a.sql<{ expires_at: Date }>(`update api_token set expires_at = now() + interval '3 seconds' where id = $1 returning expires_at`, [
      rawId(created.apiToken.id),
    ]);
    await warm(created.token);
    const at = row!.expires_at.getTime();
    expect(at).toBeGreaterThan(Date.now()); // still valid when both had cached it
    await eventually(async () => Date.now() > at, at - Date.now() + 5000, 20);
    for (const t of [b, a]) {
      expect(codeOf(await t.gql(ADMIN_ONLY, {}, created.token))).toBe('UNAUTHENTICATED');
      expect(ok(await t.gql(VIEWER, {}, created.token)).viewer).toBeNull();
    }
    // Still listed (with its expiry) until revoked.
    expect(ok(await a.gql(LIST, {}, p.token)).apiTokens.map((k: { label: string }) => k.label)).toEqual(['laptop', 'short']);
  });

  it(`a person holds at most ${PEOPLE_LIMITS.tokensPerPersonMax} tokens that are not revoked`, async () => {
    const p = await person();
    const fill = PEOPLE_LIMITS.tokensPerPersonMax - 1;
    await a.sql(
      `insert into api_token (id, user_id, label, token_hash) select gen_random_uuid(), $1, 'filler', md5(random()::text) from generate_series(1, $2)`,
      [p.id, fill],
    );
    expect(refusal(await a.gql(CREATE, { label: 'one more' }, p.token))).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_MANY_TOKENS' });
    const filler = ok(await a.gql(LIST, {}, p.token)).apiTokens.find((k: { label: string }) => k.label === 'filler');
    ok(await a.gql(REVOKE, { id: filler.id }));
    expect(ok(await a.gql(CREATE, { label: 'one more' }, p.token)).createApiToken.token).toMatch(/^tb_/);
  });
});

describe('people: disabled and enabled again', () => {
  it("a disabled person's token and session are refused on the other instance at the next request; sign-in answers as for a wrong password; enabling brings the token back", async () => {
    const p = await person();
    const session = await signIn(a, p.email);
    expect(session.cookie).toMatch(/^taskbay_session=/);
    await warm(p.token);
    for (const t of [b, b]) expect((await withCookie(t, VIEWER, {}, session.cookie!)).body.data?.viewer.email).toBe(p.email);

    const disabled = ok(await a.gql(DISABLE, { id: encodeGlobalID('User', p.id) })).disableUser;
    expect(disabled.disabledAt).not.toBeNull();
    expect(codeOf(await b.gql(ADMIN_ONLY, {}, p.token))).toBe('UNAUTHENTICATED');
    expect(ok(await b.gql(VIEWER, {}, p.token)).viewer).toBeNull();
    expect((await withCookie(b, VIEWER, {}, session.cookie!)).body.data?.viewer).toBeNull();
    // Its sessions are gone; sign-in with the right password is answered as a wrong one.
    expect(await a.sql('select count(*)::int as n from web_session where user_id = $1', [p.id])).toEqual([{ n: 0 }]);
    const right = await signIn(b, p.email);
    const wrong = await signIn(b, p.email, 'not the password');
    expect(right.body).toEqual(wrong.body);
    expect(refusal(right.body)).toEqual({ code: 'UNAUTHENTICATED', reason: undefined, message: 'email or password is wrong' });
    expect(right.cookie).toBeNull();
    // Listed as disabled; an admin cannot make them a token meanwhile.
    expect(ok(await b.gql('{ users { id disabledAt } }')).users).toContainEqual({ id: encodeGlobalID('User', p.id), disabledAt: disabled.disabledAt });
    expect(refusal(await b.gql(OPS.createToken, { userId: encodeGlobalID('User', p.id), label: 'x' }))).toMatchObject({ reason: 'DISABLED' });

    expect(ok(await b.gql(ENABLE, { id: encodeGlobalID('User', p.id) })).enableUser.disabledAt).toBeNull();
    expect(ok(await a.gql(VIEWER, {}, p.token)).viewer.email).toBe(p.email);
    expect((await withCookie(a, VIEWER, {}, session.cookie!)).body.data?.viewer).toBeNull(); // the old session does not come back
    expect((await signIn(a, p.email)).body.data?.signIn).toEqual({ email: p.email });

    const events = (await eventsOf(['user.disabled', 'user.enabled'])).filter((e) => e.data.userId === p.id);
    const admin = await adminId();
    expect(events.map((e) => [e.type, e.actor_id, e.data.email])).toEqual([
      ['user.disabled', admin, p.email],
      ['user.enabled', admin, p.email],
    ]);
    expect(events.every((e) => e.sig !== null)).toBe(true);
  });

  it("an admin cannot disable themselves; members get FORBIDDEN; another tenant's person is NOT_FOUND; nothing changes", async () => {
    const [p, q] = [await person(), await person()];
    const self = await a.gql(DISABLE, { id: encodeGlobalID('User', await adminId()) });
    expect(refusal(self)).toEqual({ code: 'BAD_USER_INPUT', reason: 'SELF', message: 'you cannot disable yourself' });
    for (const op of [DISABLE, ENABLE]) expect(codeOf(await a.gql(op, { id: encodeGlobalID('User', q.id) }, p.token))).toBe('FORBIDDEN');
    expect(codeOf(await a.gql(SET_ROLE, { id: encodeGlobalID('User', p.id), role: 'ADMIN' }, p.token))).toBe('FORBIDDEN');
    const other = await otherTenant();
    for (const op of [DISABLE, ENABLE]) expect(codeOf(await a.gql(op, { id: encodeGlobalID('User', p.id) }, other.adminToken))).toBe('NOT_FOUND');
    expect(codeOf(await a.gql(SET_ROLE, { id: encodeGlobalID('User', p.id), role: 'ADMIN' }, other.adminToken))).toBe('NOT_FOUND');
    expect(
      await a.sql(`select count(*)::int as n from app_user where disabled_at is not null or (id = any($1::uuid[]) and role = 'ADMIN')`, [[p.id, q.id]]),
    ).toEqual([{ n: 0 }]);
    expect(ok(await b.gql(VIEWER, {}, p.token)).viewer.role).toBe('MEMBER');
  });

  it('two admins disabling each other at once leave one enabled admin', async () => {
    const other = await otherTenant();
    const second = randomUUID();
    const secondToken = newApiToken();
    await a.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, $3, 'Second admin', 'ADMIN')`, [
      second,
      other.tenantId,
      `second-${randomBytes(4).toString('hex')}@other.test`,
    ]);
    await a.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 's', $3)`, [randomUUID(), second, hashApiToken(secondToken)]);
    const results = await Promise.all([
      a.gql(DISABLE, { id: encodeGlobalID('User', second) }, other.adminToken),
      b.gql(DISABLE, { id: encodeGlobalID('User', other.admin) }, secondToken),
    ]);
    expect(results.filter((r) => !r.errors)).toHaveLength(1);
    expect(await a.sql(`select count(*)::int as n from app_user where tenant_id = $1 and role = 'ADMIN' and disabled_at is null`, [other.tenantId])).toEqual([
      { n: 1 },
    ]);
  });
});

describe('people: a role changed', () => {
  it('a member made admin is an admin on the other instance at the next request, and a member again once demoted; audited', async () => {
    const p = await person();
    await warm(p.token);
    expect(codeOf(await b.gql(ADMIN_ONLY, {}, p.token))).toBe('FORBIDDEN');
    expect(ok(await a.gql(SET_ROLE, { id: encodeGlobalID('User', p.id), role: 'ADMIN' })).setUserRole.role).toBe('ADMIN');
    expect(ok(await b.gql(ADMIN_ONLY, {}, p.token)).agentGrants).toEqual(expect.any(Array));
    expect(ok(await b.gql(ADMIN_ONLY, {}, p.token)).agentGrants).toEqual(expect.any(Array));
    expect(ok(await b.gql(SET_ROLE, { id: encodeGlobalID('User', p.id), role: 'MEMBER' })).setUserRole.role).toBe('MEMBER');
    expect(codeOf(await a.gql(ADMIN_ONLY, {}, p.token))).toBe('FORBIDDEN');
    // The same role again changes nothing and records nothing.
    ok(await a.gql(SET_ROLE, { id: encodeGlobalID('User', p.id), role: 'MEMBER' }));
    const events = (await eventsOf(['user.role_changed'])).filter((e) => e.data.userId === p.id);
    const admin = await adminId();
    expect(events.map((e) => [e.actor_id, e.data.from, e.data.to])).toEqual([
      [admin, 'MEMBER', 'ADMIN'],
      [admin, 'ADMIN', 'MEMBER'],
    ]);
  });

  it('the last enabled admin cannot be demoted; the admin holding TASKBAY_ADMIN_TOKEN cannot be demoted by another admin', async () => {
    const other = await otherTenant();
    const last = await a.gql(SET_ROLE, { id: encodeGlobalID('User', other.admin), role: 'MEMBER' }, other.adminToken);
    expect(refusal(last)).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'LAST_ADMIN' });
    expect(ok(await a.gql(VIEWER, {}, other.adminToken)).viewer.role).toBe('ADMIN');

    const deputy = await person('ADMIN');
    const bootstrapAdmin = await adminId();
    const r = await a.gql(SET_ROLE, { id: encodeGlobalID('User', bootstrapAdmin), role: 'MEMBER' }, deputy.token);
    expect(refusal(r)).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'BOOTSTRAP_ADMIN' });
    expect(ok(await a.gql(VIEWER)).viewer.role).toBe('ADMIN');
    ok(await a.gql(SET_ROLE, { id: encodeGlobalID('User', deputy.id), role: 'MEMBER' }));
  });
});

describe('TASKBAY_ADMIN_TOKEN revoked', () => {
  it('stays refused after a restart with the same setting (it is not made anew)', async () => {
    const first = await startTestInstance({ worker: false });
    let deputy: { token: string };
    try {
      const [own] = ok(await first.gql(LIST, {})).apiTokens;
      expect(own.label).toBe('TASKBAY_ADMIN_TOKEN');
      // Another admin's token to act with once the operator's is gone.
      deputy = await createMember(first, { role: 'ADMIN' });
      ok(await first.gql(REVOKE, { id: own.id }));
      expect(codeOf(await first.gql(ADMIN_ONLY))).toBe('UNAUTHENTICATED');
    } finally {
      await first.stop();
    }
    const again = await startReplicaOf(first, { worker: false });
    try {
      expect(codeOf(await again.gql(ADMIN_ONLY))).toBe('UNAUTHENTICATED');
      expect(ok(await again.gql(VIEWER, {}, deputy.token)).viewer.role).toBe('ADMIN');
      expect(await again.sql(`select count(*)::int as n, count(revoked_at)::int as revoked from api_token where label = 'TASKBAY_ADMIN_TOKEN'`)).toEqual([
        { n: 1, revoked: 1 },
      ]);
    } finally {
      await again.stop();
    }
  });
});
