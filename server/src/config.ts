import type { KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { parseAuditSigningKey } from './audit/signing.js';
import { APPROVAL_LIMITS } from './limits.js';
import { parseAgentNetworks, type NetworkRule } from './net/policy.js';

// Every setting, read once from the environment, typed. Nothing else reads process.env.
export interface Config {
  port: number;
  host: string;
  /** External Postgres; when unset an embedded Postgres runs under dataDir. */
  databaseUrl: string | null;
  /**
   * External Postgres only: the owner role that runs the migrations (and grants the DATABASE_URL
   * role its rights); DATABASE_URL is then the least-privileged app role. Unset: DATABASE_URL
   * migrates too (see deploy/postgres/roles.sql).
   */
  migrationDatabaseUrl: string | null;
  dataDir: string;
  embeddedPgPort: number;
  publicUrl: string;
  defaultApprovalTtlSeconds: number;
  adminToken: string | null;
  adminEmail: string;
  /** Delivery attempts before a delivery is FAILED (each retry backs off exponentially). */
  deliveryMaxAttempts: number;
  /** Seconds between audit checkpoints. */
  checkpointIntervalSeconds: number;
  /**
   * TASKBAY_AGENT_NETWORKS: ordered `allow|deny <CIDR, IP, host, *.suffix or *>` rules, first match
   * wins, judged before the defaults (net/policy.ts). Default: none.
   */
  agentNetworks: NetworkRule[];
  /**
   * Ed25519 key signing audit events and checkpoints (TASKBAY_AUDIT_KEY: PEM PKCS#8, or base64 of
   * a 32-byte seed). Unset: <dataDir>/audit-signing-key.pem, created 0600 on first start (also
   * with DATABASE_URL). Instances sharing a database must share the key.
   */
  auditSigningKey: KeyObject | null;
  /** Console sign-in limiting (auth/sign-in-limiter.ts). */
  signIn: SignInLimits;
}

/**
 * Failed sign-ins are counted per account (the normalised email, known or not) and per client
 * address within a window; reaching a limit blocks that key, for longer each time (doubling from
 * blockSeconds up to blockMaxSeconds; the count of blocks is remembered for a day).
 */
export interface SignInLimits {
  /** TASKBAY_SIGNIN_ACCOUNT_FAILURES (5): failures per account per window before a block. */
  accountFailures: number;
  /** TASKBAY_SIGNIN_ADDRESS_FAILURES (30): failures per client address per window before a block. */
  addressFailures: number;
  /** TASKBAY_SIGNIN_WINDOW (900 s): the window failures are counted in. */
  windowSeconds: number;
  /** TASKBAY_SIGNIN_BLOCK (300 s): the first block; each further block within a day doubles. */
  blockSeconds: number;
  /** TASKBAY_SIGNIN_BLOCK_MAX (3600 s): the longest block. */
  blockMaxSeconds: number;
}

function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int('PORT', env.PORT, 4000, 0, 65535);
  if (env.TASKBAY_MIGRATION_DATABASE_URL && !env.DATABASE_URL) {
    throw new Error('TASKBAY_MIGRATION_DATABASE_URL needs DATABASE_URL (the embedded Postgres sets up its own roles)');
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl: env.DATABASE_URL || null,
    migrationDatabaseUrl: env.TASKBAY_MIGRATION_DATABASE_URL || null,
    dataDir: resolve(env.TASKBAY_DATA_DIR || '.taskbay'),
    embeddedPgPort: int('TASKBAY_PG_PORT', env.TASKBAY_PG_PORT, 54329, 1, 65535),
    publicUrl: (env.TASKBAY_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    defaultApprovalTtlSeconds: int(
      'TASKBAY_DEFAULT_APPROVAL_TTL',
      env.TASKBAY_DEFAULT_APPROVAL_TTL,
      APPROVAL_LIMITS.defaultTtlSeconds,
      APPROVAL_LIMITS.expiresMinSeconds,
      APPROVAL_LIMITS.expiresMaxSeconds,
    ),
    adminToken: env.TASKBAY_ADMIN_TOKEN || null,
    adminEmail: env.TASKBAY_ADMIN_EMAIL || 'admin@localhost',
    deliveryMaxAttempts: int('TASKBAY_DELIVERY_MAX_ATTEMPTS', env.TASKBAY_DELIVERY_MAX_ATTEMPTS, 8, 1, 25),
    checkpointIntervalSeconds: int('TASKBAY_CHECKPOINT_INTERVAL', env.TASKBAY_CHECKPOINT_INTERVAL, 60, 1, 86400),
    agentNetworks: parseAgentNetworks(env.TASKBAY_AGENT_NETWORKS ?? ''),
    auditSigningKey: env.TASKBAY_AUDIT_KEY ? parseAuditSigningKey(env.TASKBAY_AUDIT_KEY) : null,
    signIn: signInLimits(env),
  };
}

function signInLimits(env: NodeJS.ProcessEnv): SignInLimits {
  const blockSeconds = int('TASKBAY_SIGNIN_BLOCK', env.TASKBAY_SIGNIN_BLOCK, 300, 1, 86400);
  return {
    accountFailures: int('TASKBAY_SIGNIN_ACCOUNT_FAILURES', env.TASKBAY_SIGNIN_ACCOUNT_FAILURES, 5, 1, 1000),
    addressFailures: int('TASKBAY_SIGNIN_ADDRESS_FAILURES', env.TASKBAY_SIGNIN_ADDRESS_FAILURES, 30, 1, 100_000),
    windowSeconds: int('TASKBAY_SIGNIN_WINDOW', env.TASKBAY_SIGNIN_WINDOW, 900, 1, 86400),
    blockSeconds,
    blockMaxSeconds: int('TASKBAY_SIGNIN_BLOCK_MAX', env.TASKBAY_SIGNIN_BLOCK_MAX, Math.max(3600, blockSeconds), blockSeconds, 7 * 86400),
  };
}
