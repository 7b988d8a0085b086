import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream, type AuditEventInput, type AuditPayload } from '../audit/module.js';
import { sql } from '../db/sql.js';
import { DomainError, badInput, notFound } from '../errors.js';
import type { Access } from '../access.js';
import { ApiToken, User, WebSession, type ApiTokenRow, type UserRole, type UserRow } from './entities.js';

// The lifecycle of API tokens and people: list and revoke tokens, disable and enable a
// person, change a role. Each change is one transaction that also appends its event to the
// tenant stream. Each updates api_token or app_user, whose trigger notifies taskbay_auth
// (Migration20261202000310_auth_changes), so every instance drops the person's cached viewers
// before answering its next request (auth/viewer-cache.ts); expiry needs no notification (the
// cache keeps a token no longer than its expiry).
//
// Who: a person lists and revokes their own tokens; an admin any token of the tenant, and
// changes people. Another tenant's token or person is NOT_FOUND, as is another person's token to
// a member (they cannot list it either).

/** The tokens of one person, or (admins, `userId` absent) of the whole tenant; revoked ones are not listed. */
export async function listApiTokens(em: EntityManager, access: Access, userId: string | null): Promise<ApiTokenRow[]> {
  const tenantId = access.viewer.tenantId;
  if (!access.isAdmin && userId !== null && userId !== access.viewer.userId) {
    throw new DomainError('FORBIDDEN', "only admins list other people's tokens");
  }
  const owner = access.isAdmin ? userId : access.viewer.userId;
  if (owner && !(await em.count(User, { id: owner, tenantId }))) throw notFound('user');
  const rows = await sql<{ id: string }>(
    em,
    `select t.id from api_token t join app_user u on u.id = t.user_id
     where u.tenant_id = ? and t.revoked_at is null ${owner ? 'and t.user_id = ?' : ''} order by t.created_at, t.id`,
    owner ? [tenantId, owner] : [tenantId],
  );
  return rows.length ? em.find(ApiToken, { id: { $in: rows.map((r) => r.id) } }, { orderBy: { createdAt: 'asc', id: 'asc' } }) : [];
}

/** A token the viewer may see: their own, or (admins) any of the tenant; null otherwise. */
export async function visibleApiToken(em: EntityManager, access: Access, tokenId: string): Promise<ApiTokenRow | null> {
  const token = await em.findOne(ApiToken, { id: tokenId });
  if (!token) return null;
  if (token.userId === access.viewer.userId) return token;
  if (!access.isAdmin) return null;
  return (await em.count(User, { id: token.userId, tenantId: access.viewer.tenantId })) ? token : null;
}

/** Revokes a token at once and for good (the row stays, marked). Revoking a revoked token changes nothing. */
export async function revokeApiToken(em: EntityManager, access: Access, tokenId: string): Promise<ApiTokenRow> {
  return em.transactional(async (tem) => {
    const token = await visibleApiToken(tem, access, tokenId);
    if (!token) throw notFound('token');
    if (token.revokedAt) return token;
    token.revokedAt = new Date();
    await tem.flush();
    await appendEvents(tem, [
      {
        tenantId: access.viewer.tenantId,
        stream: stream.tenant(access.viewer.tenantId),
        type: 'token.revoked',
        actor: { type: 'user', id: access.viewer.userId },
        data: { tokenId: token.id, userId: token.userId, label: token.label },
      },
    ]);
    return token;
  });
}

/**
 * Opens a change to the tenant's people: one at a time per tenant (the tenant row's lock), so two
 * admins removing each other at once cannot leave the tenant with none; the acting admin is
 * checked again under the lock (they may have lost their role meanwhile).
 */
async function changingPeople(tem: EntityManager, access: Access, userId: string): Promise<UserRow> {
  const tenantId = access.viewer.tenantId;
  await sql(tem, 'select id from tenant where id = ? for update', [tenantId]);
  const [actor] = await sql<{ id: string }>(tem, `select id from app_user where id = ? and role = 'ADMIN' and disabled_at is null`, [access.viewer.userId]);
  if (!actor) throw new DomainError('FORBIDDEN', 'you are not allowed to do this');
  const user = await tem.findOne(User, { id: userId, tenantId });
  if (!user) throw notFound('user');
  return user;
}

