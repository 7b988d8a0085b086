import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream } from '../audit/module.js';
import { DomainError } from '../errors.js';
import type { Viewer } from '../access.js';
import type { SignInLimits } from '../config.js';
import { hashApiToken, hashPassword, verifyPassword } from './credentials.js';
import { PASSWORD_LIMITS, PEOPLE_LIMITS } from '../limits.js';
import { User, WebSession, type UserRow } from './entities.js';
import { cachedViewer, viewerOf, type ViewerRow } from './viewer-cache.js';
import { sql } from '../db/sql.js';
import { signInLimiterFor } from './sign-in-limiter.js';
import { SESSION_TTL_SECONDS } from '../http/session-cookie.js';

// Browser sessions of the reviewer console: email + password sign-in gives a random 256-bit
// session secret in an HTTP-only, SameSite=Lax cookie. Only its SHA-256 is stored (web_session.id),
// so a copy of the table does not sign anyone in. CSRF is Yoga's header check (app.ts).

const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
/** The session's user while the session lasts and the person is not disabled (one statement; none while cached: auth/viewer-cache.ts). */
export function viewerForSession(em: EntityManager, secret: string): Promise<Viewer | null> {
  const id = hashSecret(secret);
  return cachedViewer(em, `session:${id}`, async () => {
    const [row] = await sql<ViewerRow & { expires_at: Date }>(
      em,
      `select u.id, u.tenant_id, u.role, u.email, s.expires_at from web_session s join app_user u on u.id = s.user_id where s.id = ? and u.disabled_at is null`,
      [id],
    );
    if (!row) return null;
    const expiresAt = new Date(row.expires_at);
    return expiresAt.getTime() <= Date.now() ? null : { viewer: viewerOf(row), expiresAt };
  });
}

/** When an API token or a session ends on its own (null: a token without expiry, or none found). For live connections (graphql/credential-watch.ts). */
export async function credentialEnds(em: EntityManager, credential: { token: string | null; session: string | null }): Promise<Date | null> {
  const [row] = credential.token
    ? await sql<{ expires_at: Date | null }>(em, 'select expires_at from api_token where token_hash = ?', [hashApiToken(credential.token)])
    : credential.session
      ? await sql<{ expires_at: Date | null }>(em, 'select expires_at from web_session where id = ?', [hashSecret(credential.session)])
      : [];
  return row?.expires_at ? new Date(row.expires_at) : null;
}

// A fixed hash to verify against when there is no user's hash to check, so timing does not tell
// which emails exist (argon2id of a random string, computed once).
let dummyHashOnce: Promise<string> | null = null;
function dummy(): Promise<string> {
  dummyHashOnce ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHashOnce;
}

/**
 * Checks the password and opens a session; returns the secret for the cookie. Limited per
 * account and per client address (auth/sign-in-limiter.ts): a blocked sign-in is refused before
 * the password is checked. Every other path verifies exactly one argon2 hash: the user's, or
 * the dummy for an unknown email, a disabled person, a user without a password, or an over-long
 * password (checked as the empty string, so its length costs nothing).
 */
export async function signIn(
  em: EntityManager,
  limits: SignInLimits,
  input: { email: string; password: string; clientAddress?: string | null },
): Promise<{ secret: string; user: UserRow }> {
  const normalized = input.email.trim().toLowerCase();
  const limiter = signInLimiterFor(em, limits);
  const attempt = await limiter.begin(normalized, input.clientAddress);
  const tooLong = input.password.length > PASSWORD_LIMITS.max;
  // Awaited on every path, so the first sign-in of a process (which computes it) tells nothing either.
  const dummyHash = await dummy();
  // An email names one person across tenants (the unique index app_user_email_one_tenant; a row
  // marked duplicate_email lost it to an earlier one). A disabled person is answered like an
  // unknown email: the dummy hash is checked, the answer is a wrong password.
  const rows =
    normalized.length <= PEOPLE_LIMITS.emailMax
      ? await sql<Record<string, unknown>>(em, 'select * from app_user where lower(email) = ? and not duplicate_email', [normalized])
      : [];
  const found = rows.length === 1 ? em.map(User, rows[0]!) : null;
  const user = found && !found.disabledAt ? found : null;
  const checkedHash = user?.passwordHash && !tooLong ? user.passwordHash : dummyHash;
  const matches = await verifyPassword(checkedHash, tooLong ? '' : input.password);
  if (!user || !matches || checkedHash !== user.passwordHash) {
    await limiter.failed(attempt);
    throw new DomainError('UNAUTHENTICATED', 'email or password is wrong');
  }
  await limiter.succeeded(attempt);
  const secret = await em.transactional((tem) => openSession(tem, user));
  return { secret, user };
}

/** A new console session of the person, in the caller's transaction; returns the secret for the cookie. */
export async function openSession(tem: EntityManager, user: UserRow): Promise<string> {
  const secret = randomBytes(32).toString('base64url');
  tem.create(WebSession, {
    id: hashSecret(secret),
    userId: user.id,
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + SESSION_TTL_SECONDS * 1000),
  });
  await tem.flush();
  await appendEvents(tem, [
    {
      tenantId: user.tenantId,
      stream: stream.tenant(user.tenantId),
      type: 'session.created',
      actor: { type: 'user', id: user.id },
      data: { userId: user.id },
    },
  ]);
  return secret;
}

export async function signOut(em: EntityManager, secret: string | null): Promise<void> {
  if (!secret) return;
  await em.nativeDelete(WebSession, { id: hashSecret(secret) });
}

/** What app.ts adds to the GraphQL context of an HTTP request. */
export interface SessionContext {
  /** The session secret from the request's cookie, when there is one. */
  sessionSecret?: string | null;
  /** Whether cookies get the Secure attribute (TASKBAY_PUBLIC_URL is https). */
  cookieSecure?: boolean;
  /** The peer address of the HTTP request's socket (sign-in limiting); absent in-process. */
  clientAddress?: string | null;
}
