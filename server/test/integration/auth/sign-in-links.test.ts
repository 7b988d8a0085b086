import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startupSignInLink } from '../../../src/auth/module.js';
import { CSRF_HEADER } from '../../../src/http/console.js';
import { SIGN_IN_LINK_LIMITS } from '../../../src/limits.js';
import { codeOf, createMember, startTestInstance, type GqlResult, type TestInstance, rawId } from '../../support/harness.js';

// Issue 26, item 5: "With TASKBAY_ADMIN_TOKEN the first admin has no password and cannot sign in
// to the console; a person created without a password can never sign in." Now: a one-time
// sign-in link (auth/sign-in-links.ts), made by an admin (createSignInLink) or at start-up for
// the admin of TASKBAY_ADMIN_EMAIL while they have no password (startupSignInLink, shown by
// `taskbay serve`: runtime/startup-output.test.ts). Using it sets a password and signs in.

let t: TestInstance;

beforeAll(async () => {
  t = await startTestInstance({ worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } });
});

afterAll(async () => {
  await t?.stop();
});

const CREATE_LINK = 'mutation($id: ID!) { createSignInLink(userId: $id) { url expiresAt user { id email } } }';
const LINK_INFO = 'query($s: String!) { signInLink(secret: $s) { email name expiresAt } }';
const USE_LINK = 'mutation($s: String!, $p: String!) { setPasswordWithLink(secret: $s, password: $p) { email } }';
const SIGN_IN = 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email } }';
const VIEWER = '{ viewer { email } }';
const NEW_PASSWORD = 'a password of my own';

/** GraphQL over HTTP as the console sends it (cookie, CSRF header), in process. */
async function browser(query: string, variables: Record<string, unknown>, cookie = '') {
  const res = await t.instance.yoga.fetch('http://taskbay.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, [CSRF_HEADER]: '1' },
    body: JSON.stringify({ query, variables }),
  });
  return { body: (await res.json()) as GqlResult, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? null };
}

const secretOf = (url: string) => new URL(url).hash.slice(1);

async function linkFor(userId: string, token = t.adminToken) {
  const r = await t.gql(CREATE_LINK, { id: userId }, token);
  expect(r.errors).toBeUndefined();
  return r.data.createSignInLink as { url: string; expiresAt: string; user: { id: string; email: string } };
}

/** A person added without a password (and a token, so they exist for the API). */
async function passwordless(role: 'ADMIN' | 'MEMBER' = 'MEMBER') {
  return createMember(t, { role, email: `np-${randomBytes(4).toString('hex')}@example.test` });
}

