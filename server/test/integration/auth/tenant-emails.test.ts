import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiToken, hashPassword, newApiToken } from '../../../src/auth/credentials.js';
import { openOrm } from '../../../src/db/orm.js';
import { migrationsList } from '../../../src/db/migrations/index.js';
import { PEOPLE_LIMITS } from '../../../src/limits.js';
import { OPS, codeOf, createTestDatabase, gqlOverHttp, roleUrls, startTestInstance, type GqlResult, type TestInstance } from '../../support/harness.js';

// Issue 22, finding 3: "a tenant-2 admin creates a user with a tenant-1 person's email; sign-in
// refuses emails found in two tenants, for good." An email now belongs to one person across
// tenants (the unique index app_user_email_one_tenant); another tenant's createUser with it is
// refused with one answer that names no tenant and no person, the same answer as for an email of
// the admin's own tenant, and a tenant's refusals are limited (PEOPLE_LIMITS). Everything here
// goes over the instance's real HTTP port.

const PASSWORD = 'correct horse battery';

let t: TestInstance;

beforeAll(async () => {
  t = await startTestInstance({ worker: false });
});
afterAll(() => t?.stop());

/** A tenant made as an operator makes one (SQL), with an admin holding an API token. */
async function otherTenant(name = `other-${randomBytes(4).toString('hex')}`) {
  const tenantId = randomUUID();
  const adminId = randomUUID();
  const token = newApiToken();
  await t.sql('insert into tenant (id, name) values ($1, $2)', [tenantId, name]);
  await t.sql(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, $3, 'Other admin', 'ADMIN')`, [
    adminId,
    tenantId,
    `admin-${randomBytes(4).toString('hex')}@${name}.test`,
  ]);
  await t.sql(`insert into api_token (id, user_id, label, token_hash) values ($1, $2, 'test', $3)`, [randomUUID(), adminId, hashApiToken(token)]);
  return { tenantId, name, adminId, token };
}

/** signIn over the real port; the session cookie it set, if any. */
async function signIn(email: string, password: string): Promise<{ body: GqlResult; cookie: string | null }> {
  const res = await fetch(`${t.instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email } }', variables: { e: email, p: password } }),
  });
  return { body: (await res.json()) as GqlResult, cookie: res.headers.get('set-cookie') };
}

const createUser = (token: string, email: string, password: string | null = PASSWORD) =>
  gqlOverHttp(t, OPS.createUser, { email, name: 'Alice', role: 'MEMBER', password }, token);

