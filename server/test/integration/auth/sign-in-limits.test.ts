import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyPassword } from '../../../src/auth/credentials.js';
import { PASSWORD_LIMITS } from '../../../src/limits.js';
import { OPS, codeOf, startTestInstance, type GqlResult, type TestInstance } from '../../support/harness.js';

// Console sign-in limiting (auth/sign-in-limiter.ts): failures counted per account and per
// client address in Postgres, blocks that grow, a password length cap, and one argon2
// verification on every path so neither answers nor timing tell whether an email exists.

// The real verifier, observed: which hash each sign-in checks, and with what.
vi.mock('../../../src/auth/credentials.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/auth/credentials.js')>();
  return { ...real, verifyPassword: vi.fn(real.verifyPassword) };
});
const verifier = vi.mocked(verifyPassword);

const LIMITS = { account: 3, address: 8, block: 60, blockMax: 240 };
const env = {
  TASKBAY_SIGNIN_ACCOUNT_FAILURES: String(LIMITS.account),
  TASKBAY_SIGNIN_ADDRESS_FAILURES: String(LIMITS.address),
  TASKBAY_SIGNIN_WINDOW: '900',
  TASKBAY_SIGNIN_BLOCK: String(LIMITS.block),
  TASKBAY_SIGNIN_BLOCK_MAX: String(LIMITS.blockMax),
};
const PASSWORD = 'correct horse battery';
const WRONG = 'email or password is wrong';

let t: TestInstance;
let nextHost = 10;
/** A loopback address of its own for each test, so address counts do not mix between tests. */
const freshAddress = () => `127.0.0.${nextHost++}`;

beforeAll(async () => {
  t = await startTestInstance({ worker: false, env });
});
afterAll(() => t?.stop());

async function createUser(email: string, password: string | null = PASSWORD) {
  const r = await t.gql(OPS.createUser, { email, name: email, role: 'MEMBER', password });
  expect(r.errors).toBeUndefined();
  const [row] = await t.sql<{ password_hash: string | null }>('select password_hash from app_user where email = $1', [email]);
  return row!.password_hash;
}