describe('a person created without a password', () => {
  it('cannot sign in until an admin gives them a one-time link; the link sets their password and signs them in, once', async () => {
    const p = await passwordless();
    expect(codeOf((await browser(SIGN_IN, { e: p.email, p: '' })).body)).toBe('UNAUTHENTICATED');

    const link = await linkFor(p.id);
    expect(link.user.email).toBe(p.email);
    const url = new URL(link.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${t.config.publicUrl}/set-password`);
    const secret = secretOf(link.url);
    expect(secret).toMatch(/^[\w-]{43}$/); // 256 bits, in the fragment: never sent to the server by a browser
    expect(new Date(link.expiresAt).getTime() - Date.now()).toBeGreaterThan((SIGN_IN_LINK_LIMITS.ttlSeconds - 60) * 1000);
    // Only its hash is stored.
    const [row] = await t.sql('select id, created_by_id from sign_in_link where user_id = $1', [rawId(p.id)]);
    expect(row.id).not.toContain(secret);
    expect(row.created_by_id).not.toBeNull();

    // Its page asks no credential to say whom it is for.
    expect((await browser(LINK_INFO, { s: secret })).body.data.signInLink).toMatchObject({ email: p.email, name: p.email });

    const used = await browser(USE_LINK, { s: secret, p: NEW_PASSWORD });
    expect(used.body.errors).toBeUndefined();
    expect(used.body.data.setPasswordWithLink.email).toBe(p.email);
    expect(used.cookie).toMatch(/^taskbay_session=/);
    expect((await browser(VIEWER, {}, used.cookie!)).body.data.viewer.email).toBe(p.email);
    // From now on the password signs them in.
    expect((await browser(SIGN_IN, { e: p.email, p: NEW_PASSWORD })).cookie).toMatch(/^taskbay_session=/);

    // Once: the second use, and the page, say it cannot be used.
    const again = await browser(USE_LINK, { s: secret, p: 'another password' });
    expect(codeOf(again.body)).toBe('UNAUTHENTICATED');
    expect(again.body.errors![0]!.message).toMatch(/cannot be used.*Ask an admin for a new one/);
    expect((await browser(LINK_INFO, { s: secret })).body.data.signInLink).toBeNull();
    expect((await browser(SIGN_IN, { e: p.email, p: 'another password' })).cookie).toBeNull();

    const events = await t.sql(
      `select type, actor_type, data from audit_event where data->>'userId' = $1 and type in ('sign_in_link.created', 'user.password_set') order by seq`,
      [rawId(p.id)],
    );
    expect(events.map((e) => [e.type, e.actor_type])).toEqual([
      ['sign_in_link.created', 'user'],
      ['user.password_set', 'user'],
    ]);
    expect(events[1].data).toEqual({ userId: rawId(p.id), email: p.email, via: 'sign_in_link' });
  });

  it('a reset: using a link ends the sessions from before and voids the other links', async () => {
    const p = await passwordless();
    const first = await browser(USE_LINK, { s: secretOf((await linkFor(p.id)).url), p: NEW_PASSWORD });
    expect((await browser(VIEWER, {}, first.cookie!)).body.data.viewer.email).toBe(p.email);
    const a = secretOf((await linkFor(p.id)).url);
    const b = secretOf((await linkFor(p.id)).url);
    const reset = await browser(USE_LINK, { s: a, p: 'the new password' });
    expect(reset.cookie).toMatch(/^taskbay_session=/);
    expect((await browser(VIEWER, {}, first.cookie!)).body.data.viewer).toBeNull();
    expect((await browser(VIEWER, {}, reset.cookie!)).body.data.viewer.email).toBe(p.email);
    expect(codeOf((await browser(USE_LINK, { s: b, p: 'yet another one' })).body)).toBe('UNAUTHENTICATED');
    expect((await browser(SIGN_IN, { e: p.email, p: NEW_PASSWORD })).cookie).toBeNull();
  });

  it('refuses a short password without using the link, an expired link, a disabled person, and a member asking', async () => {
    const p = await passwordless();
    const secret = secretOf((await linkFor(p.id)).url);
    const short = await browser(USE_LINK, { s: secret, p: 'short' });
    expect(codeOf(short.body)).toBe('BAD_USER_INPUT');
    expect((await browser(LINK_INFO, { s: secret })).body.data.signInLink).not.toBeNull(); // still usable

    await t.sql(`update sign_in_link set expires_at = now() - interval '1 second' where user_id = $1`, [rawId(p.id)]);
    expect((await browser(LINK_INFO, { s: secret })).body.data.signInLink).toBeNull();
    expect(codeOf((await browser(USE_LINK, { s: secret, p: NEW_PASSWORD })).body)).toBe('UNAUTHENTICATED');

    // A link made before the person was disabled does not let them in.
    const before = secretOf((await linkFor(p.id)).url);
    expect((await t.gql('mutation($id: ID!) { disableUser(userId: $id) { id } }', { id: p.id })).errors).toBeUndefined();
    expect(codeOf((await browser(USE_LINK, { s: before, p: NEW_PASSWORD })).body)).toBe('UNAUTHENTICATED');
    const refused = await t.gql(CREATE_LINK, { id: p.id });
    expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    expect(refused.errors![0]!.extensions!.reason).toBe('DISABLED');

    const member = await passwordless();
    expect(codeOf(await t.gql(CREATE_LINK, { id: member.id }, member.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(CREATE_LINK, { id: member.id }, null))).toBe('UNAUTHENTICATED');
  });

  it(`keeps at most ${SIGN_IN_LINK_LIMITS.livePerPersonMax} unexpired links a person: a new one removes the oldest`, async () => {
    const p = await passwordless();
    const secrets: string[] = [];
    for (let i = 0; i <= SIGN_IN_LINK_LIMITS.livePerPersonMax; i++) secrets.push(secretOf((await linkFor(p.id)).url));
    const [{ n }] = await t.sql('select count(*)::int as n from sign_in_link where user_id = $1', [rawId(p.id)]);
    expect(n).toBe(SIGN_IN_LINK_LIMITS.livePerPersonMax);
    expect((await browser(LINK_INFO, { s: secrets[0]! })).body.data.signInLink).toBeNull();
    expect((await browser(LINK_INFO, { s: secrets.at(-1)! })).body.data.signInLink).not.toBeNull();
  });
});

describe('the admin of TASKBAY_ADMIN_TOKEN (no password)', () => {
  it('gets a start-up link while they have no password, none once they chose one', async () => {
    const [admin] = await t.sql(`select id, password_hash from app_user where email = 'admin@localhost'`);
    expect(admin.password_hash).toBeNull();
    const base = 'http://console.example.test';
    const link = await startupSignInLink(t.instance.orm.em.fork(), { adminEmail: 'Admin@Localhost', baseUrl: base });
    expect(link).not.toBeNull();
    expect(link!.url.startsWith(`${base}/set-password#`)).toBe(true);
    expect(link!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(SIGN_IN_LINK_LIMITS.startupTtlSeconds * 1000);
    const [event] = await t.sql(`select actor_type, data from audit_event where type = 'sign_in_link.created' and data->>'userId' = $1`, [admin.id]);
    expect(event).toMatchObject({ actor_type: 'system', data: { email: 'admin@localhost', startup: true } });

    const used = await browser(USE_LINK, { s: secretOf(link!.url), p: NEW_PASSWORD });
    expect(used.body.errors).toBeUndefined();
    expect((await browser(VIEWER, {}, used.cookie!)).body.data.viewer.email).toBe('admin@localhost');
    // The token still works, and the next start shows no link.
    expect((await t.gql(VIEWER)).data.viewer.email).toBe('admin@localhost');
    expect(await startupSignInLink(t.instance.orm.em.fork(), { adminEmail: 'admin@localhost', baseUrl: base })).toBeNull();
  });

  it('none for a member of that email, or an email no one has', async () => {
    const m = await passwordless('MEMBER');
    expect(await startupSignInLink(t.instance.orm.em.fork(), { adminEmail: m.email, baseUrl: 'http://x.test' })).toBeNull();
    expect(await startupSignInLink(t.instance.orm.em.fork(), { adminEmail: 'nobody@example.test', baseUrl: 'http://x.test' })).toBeNull();
  });
});
