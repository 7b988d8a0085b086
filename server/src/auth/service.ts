import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { advertises } from '../a2a/card.js';
import { SKILL_ROUTING_EXTENSION } from '../a2a/extensions.js';
import { agentKindSpec, CardSnapshot, Agent, type AgentRow } from '../agents/entities.js';
import { appendEvents, stream } from '../audit/module.js';
import { badInput, notFound } from '../errors.js';
import type { Access, Viewer } from '../access.js';
import { hashApiToken, hashPassword, newApiToken } from './credentials.js';
import { AgentGrant } from './agent-grant-entity.js';
import { ApiToken, Tenant, User, type Permission, type UserRole } from './entities.js';
import { claimEmail, isEmailTaken } from './email-claims.js';
import { codePointLength, PASSWORD_LIMITS, PEOPLE_LIMITS } from '../limits.js';
import { log } from '../log.js';
import { cachedViewer, viewerOf, type ViewerRow } from './viewer-cache.js';
import { sql } from '../db/sql.js';

// People: tenants, users, API tokens, grants, and the bootstrap admin.

export const DEFAULT_TENANT = 'default';
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * The token's user while the token lasts: not revoked, not expired, its person not disabled (one
 * statement; none while the instance's viewer cache holds it, and the cache keeps it no longer
 * than the token's expiry: auth/viewer-cache.ts).
 */
export function viewerForToken(em: EntityManager, token: string): Promise<Viewer | null> {
  const tokenHash = hashApiToken(token);
  return cachedViewer(em, `token:${tokenHash}`, async () => {
    const [row] = await sql<ViewerRow & { expires_at: Date | null }>(
      em,
      `select u.id, u.tenant_id, u.role, u.email, t.expires_at from api_token t join app_user u on u.id = t.user_id
       where t.token_hash = ? and t.revoked_at is null and u.disabled_at is null`,
      [tokenHash],
    );
    if (!row) return null;
    const expiresAt = row.expires_at ? new Date(row.expires_at) : undefined;
    return expiresAt && expiresAt.getTime() <= Date.now() ? null : { viewer: viewerOf(row), expiresAt };
  });
}

/**
 * A person of the admin's tenant. An email taken anywhere (this tenant or another) is refused
 * with one answer that names no one (auth/email-claims.ts).
 */
export async function createUser(em: EntityManager, access: Access, input: { email: string; name: string; password?: string | null; role: UserRole }) {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > PEOPLE_LIMITS.emailMax) throw badInput('email is not an email address');
  const name = input.name.trim();
  if (!name || codePointLength(name, PEOPLE_LIMITS.nameMax) > PEOPLE_LIMITS.nameMax) throw badInput(`name must be 1..${PEOPLE_LIMITS.nameMax} characters`);
  if (input.password != null && (input.password.length < PASSWORD_LIMITS.min || input.password.length > PASSWORD_LIMITS.max)) {
    throw badInput(`password must be ${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters`);
  }
  const tenantId = access.viewer.tenantId;
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  return claimEmail(em, tenantId, () =>
    em.transactional(async (tem) => {
      const user = tem.create(User, { id: randomUUID(), tenantId, email, name, role: input.role, passwordHash, createdAt: new Date() });
      await tem.flush();
      await appendEvents(tem, [
        {
          tenantId,
          stream: stream.tenant(tenantId),
          type: 'user.created',
          actor: { type: 'user', id: access.viewer.userId },
          data: { userId: user.id, email, role: input.role },
        },
      ]);
      return user;
    }),
  );
}

/**
 * A token for yourself, or (admins) for another user of the tenant, optionally expiring after
 * `expiresInSeconds` (PEOPLE_LIMITS). Shown once.
 */