/** Whether `user` is the tenant's only enabled admin. */
async function isLastAdmin(tem: EntityManager, user: UserRow): Promise<boolean> {
  if (user.role !== 'ADMIN' || user.disabledAt) return false;
  const [row] = await sql<{ n: number }>(
    tem,
    `select count(*)::int as n from app_user where tenant_id = ? and role = 'ADMIN' and disabled_at is null and id <> ?`,
    [user.tenantId, user.id],
  );
  return row!.n === 0;
}

const lastAdmin = (what: string) => badInput(`${what} would leave the tenant without an admin: make another person an admin first`, { reason: 'LAST_ADMIN' });

function personEvent<T extends 'user.disabled' | 'user.enabled' | 'user.role_changed'>(access: Access, type: T, data: AuditPayload<T>): AuditEventInput<T> {
  const tenantId = access.viewer.tenantId;
  return { tenantId, stream: stream.tenant(tenantId), type, actor: { type: 'user' as const, id: access.viewer.userId }, data };
}

/**
 * Disables a person: their tokens and sessions are refused from their next request on, on every
 * instance, and sign-in answers as for a wrong password. Their sessions end (enabling them again
 * does not bring those back); their tokens stay, refused while they are disabled.
 */
export async function disableUser(em: EntityManager, access: Access, userId: string): Promise<UserRow> {
  if (access.isViewer(userId)) throw badInput('you cannot disable yourself', { reason: 'SELF' });
  return em.transactional(async (tem) => {
    const user = await changingPeople(tem, access, userId);
    if (user.disabledAt) return user;
    if (await isLastAdmin(tem, user)) throw lastAdmin('disabling this person');
    user.disabledAt = new Date();
    await tem.flush();
    await tem.nativeDelete(WebSession, { userId: user.id });
    await appendEvents(tem, [personEvent(access, 'user.disabled', { userId: user.id, email: user.email })]);
    return user;
  });
}

/** Enables a disabled person again: their tokens (not revoked, not expired) work again; sessions need a new sign-in. */
export async function enableUser(em: EntityManager, access: Access, userId: string): Promise<UserRow> {
  return em.transactional(async (tem) => {
    const user = await changingPeople(tem, access, userId);
    if (!user.disabledAt) return user;
    user.disabledAt = null;
    await tem.flush();
    await appendEvents(tem, [personEvent(access, 'user.enabled', { userId: user.id, email: user.email })]);
    return user;
  });
}

/**
 * Changes a person's role. The tenant keeps at least one enabled admin. The person named by
 * TASKBAY_ADMIN_EMAIL while TASKBAY_ADMIN_TOKEN is set stays an admin: the next start would
 * refuse to give a member the admin token (auth/service.ts bootstrapAdmin), so it is changed in
 * the deployment, not here.
 */
export async function setUserRole(
  em: EntityManager,
  access: Access,
  input: { userId: string; role: UserRole },
  opts: { bootstrapAdminEmail: string | null },
): Promise<UserRow> {
  return em.transactional(async (tem) => {
    const user = await changingPeople(tem, access, input.userId);
    if (user.role === input.role) return user;
    if (await isLastAdmin(tem, user)) throw lastAdmin('this change');
    if (opts.bootstrapAdminEmail && user.email === opts.bootstrapAdminEmail.toLowerCase()) {
      throw badInput('this is the admin of TASKBAY_ADMIN_EMAIL, who holds TASKBAY_ADMIN_TOKEN: change those settings instead', {
        reason: 'BOOTSTRAP_ADMIN',
      });
    }
    const from = user.role;
    user.role = input.role;
    await tem.flush();
    await appendEvents(tem, [personEvent(access, 'user.role_changed', { userId: user.id, email: user.email, from, to: input.role })]);
    return user;
  });
}