/** signIn over real HTTP from a chosen loopback address (the limiter keys on the peer address). */
function signIn(email: string, password: string, from: string, port = t.instance.port): Promise<GqlResult & { setCookie?: string[] }> {
  const payload = JSON.stringify({
    query: 'mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email } }',
    variables: { e: email, p: password },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/graphql', method: 'POST', localAddress: from, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as GqlResult), setCookie: res.headers['set-cookie'] }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const retryAfter = (r: GqlResult) => r.errors?.[0]?.extensions?.retryAfterSeconds as number | undefined;
/** What a caller can tell apart: code, message, whether a wait is given. */
const shape = (r: GqlResult) => ({ code: codeOf(r), message: r.errors?.[0]?.message, waits: retryAfter(r) !== undefined, data: r.data?.signIn ?? null });
const accountKey = (email: string) => `signin_account:${createHash('sha256').update(email).digest('hex')}`;
/** Ends a running block now (instead of waiting for it). */
const expireBlock = (email: string) => t.sql('update sign_in_limit set expire = $2 where key = $1', [accountKey(email), Date.now() - 1]);

describe('sign-in limiting per account', () => {
  it('after the allowed failures the account is blocked: even the right password is refused, unchecked, with the wait', async () => {
    const email = 'blocked@example.test';
    await createUser(email);
    for (let i = 0; i < LIMITS.account; i++) {
      const r = await signIn(email, `wrong ${i}`, freshAddress());
      expect(shape(r)).toEqual({ code: 'UNAUTHENTICATED', message: WRONG, waits: false, data: null });
    }
    const checksBefore = verifier.mock.calls.length;
    const blocked = await signIn(email, PASSWORD, freshAddress());
    expect(codeOf(blocked)).toBe('UNAUTHENTICATED');
    expect(blocked.errors![0]!.message).toMatch(/^too many failed sign-ins; try again in \d+ seconds$/);
    expect(retryAfter(blocked)).toBeGreaterThan(LIMITS.block - 5);
    expect(retryAfter(blocked)).toBeLessThanOrEqual(LIMITS.block);
    expect(blocked.errors![0]!.message).toContain(`${retryAfter(blocked)} seconds`);
    expect(blocked.setCookie).toBeUndefined();
    expect(verifier.mock.calls.length).toBe(checksBefore);
    expect(await t.sql('select count(*)::int as n from web_session')).toEqual([{ n: 0 }]);
  });

  it('unknown emails are counted the same way: the answers do not tell whether an email exists', async () => {
    const known = 'known@example.test';
    await createUser(known);
    const answers = async (email: string) => {
      const out = [];
      for (let i = 0; i <= LIMITS.account; i++) out.push(await signIn(email, `wrong ${i}`, freshAddress()));
      return out;
    };
    const forKnown = await answers(known);
    const forUnknown = await answers('nobody@example.test');
    expect(forUnknown.map(shape)).toEqual(forKnown.map(shape));
    expect(forKnown.map((r) => retryAfter(r) !== undefined)).toEqual([false, false, false, true]);
    expect(Math.abs(retryAfter(forUnknown.at(-1)!)! - retryAfter(forKnown.at(-1)!)!)).toBeLessThanOrEqual(2);
  });

  it('each further block within a day lasts twice as long, up to the maximum', async () => {
    const email = 'backoff@example.test';
    await createUser(email);
    const waits: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < LIMITS.account; i++) expect((await signIn(email, 'wrong', freshAddress())).errors![0]!.message).toBe(WRONG);
      waits.push(retryAfter(await signIn(email, 'wrong', freshAddress()))!);
      await expireBlock(email);
    }
    // 60, 120, 240, 240 (capped), each read a moment after the block started.
    const expected = [60, 120, 240, 240];
    waits.forEach((w, i) => {
      expect(w).toBeLessThanOrEqual(expected[i]!);
      expect(w).toBeGreaterThan(expected[i]! - 5);
    });
  });

  it('a successful sign-in starts the account afresh', async () => {
    const email = 'reset@example.test';
    await createUser(email);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < LIMITS.account - 1; i++) expect((await signIn(email, 'wrong', freshAddress())).errors![0]!.message).toBe(WRONG);
      const ok = await signIn(email, PASSWORD, freshAddress());
      expect(ok.errors).toBeUndefined();
      expect(ok.data.signIn.email).toBe(email);
    }
  });

  it('parallel guesses cannot pass the limit: each attempt is counted before its password is checked', async () => {
    const email = 'parallel@example.test';
    const hash = await createUser(email);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(email, `guess ${i}`, freshAddress())));
    const checked = verifier.mock.calls.filter(([h]) => h === hash).length;
    expect(answers.filter((r) => r.errors?.[0]?.message === WRONG)).toHaveLength(LIMITS.account);
    expect(checked).toBe(LIMITS.account);
    expect(answers.filter((r) => retryAfter(r) !== undefined)).toHaveLength(12 - LIMITS.account);
  });
});

describe('sign-in limiting per client address', () => {
  it('failures on many accounts from one address block that address only', async () => {
    const from = freshAddress();
    const other = freshAddress();
    const email = 'spray-target@example.test';
    await createUser(email);
    // One failure per account: no account reaches its limit; the address does.
    for (let i = 0; i < LIMITS.address; i++) {
      expect((await signIn(`spray-${i}@example.test`, 'wrong', from)).errors![0]!.message).toBe(WRONG);
    }
    const blocked = await signIn(email, PASSWORD, from);
    expect(retryAfter(blocked)).toBeGreaterThan(LIMITS.block - 5);
    expect(blocked.data?.signIn ?? null).toBeNull();
    // Another address is not affected, and the account itself is not blocked.
    const ok = await signIn(email, PASSWORD, other);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.signIn.email).toBe(email);
  });
});

