import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import type { SignInLimits } from '../config.js';
import { DomainError } from '../errors.js';
import { addressKeyOf } from '../net/client-address.js';

// Console sign-in limiting (rate-limiter-flexible on Postgres, so every instance shares the
// counts). Failures are counted per account and per client address. An attempt is counted
// before its password is checked (an atomic upsert), so parallel guesses cannot slip past the
// limit; a success gives the count back. The attempt that uses up the last try and fails blocks
// its key for blockSeconds, doubling with every block of that key within a day, up to
// blockMaxSeconds. A blocked key is refused before any password is checked.
//
// The account key is a SHA-256 of the normalised email, whether or not a user has it, so the
// answers are the same for unknown emails and the table stores no typed emails.

/** Created by Migration20261201000700_sign_in_limit, in the shape RateLimiterPostgres expects. */
export const SIGN_IN_LIMIT_TABLE = 'sign_in_limit';
/** How long the number of blocks of a key (the backoff exponent) is remembered. */
const BACKOFF_MEMORY_SECONDS = 24 * 3600;

type Knex = ReturnType<ReturnType<EntityManager['getConnection']>['getKnex']>;

interface Counter {
  /** Failures (attempts in flight included) within the window; points + 1 while blocked. */
  failures: RateLimiterPostgres;
  /** Blocks of the key within BACKOFF_MEMORY_SECONDS. */
  blocks: RateLimiterPostgres;
}

/** An attempt that was let through: its keys and the counts after counting it. */
export interface SignInAttempt {
  accountKey: string;
  addressKey: string;
  account: RateLimiterRes;
  address: RateLimiterRes;
}

export function accountKeyOf(normalizedEmail: string): string {
  return createHash('sha256').update(normalizedEmail, 'utf8').digest('hex');
}

const waitSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function blocked(ms: number): DomainError {
  const seconds = waitSeconds(ms);
  // UNAUTHENTICATED: the contract has no rate-limit code, and the caller is, and stays, not
  // signed in; retryAfterSeconds tells a client how long to wait.
  return new DomainError('UNAUTHENTICATED', `too many failed sign-ins; try again in ${seconds} seconds`, { retryAfterSeconds: seconds });
}

export class SignInLimiter {
  private readonly account: Counter;
  private readonly address: Counter;

  constructor(
    knex: Knex,
    private readonly limits: SignInLimits,
  ) {
    // All four share one table; one of them deletes its expired rows every few minutes.
    const common = { storeClient: knex, storeType: 'knex', tableName: SIGN_IN_LIMIT_TABLE, tableCreated: true, clearExpiredByTimeout: false };
    const counter = (name: string, points: number, clearsExpired: boolean): Counter => ({
      failures: new RateLimiterPostgres({ ...common, keyPrefix: name, points, duration: limits.windowSeconds, clearExpiredByTimeout: clearsExpired }),
      blocks: new RateLimiterPostgres({ ...common, keyPrefix: `${name}_blocks`, points: 1_000_000, duration: BACKOFF_MEMORY_SECONDS }),
    });
    this.account = counter('signin_account', limits.accountFailures, true);
    this.address = counter('signin_address', limits.addressFailures, false);
  }

  /** Counts the attempt; throws UNAUTHENTICATED with retryAfterSeconds when either key is blocked. */
  async begin(normalizedEmail: string, clientAddress: string | null | undefined): Promise<SignInAttempt> {
    const accountKey = accountKeyOf(normalizedEmail);
    const addressKey = addressKeyOf(clientAddress);
    // A blocked key is refused without counting against the other one.
    const [a, b] = await Promise.all([this.account.failures.get(accountKey), this.address.failures.get(addressKey)]);
    const wait = Math.max(this.overBy(this.account, a), this.overBy(this.address, b));
    if (wait > 0) throw blocked(wait);
    const [account, address] = await Promise.all([this.account.failures.penalty(accountKey), this.address.failures.penalty(addressKey)]);
    // Parallel attempts that passed the check above together: those past the limit stop here.
    const raced = Math.max(this.overBy(this.account, account), this.overBy(this.address, address));
    if (raced > 0) throw blocked(raced);
    return { accountKey, addressKey, account, address };
  }

  /** A wrong password: the attempt that used up the last try blocks its key, longer each time. */
  async failed(attempt: SignInAttempt): Promise<void> {
    await Promise.all([
      this.blockIfSpent(this.account, attempt.accountKey, attempt.account),
      this.blockIfSpent(this.address, attempt.addressKey, attempt.address),
    ]);
  }

  /** The right password: the account starts afresh; the address gets this attempt back. */
  async succeeded(attempt: SignInAttempt): Promise<void> {
    await Promise.all([
      this.account.failures.delete(attempt.accountKey),
      this.account.blocks.delete(attempt.accountKey),
      this.address.failures.reward(attempt.addressKey),
    ]);
  }

  /** The block for the n-th block of a key within the backoff memory. */
  blockSecondsFor(n: number): number {
    return Math.min(this.limits.blockMaxSeconds, this.limits.blockSeconds * 2 ** Math.min(n - 1, 30));
  }

  /** Milliseconds to wait when the count is past the limit, else 0. */
  private overBy(counter: Counter, res: RateLimiterRes | null): number {
    return res && res.consumedPoints > counter.failures.points ? Math.max(res.msBeforeNext, 1) : 0;
  }

  private async blockIfSpent(counter: Counter, key: string, res: RateLimiterRes): Promise<void> {
    if (res.consumedPoints < counter.failures.points) return;
    const n = (await counter.blocks.penalty(key)).consumedPoints;
    await counter.failures.block(key, this.blockSecondsFor(n));
  }
}

// One limiter per database pool (that is, per instance), made on first use.
const limiters = new WeakMap<Knex, SignInLimiter>();

export function signInLimiterFor(em: EntityManager, limits: SignInLimits): SignInLimiter {
  const knex = em.getConnection().getKnex();
  let limiter = limiters.get(knex);
  if (!limiter) {
    limiter = new SignInLimiter(knex, limits);
    limiters.set(knex, limiter);
  }
  return limiter;
}