export async function createApiToken(em: EntityManager, access: Access, input: { userId?: string | null; label: string; expiresInSeconds?: number | null }) {
  const userId = input.userId ?? access.viewer.userId;
  if (userId !== access.viewer.userId && !access.isAdmin) throw badInput('only admins create tokens for others');
  const user = await em.findOne(User, { id: userId, tenantId: access.viewer.tenantId });
  if (!user) throw notFound('user');
  if (user.disabledAt) throw badInput('this person is disabled: enable them first', { reason: 'DISABLED' });
  const label = input.label.trim();
  if (!label || codePointLength(label, PEOPLE_LIMITS.tokenLabelMax) > PEOPLE_LIMITS.tokenLabelMax)
    throw badInput(`label must be 1..${PEOPLE_LIMITS.tokenLabelMax} characters`);
  const ttl = input.expiresInSeconds;
  if (ttl != null && (!Number.isInteger(ttl) || ttl < PEOPLE_LIMITS.tokenExpiresMinSeconds || ttl > PEOPLE_LIMITS.tokenExpiresMaxSeconds)) {
    throw badInput(`expiresInSeconds must be ${PEOPLE_LIMITS.tokenExpiresMinSeconds} to ${PEOPLE_LIMITS.tokenExpiresMaxSeconds}`);
  }
  const token = newApiToken();
  const createdAt = new Date();
  const expiresAt = ttl != null ? new Date(createdAt.getTime() + ttl * 1000) : null;
  const row = await em.transactional(async (tem) => {
    // Counted under the person's row lock, so parallel creations cannot pass the limit together.
    await sql(tem, 'select id from app_user where id = ? for update', [userId]);
    if ((await tem.count(ApiToken, { userId, revokedAt: null })) >= PEOPLE_LIMITS.tokensPerPersonMax) {
      throw badInput(`a person holds at most ${PEOPLE_LIMITS.tokensPerPersonMax} tokens: revoke one first`, { reason: 'TOO_MANY_TOKENS' });
    }
    const created = tem.create(ApiToken, { id: randomUUID(), userId, label, tokenHash: hashApiToken(token), createdAt, expiresAt });
    await tem.flush();
    await appendEvents(tem, [
      {
        tenantId: user.tenantId,
        stream: stream.tenant(user.tenantId),
        type: 'token.created',
        actor: { type: 'user', id: access.viewer.userId },
        data: { tokenId: created.id, userId, label, expiresAt: expiresAt?.toISOString() ?? null },
      },
    ]);
    return created;
  });
  return { token, user, apiToken: row };
}

/**
 * Seed 003 "Skill routing": "Without this extension administrators can only grant whole-agent
 * access." A grant limited to a skill needs the agent's latest card (what negotiation reads) to
 * advertise the skill-routing extension and to list the skill.
 */
async function assertSkillGrantable(em: EntityManager, agent: AgentRow, skillId: string): Promise<void> {
  const noSkills = agentKindSpec(agent.kind).noSkills;
  if (noSkills) throw badInput(noSkills);
  const card = (await em.findOne(CardSnapshot, { agentId: agent.id }, { orderBy: { number: 'desc' } }))?.card ?? null;
  if (!card || !advertises(card, SKILL_ROUTING_EXTENSION)) {
    throw badInput(
      `"${agent.name}" does not advertise the skill-routing extension (${SKILL_ROUTING_EXTENSION}) in its latest card, so it cannot be held to one skill: grant the whole agent`,
      { reason: 'NO_SKILL_ROUTING' },
    );
  }
  if (!card.skills.some((s) => s.id === skillId)) {
    const listed = card.skills.map((s) => s.id).slice(0, 50);
    throw badInput(
      `the latest card of "${agent.name}" has no skill ${JSON.stringify(skillId.slice(0, 200))}; its skills: ${listed.length ? listed.join(', ') : 'none'}`,
      {
        reason: 'UNKNOWN_SKILL',
      },
    );
  }
}

export async function grantAgentAccess(
  em: EntityManager,
  access: Access,
  input: { userId: string; agentId: string; skillId?: string | null; permission: Permission },
) {
  const tenantId = access.viewer.tenantId;
  const user = await em.findOne(User, { id: input.userId, tenantId });
  if (!user) throw notFound('user');
  const agent = await em.findOne(Agent, { id: input.agentId, tenantId });
  if (!agent) throw notFound('agent');
  const skillId = input.skillId?.trim() || null;
  if (skillId) await assertSkillGrantable(em, agent, skillId);
  return em.transactional(async (tem) => {
    let grant = await tem.findOne(AgentGrant, { userId: user.id, agentId: agent.id, skillId });
    if (grant) grant.permission = input.permission;
    else {
      grant = tem.create(AgentGrant, {
        id: randomUUID(),
        tenantId,
        userId: user.id,
        agentId: agent.id,
        skillId,
        permission: input.permission,
        createdAt: new Date(),
      });
    }
    await tem.flush();
    await appendEvents(tem, [
      {
        tenantId,
        stream: stream.tenant(tenantId),
        type: 'grant.set',
        actor: { type: 'user', id: access.viewer.userId },
        data: { grantId: grant.id, userId: user.id, agentId: agent.id, skillId, permission: input.permission },
      },
    ]);
    return grant;
  });
}