describe('an email belongs to one tenant', () => {
  it("another tenant's admin cannot take a person's email, and the person still signs in", async () => {
    const email = `alice-${randomBytes(4).toString('hex')}@example.test`;
    const alice = await createUser(t.adminToken, email);
    expect(alice.body.errors).toBeUndefined();
    expect((await signIn(email, PASSWORD)).body.data?.signIn).toEqual({ email });

    // As found: the second tenant's admin creates a person with Alice's email (any case, any spaces).
    const other = await otherTenant();
    const attempts = [];
    for (const variant of [email, ` ${email.toUpperCase()} `]) attempts.push(await createUser(other.token, variant, 'another password'));

    // Alice is not locked out, now or on any later sign-in (before: "email or password is wrong", for good).
    for (let i = 0; i < 2; i++) {
      const again = await signIn(email, PASSWORD);
      expect(again.body.errors).toBeUndefined();
      expect(again.body.data?.signIn).toEqual({ email });
      expect(again.cookie).toMatch(/^taskbay_session=/);
    }

    // Because the copies were refused, and nothing of them was stored.
    for (const taken of attempts) {
      expect(taken.status).toBe(200);
      expect(taken.body.data).toBeNull();
      expect(codeOf(taken.body)).toBe('BAD_USER_INPUT');
      expect(taken.body.errors![0]!.extensions?.reason).toBe('EMAIL_UNAVAILABLE');
    }
    expect(await t.sql('select count(*)::int as n from app_user where tenant_id = $1', [other.tenantId])).toEqual([{ n: 1 }]);
    expect(await t.sql(`select count(*)::int as n from audit_event where tenant_id = $1 and type = 'user.created'`, [other.tenantId])).toEqual([{ n: 0 }]);
  });

  it("the refusal is the same answer as for an email of the admin's own tenant, and names neither tenant nor person", async () => {
    const other = await otherTenant();
    const own = `own-${randomBytes(4).toString('hex')}@example.test`;
    expect((await createUser(other.token, own)).body.errors).toBeUndefined();
    const elsewhere = `elsewhere-${randomBytes(4).toString('hex')}@example.test`;
    const person = await createUser(t.adminToken, elsewhere);
    expect(person.body.errors).toBeUndefined();
    const [defaultTenant] = await t.sql<{ id: string; name: string }>(`select id, name from tenant where name = 'default'`);

    const ownAnswer = await createUser(other.token, own);
    const elsewhereAnswer = await createUser(other.token, elsewhere);
    // What the caller gets, whole: status, body, every extension.
    expect(elsewhereAnswer).toEqual(ownAnswer);
    const text = JSON.stringify(elsewhereAnswer);
    for (const secret of [defaultTenant!.id, defaultTenant!.name, person.body.data.createUser.id, 'Alice', elsewhere]) {
      expect(text).not.toContain(secret);
    }
    expect(elsewhereAnswer.body.errors![0]!.message).toBe('this email cannot be used: an email belongs to one person only, and this one is taken');
  });

  it("a tenant's refused emails are limited: past the limit its createUser is refused before any email is tried; other tenants are not affected", async () => {
    const other = await otherTenant();
    const taken = `taken-${randomBytes(4).toString('hex')}@example.test`;
    expect((await createUser(t.adminToken, taken)).body.errors).toBeUndefined();
    // Without passwords, so the attempts cost no argon2 work.
    for (let i = 0; i < PEOPLE_LIMITS.unavailableEmailsPerTenant; i++) {
      expect((await createUser(other.token, taken, null)).body.errors![0]!.extensions?.reason).toBe('EMAIL_UNAVAILABLE');
    }
    // Now a free email is refused too, without being tried: nothing is created.
    const free = `free-${randomBytes(4).toString('hex')}@example.test`;
    const limited = await createUser(other.token, free, null);
    expect(codeOf(limited.body)).toBe('BAD_USER_INPUT');
    expect(limited.body.errors![0]!.extensions).toMatchObject({ reason: 'RATE_LIMITED' });
    const wait = limited.body.errors![0]!.extensions!.retryAfterSeconds as number;
    expect(wait).toBeGreaterThan(PEOPLE_LIMITS.unavailableEmailsWindowSeconds - 120);
    expect(wait).toBeLessThanOrEqual(PEOPLE_LIMITS.unavailableEmailsWindowSeconds);
    expect(await t.sql('select count(*)::int as n from app_user where email = $1', [free])).toEqual([{ n: 0 }]);
    // Successful creations are not counted, and another tenant is not limited.
    const third = await otherTenant();
    for (let i = 0; i < PEOPLE_LIMITS.unavailableEmailsPerTenant + 1; i++) {
      expect((await createUser(third.token, `ok-${i}-${randomBytes(4).toString('hex')}@example.test`, null)).body.errors).toBeUndefined();
    }
    expect((await createUser(third.token, taken, null)).body.errors![0]!.extensions?.reason).toBe('EMAIL_UNAVAILABLE');
  });

  it('TASKBAY_ADMIN_EMAIL held by a person of another tenant stops the start with a clear error', async () => {
    const db = await createTestDatabase();
    const c = new pg.Client({ connectionString: db });
    await c.connect();
    try {
      const tenantId = randomUUID();
      await c.query(`insert into tenant (id, name) values ($1, 'first')`, [tenantId]);
      await c.query(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'root@example.test', 'Root', 'ADMIN')`, [randomUUID(), tenantId]);
    } finally {
      await c.end();
    }
    await expect(startTestInstance({ databaseUrl: db, worker: false, env: { TASKBAY_ADMIN_EMAIL: 'root@example.test' } })).rejects.toThrow(
      'TASKBAY_ADMIN_EMAIL root@example.test is the email of a person of another tenant; choose another',
    );
  });
});

describe('migration: a database that already holds one email in several tenants', () => {
  it('keeps every row; the earliest keeps the email and signs in, later ones are marked and cannot sign in; the email stays taken', async () => {
    // A database migrated (as the owner role, as Taskbay migrates) up to the migration before the rule.
    const url = await createTestDatabase({ empty: true });
    const orm = await openOrm(roleUrls(url).ownerUrl, 2);
    try {
      const index = migrationsList.findIndex((m) => m.name === 'Migration20261204002000_email_one_tenant');
      expect(index).toBeGreaterThan(0);
      await orm.getMigrator().up({ to: migrationsList[index - 1]!.name });
    } finally {
      await orm.close(true);
    }
    // The lock-out as found: a person of tenant one, then a second tenant's copy of their email
    // (in another case too, which the old per-tenant rule also let in), and an unrelated person.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const [one, two] = [randomUUID(), randomUUID()];
    const [first, copy, upper, solo] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    try {
      await db.query(`insert into tenant (id, name) values ($1, 'one'), ($2, 'two')`, [one, two]);
      const insert = async (id: string, tenant: string, email: string, password: string, minutesAgo: number) =>
        db.query(
          `insert into app_user (id, tenant_id, email, name, role, password_hash, created_at)
           values ($1, $2, $3, $3, 'MEMBER', $4, now() - make_interval(mins => $5))`,
          [id, tenant, email, await hashPassword(password), minutesAgo],
        );
      await insert(first, one, 'bob@example.test', 'first password', 30);
      await insert(copy, two, 'bob@example.test', 'copy password', 20);
      await insert(upper, two, 'BOB@example.test', 'upper password', 10);
      await insert(solo, two, 'carol@example.test', 'carol password', 10);
    } finally {
      await db.end();
    }

    // Taskbay starts on it: the rest of the migrations run (none fails), then it serves.
    const inst = await startTestInstance({ databaseUrl: url, worker: false });
    try {
      const rows = await inst.sql(`select id, email, duplicate_email from app_user where tenant_id = any($1::uuid[]) order by created_at`, [[one, two]]);
      expect(rows).toEqual([
        { id: first, email: 'bob@example.test', duplicate_email: false },
        { id: copy, email: 'bob@example.test', duplicate_email: true },
        { id: upper, email: 'BOB@example.test', duplicate_email: true },
        { id: solo, email: 'carol@example.test', duplicate_email: false },
      ]);
      const signInOn = async (email: string, password: string) => {
        const res = await fetch(`${inst.instance.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }',
            variables: { e: email, p: password },
          }),
        });
        return (await res.json()) as GqlResult;
      };
      const idOf = (r: GqlResult) => Buffer.from(r.data?.signIn?.id ?? '', 'base64').toString('utf8');
      expect(idOf(await signInOn('bob@example.test', 'first password'))).toBe(`User:${first}`);
      for (const [email, password] of [
        ['bob@example.test', 'copy password'],
        ['BOB@example.test', 'upper password'],
      ] as const) {
        const marked = await signInOn(email, password);
        expect(codeOf(marked)).toBe('UNAUTHENTICATED');
        expect(marked.errors![0]!.message).toBe('email or password is wrong');
      }
      expect(idOf(await signInOn('carol@example.test', 'carol password'))).toBe(`User:${solo}`);
      // The email stays taken for new people, in either tenant.
      const again = await gqlOverHttp(inst, OPS.createUser, { email: 'Bob@Example.test', name: 'Bob', role: 'MEMBER' });
      expect(again.body.errors![0]!.extensions?.reason).toBe('EMAIL_UNAVAILABLE');
    } finally {
      await inst.stop();
    }
  });
});
