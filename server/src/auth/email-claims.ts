import type { EntityManager } from '@mikro-orm/postgresql';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { violatedConstraint } from '../db/constraint.js';
import { DomainError, badInput } from '../errors.js';
import { PEOPLE_LIMITS } from '../limits.js';
import { SIGN_IN_LIMIT_TABLE } from './sign-in-limiter.js';

// An email belongs to one person across all tenants (Migration20261204002000_email_one_tenant):
// sign-in finds the person by email alone, so another tenant's admin must not be able to add a
// second person with it (sign-in would then refuse the first person for good: docs/choices.md
// "Issue 22: tenants and the person lifecycle").
//
// The refusal must not tell an admin more about other tenants than the rule itself implies. So
// there is one answer, whether the email is taken in the admin's own tenant or in another, and it
// names neither the tenant nor the person; it comes from the unique index (one statement, the
// same path either way); and refusals are counted per tenant: past PEOPLE_LIMITS a tenant's
// createUser is refused before any email is tried, so asking "does this address exist somewhere"
// stays a trickle, never a scan. The counts share the sign-in limiter's table (every instance
// sees them).

/** The unique constraints an email can hit: the one across tenants, and the older one per tenant. */
const EMAIL_CONSTRAINTS = new Set(['app_user_email_one_tenant', 'app_user_tenant_id_email_key']);

export function isEmailTaken(e: unknown): boolean {
  return EMAIL_CONSTRAINTS.has(violatedConstraint(e) ?? '');
}

export const emailUnavailable = () =>
  badInput('this email cannot be used: an email belongs to one person only, and this one is taken', { reason: 'EMAIL_UNAVAILABLE' });

type Knex = ReturnType<ReturnType<EntityManager['getConnection']>['getKnex']>;
const limiters = new WeakMap<Knex, RateLimiterPostgres>();

function limiterFor(em: EntityManager): RateLimiterPostgres {
  const knex = em.getConnection().getKnex();
  let limiter = limiters.get(knex);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: knex,
      storeType: 'knex',
      tableName: SIGN_IN_LIMIT_TABLE,
      tableCreated: true,
      // The sign-in limiter deletes the table's expired rows.
      clearExpiredByTimeout: false,
      keyPrefix: 'user_email_unavailable',
      points: PEOPLE_LIMITS.unavailableEmailsPerTenant,
      duration: PEOPLE_LIMITS.unavailableEmailsWindowSeconds,
    });
    limiters.set(knex, limiter);
  }
  return limiter;
}

/**
 * Runs `create` (which inserts the person) as one attempt of the tenant's: counted before the
 * email is tried, so parallel attempts cannot slip past the limit; given back unless the email
 * was refused.
 */
export async function claimEmail<T>(em: EntityManager, tenantId: string, create: () => Promise<T>): Promise<T> {
  const limiter = limiterFor(em);
  const counted = await limiter.penalty(tenantId);
  if (counted.consumedPoints > PEOPLE_LIMITS.unavailableEmailsPerTenant) {
    await limiter.reward(tenantId);
    const seconds = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
    throw new DomainError('BAD_USER_INPUT', `too many refused emails in this tenant; try again in ${seconds} seconds`, {
      reason: 'RATE_LIMITED',
      retryAfterSeconds: seconds,
    });
  }
  let refused = false;
  try {
    return await create();
  } catch (e) {
    if (!isEmailTaken(e)) throw e;
    refused = true;
    throw emailUnavailable();
  } finally {
    if (!refused) await limiter.reward(tenantId);
  }
}
