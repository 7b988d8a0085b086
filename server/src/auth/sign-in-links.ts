import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream } from '../audit/module.js';
import type { Access } from '../access.js';
import { sql } from '../db/sql.js';
import { DomainError, badInput, notFound } from '../errors.js';
import { PASSWORD_LIMITS, SIGN_IN_LINK_LIMITS } from '../limits.js';
import { hashPassword } from './credentials.js';
import { SignInLink, User, WebSession, type UserRow } from './entities.js';
import { openSession } from './session.js';

// One-time sign-in links: the way in of a person who has no password (the admin holding
// TASKBAY_ADMIN_TOKEN, someone an admin added without one), and a password reset. The link opens
// the console's "choose a password" page; choosing one sets it, ends the person's other sessions,
// voids their other links and signs them in. The secret (256 bits) is in the URL's fragment, so
// it reaches neither the server's request lines nor a Referer; only its SHA-256 is stored.
// Made by an admin (GraphQL createSignInLink), or by `taskbay serve` at start-up for the admin of
// TASKBAY_ADMIN_EMAIL while they have no password (main.ts shows it).

/** The console's page a link opens (web/src/pages/SetPassword.tsx). */
export const SIGN_IN_LINK_PATH = '/set-password';

const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
const linkUrl = (baseUrl: string, secret: string) => `${baseUrl.replace(/\/+$/, '')}${SIGN_IN_LINK_PATH}#${secret}`;

export interface IssuedSignInLink {
  url: string;
  expiresAt: Date;
  user: UserRow;
}

/** Why a person cannot be given a link (null: they can). */
function unusable(user: UserRow): string | null {
  if (user.disabledAt) return 'this person is disabled: enable them first';
  // Sign-in finds a person by email; this one lost theirs to an earlier person (docs/choices.md).
  if (user.duplicateEmail) return 'this person shares their email with an earlier person and cannot sign in until an operator resolves it';
  return null;
}

/**
 * A new link for `user`, in the caller's transaction. Their expired links go; beyond
 * livePerPersonMax unexpired ones, the oldest go too (serialised on the person's row).
 */
async function issue(tem: EntityManager, user: UserRow, opts: { baseUrl: string; createdById: string | null; ttlSeconds: number }): Promise<IssuedSignInLink> {
  await sql(tem, 'select id from app_user where id = ? for update', [user.id]);
  await sql(tem, 'delete from sign_in_link where user_id = ? and expires_at <= now()', [user.id]);
  await sql(
    tem,
    `delete from sign_in_link where id in (
       select id from sign_in_link where user_id = ? order by created_at desc, id offset ?)`,
    [user.id, SIGN_IN_LINK_LIMITS.livePerPersonMax - 1],
  );
  const secret = randomBytes(32).toString('base64url');
  const createdAt = new Date();
  const expiresAt = new Date(createdAt.getTime() + opts.ttlSeconds * 1000);
  tem.create(SignInLink, { id: hashSecret(secret), userId: user.id, createdById: opts.createdById, createdAt, expiresAt });
  await tem.flush();
  await appendEvents(tem, [
    {
      tenantId: user.tenantId,
      stream: stream.tenant(user.tenantId),
      type: 'sign_in_link.created',
      actor: opts.createdById ? { type: 'user', id: opts.createdById } : { type: 'system', id: null },
      data: { userId: user.id, email: user.email, expiresAt: expiresAt.toISOString(), ...(opts.createdById ? {} : { startup: true as const }) },
    },
  ]);
  return { url: linkUrl(opts.baseUrl, secret), expiresAt, user };
}