/**
 * With TASKBAY_ADMIN_TOKEN: ensure an admin holding that token (unless it was revoked: then it
 * stays refused). Otherwise an empty database gets an admin. Either admin is made without a
 * password: `taskbay serve` shows a one-time sign-in link for them while they have none
 * (auth/sign-in-links.ts startupSignInLink). Returns the new admin's email, null when none was made.
 */
export async function bootstrapAdmin(em: EntityManager, opts: { adminToken: string | null; adminEmail: string }): Promise<{ email: string } | null> {
  return em.transactional(async (tem) => {
    // Two instances starting together must not both bootstrap.
    await tem.getConnection().execute('select pg_advisory_xact_lock(7007)', [], 'all', tem.getTransactionContext());
    let tenant = await tem.findOne(Tenant, { name: DEFAULT_TENANT });
    const empty = (await tem.count(User, {})) === 0;
    if (!opts.adminToken && !empty) return null;
    if (!tenant) {
      tenant = tem.create(Tenant, { id: randomUUID(), name: DEFAULT_TENANT, createdAt: new Date() });
      await tem.flush();
    }
    const email = opts.adminEmail.toLowerCase();
    let admin = await tem.findOne(User, { tenantId: tenant.id, email });
    if (admin && admin.role !== 'ADMIN') {
      throw new Error(`TASKBAY_ADMIN_EMAIL ${email} belongs to a member, not an admin; refusing to give it the admin token`);
    }
    let created = false;
    if (!admin) {
      created = true;
      admin = tem.create(User, {
        id: randomUUID(),
        tenantId: tenant.id,
        email,
        name: 'Administrator',
        role: 'ADMIN',
        passwordHash: null,
        createdAt: new Date(),
      });
      try {
        await tem.flush();
      } catch (e) {
        // The operator's own setting: saying whose email it is tells them nothing new.
        if (isEmailTaken(e)) throw new Error(`TASKBAY_ADMIN_EMAIL ${email} is the email of a person of another tenant; choose another`);
        throw e;
      }
      await appendEvents(tem, [
        {
          tenantId: tenant.id,
          stream: stream.tenant(tenant.id),
          type: 'user.created',
          actor: { type: 'system', id: null },
          data: { userId: admin.id, email, role: 'ADMIN', bootstrap: true },
        },
      ]);
    }
    if (opts.adminToken) {
      const tokenHash = hashApiToken(opts.adminToken);
      const existing = await tem.findOne(ApiToken, { tokenHash });
      if (!existing) {
        tem.create(ApiToken, { id: randomUUID(), userId: admin.id, label: 'TASKBAY_ADMIN_TOKEN', tokenHash, createdAt: new Date() });
        await tem.flush();
      } else if (existing.revokedAt) {
        // Revoked (a leak, say): a restart with the same setting must not bring it back.
        log.warn('TASKBAY_ADMIN_TOKEN has been revoked and stays refused: set a new one');
      }
    }
    return created ? { email } : null;
  });
}

/**
 * Logs, at start, how many people cannot sign in because an earlier person has their email
 * (rows Migration20261204002000_email_one_tenant marked), so an operator hears of them.
 */
export async function warnOfDuplicateEmails(em: EntityManager): Promise<void> {
  const [row] = await sql<{ n: number }>(em, 'select count(*)::int as n from app_user where duplicate_email');
  if (row && row.n > 0) {
    log.warn(
      { people: row.n },
      'people share an email with an earlier person and cannot sign in with a password until an operator resolves it (docs/choices.md); they are: select id, tenant_id, email from app_user where duplicate_email',
    );
  }
}