describe('password length and timing', () => {
  it('every path checks exactly one argon2 hash; an over-long password is never hashed', async () => {
    const email = 'timing@example.test';
    const hash = await createUser(email);
    const passwordless = 'token-only@example.test';
    expect(await createUser(passwordless, null)).toBeNull();
    const checks = async (e: string, p: string) => {
      const before = verifier.mock.calls.length;
      const r = await signIn(e, p, freshAddress());
      expect(shape(r)).toEqual({ code: 'UNAUTHENTICATED', message: WRONG, waits: false, data: null });
      return verifier.mock.calls.slice(before);
    };
    const known = await checks(email, 'wrong password');
    expect(known).toEqual([[hash, 'wrong password']]);

    const unknown = await checks('no-such-user@example.test', 'wrong password');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]![0]).toMatch(/^\$argon2id\$/);
    expect(unknown[0]![0]).not.toBe(hash);

    const noPassword = await checks(passwordless, 'wrong password');
    expect(noPassword).toHaveLength(1);
    expect(noPassword[0]![0]).toBe(unknown[0]![0]); // the same dummy hash

    for (const length of [PASSWORD_LIMITS.max + 1, 100_000]) {
      const tooLong = await checks(email, PASSWORD.padEnd(length, 'x'));
      expect(tooLong).toHaveLength(1);
      expect(tooLong[0]![0]).toBe(unknown[0]![0]);
      expect(tooLong[0]![1].length).toBeLessThanOrEqual(PASSWORD_LIMITS.max);
    }
  });

  it('a disabled person with the right password: one argon2 check, of the dummy hash, answered as a wrong password', async () => {
    const email = 'disabled@example.test';
    const hash = await createUser(email);
    const [{ id }] = await t.sql<{ id: string }>('select id from app_user where email = $1', [email]);
    const disabled = await t.gql('mutation($id: ID!) { disableUser(userId: $id) { disabledAt } }', { id: Buffer.from(`User:${id}`).toString('base64') });
    expect(disabled.errors).toBeUndefined();
    const before = verifier.mock.calls.length;
    const r = await signIn(email, PASSWORD, freshAddress());
    expect(shape(r)).toEqual({ code: 'UNAUTHENTICATED', message: WRONG, waits: false, data: null });
    const checked = verifier.mock.calls.slice(before);
    expect(checked).toHaveLength(1);
    expect(checked[0]![0]).toMatch(/^\$argon2id\$/);
    expect(checked[0]![0]).not.toBe(hash);
    expect(r.setCookie).toBeUndefined();
  });

  it('createUser refuses a password over the same cap', async () => {
    const r = await t.gql(OPS.createUser, { email: 'long@example.test', name: 'Long', role: 'MEMBER', password: 'x'.repeat(PASSWORD_LIMITS.max + 1) });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toBe(`password must be ${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters`);
    expect(await t.sql(`select count(*)::int as n from app_user where email = 'long@example.test'`)).toEqual([{ n: 0 }]);
  });
});

describe('the counts live in Postgres', () => {
  it('a block made on one instance holds on another instance of the same database; no email is stored', async () => {
    const email = 'shared@example.test';
    await createUser(email);
    const b = await startTestInstance({ worker: false, env, databaseUrl: t.databaseUrl, adminToken: t.adminToken });
    try {
      for (let i = 0; i < LIMITS.account; i++) expect((await signIn(email, 'wrong', freshAddress())).errors![0]!.message).toBe(WRONG);
      const onB = await signIn(email, PASSWORD, freshAddress(), b.instance.port);
      expect(retryAfter(onB)).toBeGreaterThan(LIMITS.block - 5);
      expect(onB.data?.signIn ?? null).toBeNull();
    } finally {
      await b.stop();
    }
    const keys = await t.sql<{ key: string }>('select key from sign_in_limit');
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((k) => k.key.includes('@'))).toEqual([]);
  });
});