/** An admin's link for a person of their tenant (themselves included), valid for ttlSeconds. */
export async function createSignInLink(em: EntityManager, access: Access, userId: string, baseUrl: string): Promise<IssuedSignInLink> {
  if (!access.isAdmin) throw new DomainError('FORBIDDEN', 'you are not allowed to do this');
  return em.transactional(async (tem) => {
    const user = await tem.findOne(User, { id: userId, tenantId: access.viewer.tenantId });
    if (!user) throw notFound('user');
    const why = unusable(user);
    if (why) throw badInput(why, { reason: user.disabledAt ? 'DISABLED' : 'DUPLICATE_EMAIL' });
    return issue(tem, user, { baseUrl, createdById: access.viewer.userId, ttlSeconds: SIGN_IN_LINK_LIMITS.ttlSeconds });
  });
}

/**
 * At start-up: a link for the admin of TASKBAY_ADMIN_EMAIL when they cannot sign in otherwise (an
 * enabled admin without a password: the admin of TASKBAY_ADMIN_TOKEN, or the first admin of an
 * empty database); null for anyone else. Each start makes a new one; earlier ones stay valid
 * until they expire, so replicas starting together each show one that works.
 */
export async function startupSignInLink(em: EntityManager, opts: { adminEmail: string; baseUrl: string }): Promise<IssuedSignInLink | null> {
  return em.transactional(async (tem) => {
    const user = await tem.findOne(User, { email: opts.adminEmail.toLowerCase(), duplicateEmail: false });
    if (user?.role !== 'ADMIN' || user.passwordHash || unusable(user)) return null;
    return issue(tem, user, { baseUrl: opts.baseUrl, createdById: null, ttlSeconds: SIGN_IN_LINK_LIMITS.startupTtlSeconds });
  });
}

/** Longer than any secret made here (43 characters): not even hashed. */
const SECRET_MAX = 100;
const NOT_VALID = 'this sign-in link cannot be used: it was used already, it expired, or its person cannot sign in. Ask an admin for a new one.';

/** The link's person while it can be used (for its page, before a password is chosen); null otherwise. */
export async function signInLinkPerson(em: EntityManager, secret: string): Promise<{ user: UserRow; expiresAt: Date } | null> {
  if (secret.length > SECRET_MAX) return null;
  const link = await em.findOne(SignInLink, { id: hashSecret(secret) });
  if (!link || link.expiresAt.getTime() <= Date.now()) return null;
  const user = await em.findOne(User, { id: link.userId });
  return user && !unusable(user) ? { user, expiresAt: link.expiresAt } : null;
}

/**
 * Uses a link: sets the person's password, removes all their links, ends their sessions (a reset
 * may follow a stolen one) and opens a new one, whose secret is returned for the cookie. A link
 * works once: two uses at once find one row to delete between them.
 */
export async function setPasswordWithLink(em: EntityManager, input: { secret: string; password: string }): Promise<{ session: string; user: UserRow }> {
  if (input.password.length < PASSWORD_LIMITS.min || input.password.length > PASSWORD_LIMITS.max) {
    throw badInput(`password must be ${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters`);
  }
  // Checked before the (slow) hash, so a wrong secret costs one indexed read.
  if (!(await signInLinkPerson(em, input.secret))) throw new DomainError('UNAUTHENTICATED', NOT_VALID);
  const passwordHash = await hashPassword(input.password);
  return em.transactional(async (tem) => {
    const [used] = await sql<{ user_id: string }>(tem, 'delete from sign_in_link where id = ? and expires_at > now() returning user_id', [
      hashSecret(input.secret),
    ]);
    const user = used ? await tem.findOne(User, { id: used.user_id }) : null;
    if (!user || unusable(user)) throw new DomainError('UNAUTHENTICATED', NOT_VALID);
    user.passwordHash = passwordHash;
    await tem.flush();
    await tem.nativeDelete(SignInLink, { userId: user.id });
    await tem.nativeDelete(WebSession, { userId: user.id });
    await appendEvents(tem, [
      {
        tenantId: user.tenantId,
        stream: stream.tenant(user.tenantId),
        type: 'user.password_set',
        actor: { type: 'user', id: user.id },
        data: { userId: user.id, email: user.email, via: 'sign_in_link' },
      },
    ]);
    return { session: await openSession(tem, user), user };
  });
}
