import type { KeyObject } from 'node:crypto';
import { join, resolve } from 'node:path';
import { parsePublishedKeys } from './approval-signing/keys.js';
import { parseAuditSigningKey } from './audit/signing.js';
import { parseEd25519PrivateKey } from './lib/ed25519-keys.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormatSetting, type LogLevel } from './log.js';
import { APPROVAL_LIMITS, KIB } from './limits.js';
import { parseAgentNetworks, type NetworkRule } from './net/policy.js';
import { parseDnsServers } from './net/agent-network.js';

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
  /**
   * TASKBAY_DELIVERY_FALLBACK_DELAY (5 s): the deciding instance sends an approved delivery right
   * after the decision commits; its job, added in the decision's transaction, runs this much later
   * in case that send never happened (the instance stopped in between).
   */
  deliveryFallbackDelaySeconds: number;
  /** Outgoing webhooks (webhooks/): attempts per message before it is FAILED. */
  webhookMaxAttempts: number;
  /** Seconds before the first webhook retry; each further retry waits twice as long (up to 12 hours), with jitter. */
  webhookRetryBaseSeconds: number;
  /** Seconds between audit checkpoints. */
  checkpointIntervalSeconds: number;
  /** Seconds between the worker's full verifications of every tenant's audit log (audit/full-verification-schedule.ts). */
  auditFullVerifyIntervalSeconds: number;
  /**
   * TASKBAY_COMMAND_OUTCOME_TIMEOUT (3600 s): a command grant consumed this long ago with no
   * outcome reported is reconciled to FAILED "outcome never reported" (seed 002's Stop-hook sweep).
   */
  commandOutcomeTimeoutSeconds: number;
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
  /**
   * TASKBAY_AUDIT_PIN_DIR: where each tenant's audit pin is kept, outside the database (the newest
   * checkpoint and stored verification this instance signed or verified, and an unacknowledged
   * failure; audit/pin.ts). Default <dataDir>/audit-pins. Instances sharing a database should share it.
   */
  auditPinDir: string;
  /**
   * Ed25519 key signing approved messages (TASKBAY_APPROVAL_KEY: PEM PKCS#8, or base64 of a 32-byte
   * seed). Unset: <dataDir>/approval-signing-key.pem, created 0600 on first start. Its own key, not
   * the audit key (approval-signing/keys.ts says why).
   */
  approvalSigningKey: KeyObject | null;
  /**
   * TASKBAY_APPROVAL_PUBLISHED_KEYS: more public keys for the JWKS (comma-separated PEM or JWK `x`):
   * the keys that signed before a rotation, so their signatures still verify. Default: none.
   */
  approvalPublishedKeys: KeyObject[];
  /** Console sign-in limiting (auth/sign-in-limiter.ts). */
  signIn: SignInLimits;
  /** What one GraphQL request may ask for (HTTP and WebSocket alike). */
  graphqlLimits: GraphqlLimits;
  /** Per graphql-ws connection: operations active at once, and operations started per second. */
  wsMaxSubscriptions: number;
  wsOperationsPerSecond: number;
  /** Exact origins (scheme://host[:port]) allowed to call /graphql cross-origin with credentials; none by default. */
  corsOrigins: string[];
  /** Serve GraphiQL (local assets, strict CSP) at GET /graphql; off unless TASKBAY_GRAPHIQL=1 or NODE_ENV=development. */
  graphiql: boolean;
  /**
   * TASKBAY_MCP_STDIO=1: admins may put an MCP server behind approval as a command Taskbay runs
   * (stdio, one process per client session, on this host). Off by default: it runs code here.
   */
  mcpStdio: boolean;
  /** TASKBAY_LOG_LEVEL (info): the least severe level of the JSON log lines written. */
  logLevel: LogLevel;
  /**
   * TASKBAY_LOG_FORMAT (auto): `json`, one JSON object a line (for a log collector); `text`,
   * readable lines; `auto`, text when stdout is a terminal, JSON otherwise (main.ts).
   */
  logFormat: LogFormatSetting;
  /**
   * TASKBAY_METRICS_TOKEN: GET /metrics needs `Authorization: Bearer <it>` (from anywhere, loopback
   * included). Unset: /metrics answers loopback clients only.
   */
  metricsToken: string | null;
  /** OpenTelemetry traces over OTLP/HTTP (JSON); null (nothing loaded) unless an endpoint is set. */
  tracing: TracingConfig | null;

  // The network edge (docs/choices.md "Issue 22: the network edge (metadata, URL credentials,
  // sockets, Host)"): how agent names are resolved, and what one client address may hold open
  // (graphql/connection-caps.ts; IPv6 counted by /64).
  /**
   * TASKBAY_AGENT_DNS_SERVERS: DNS servers (`ip[:port]`, comma-separated) asked for agent and
   * webhook host names instead of the system's resolver. Default: none (the system's resolver).
   */
  agentDnsServers: string[];
  /** TASKBAY_WS_AUTH_GRACE_MS (3000): a WebSocket without a connection_init by then is closed (4408). */
  wsAuthGraceMs: number;
  /** TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS (64): WebSockets of one address not yet authenticated; more are refused (HTTP 429). */
  wsMaxUnauthenticatedPerAddress: number;
  /** TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS (1000): WebSockets and SSE subscription streams of one address at once. */
  wsMaxConnectionsPerAddress: number;
}

export interface TracingConfig {
  /**
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces
   * (the OpenTelemetry rule). Headers and timeouts: the exporter reads the other OTEL_EXPORTER_OTLP_* itself.
   */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME (taskbay). */
  serviceName: string;
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

export interface GraphqlLimits {
  /** Lexer tokens in a document; refused while parsing (the quadratic validation rules never see more). */
  maxTokens: number;
  /** Selection depth (introspection's __schema excluded). */
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  /** GraphQL Armor's cost estimate (objects 2, scalars 1, x1.5 a level, x first/last literals). */
  maxCost: number;
  /** Bytes of an HTTP request body, and of one WebSocket message. */
  maxBodyBytes: number;
  /** Nesting of variables and of literal values in the document (objects and lists). */
  maxInputDepth: number;
}

function bool(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`${name} must be 1 or 0, got ${JSON.stringify(raw)}`);
}

/** A comma-separated list of exact origins; anything that is not one (a path, a wildcard, "null") is refused. */
function origins(name: string, raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((o) => {
      let url: URL | null = null;
      try {
        url = new URL(o);
      } catch {
        // refused below
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== o) {
        throw new Error(
          `${name} must list origins like https://console.example.com (scheme, host, optional port; no path or trailing slash), got ${JSON.stringify(o)}`,
        );
      }
      return o;
    });
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

function httpUrl(name: string, raw: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // refused below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new Error(`${name} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  return raw;
}

function tracing(env: NodeJS.ProcessEnv): TracingConfig | null {
  const serviceName = env.OTEL_SERVICE_NAME || 'taskbay';
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    return { tracesUrl: httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), serviceName };
  }
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const base = httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT).replace(/\/+$/, '');
    return { tracesUrl: `${base}/v1/traces`, serviceName };
  }
  return null;
}

/** A bearer secret: long enough not to be guessed. */
function secret(name: string, raw: string | undefined): string | null {
  if (!raw) return null;
  if (raw.length < 16 || /\s/.test(raw)) throw new Error(`${name} must be at least 16 characters without spaces`);
  return raw;
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
    deliveryFallbackDelaySeconds: int('TASKBAY_DELIVERY_FALLBACK_DELAY', env.TASKBAY_DELIVERY_FALLBACK_DELAY, 5, 0, 3600),
    webhookMaxAttempts: int('TASKBAY_WEBHOOK_MAX_ATTEMPTS', env.TASKBAY_WEBHOOK_MAX_ATTEMPTS, 15, 1, 30),
    webhookRetryBaseSeconds: int('TASKBAY_WEBHOOK_RETRY_BASE', env.TASKBAY_WEBHOOK_RETRY_BASE, 30, 1, 3600),
    checkpointIntervalSeconds: int('TASKBAY_CHECKPOINT_INTERVAL', env.TASKBAY_CHECKPOINT_INTERVAL, 60, 1, 86400),
    auditFullVerifyIntervalSeconds: int('TASKBAY_AUDIT_FULL_VERIFY_INTERVAL', env.TASKBAY_AUDIT_FULL_VERIFY_INTERVAL, 86400, 60, 30 * 86400),
    commandOutcomeTimeoutSeconds: int('TASKBAY_COMMAND_OUTCOME_TIMEOUT', env.TASKBAY_COMMAND_OUTCOME_TIMEOUT, 3600, 1, 7 * 86400),
    // Defaults measured against the console's, the CLI's and GraphiQL's own documents (largest:
    // ~190 tokens, depth 10, no aliases or directives, cost ~35,000 for the inbox's first: 100);
    // server/test/unit/graphql-limits.test.ts keeps them passing. 500 tokens keeps the worst
    // document (one field repeated) under ~40 ms of validation; past 2,000 graphql-js's recursive
    // parser could be driven near the stack limit, so that is the most allowed.
    graphqlLimits: {
      maxTokens: int('TASKBAY_GRAPHQL_MAX_TOKENS', env.TASKBAY_GRAPHQL_MAX_TOKENS, 500, 50, 2000),
      maxDepth: int('TASKBAY_GRAPHQL_MAX_DEPTH', env.TASKBAY_GRAPHQL_MAX_DEPTH, 15, 2, 100),
      maxAliases: int('TASKBAY_GRAPHQL_MAX_ALIASES', env.TASKBAY_GRAPHQL_MAX_ALIASES, 15, 0, 1000),
      maxDirectives: int('TASKBAY_GRAPHQL_MAX_DIRECTIVES', env.TASKBAY_GRAPHQL_MAX_DIRECTIVES, 10, 0, 1000),
      maxCost: int('TASKBAY_GRAPHQL_MAX_COST', env.TASKBAY_GRAPHQL_MAX_COST, 100_000, 100, 100_000_000),
      // Room for a 128 KiB approval action plus the rest of the request; well below the push
      // receiver's 1 MiB.
      maxBodyBytes: int('TASKBAY_GRAPHQL_MAX_BODY_BYTES', env.TASKBAY_GRAPHQL_MAX_BODY_BYTES, 256 * KIB, 16 * KIB, 16 * 1024 * KIB),
      // An agent's JSON may nest 64 deep (the A2A client's bound); an edited action sits two
      // levels below the variables, so 100 leaves room and stays far from any stack limit.
      maxInputDepth: int('TASKBAY_GRAPHQL_MAX_INPUT_DEPTH', env.TASKBAY_GRAPHQL_MAX_INPUT_DEPTH, 100, 8, 1000),
    },
    wsMaxSubscriptions: int('TASKBAY_WS_MAX_SUBSCRIPTIONS', env.TASKBAY_WS_MAX_SUBSCRIPTIONS, 50, 1, 10_000),
    wsOperationsPerSecond: int('TASKBAY_WS_OPERATIONS_PER_SECOND', env.TASKBAY_WS_OPERATIONS_PER_SECOND, 20, 1, 10_000),
    corsOrigins: origins('TASKBAY_CORS_ORIGINS', env.TASKBAY_CORS_ORIGINS),
    graphiql: bool('TASKBAY_GRAPHIQL', env.TASKBAY_GRAPHIQL, env.NODE_ENV === 'development'),
    mcpStdio: bool('TASKBAY_MCP_STDIO', env.TASKBAY_MCP_STDIO, false),
    agentNetworks: parseAgentNetworks(env.TASKBAY_AGENT_NETWORKS ?? ''),
    auditSigningKey: env.TASKBAY_AUDIT_KEY ? parseAuditSigningKey(env.TASKBAY_AUDIT_KEY) : null,
    auditPinDir: resolve(env.TASKBAY_AUDIT_PIN_DIR || join(resolve(env.TASKBAY_DATA_DIR || '.taskbay'), 'audit-pins')),
    approvalSigningKey: env.TASKBAY_APPROVAL_KEY ? parseEd25519PrivateKey(env.TASKBAY_APPROVAL_KEY, 'TASKBAY_APPROVAL_KEY') : null,
    approvalPublishedKeys: parsePublishedKeys(env.TASKBAY_APPROVAL_PUBLISHED_KEYS ?? ''),
    signIn: signInLimits(env),
    logLevel: oneOf('TASKBAY_LOG_LEVEL', env.TASKBAY_LOG_LEVEL, LOG_LEVELS, 'info'),
    logFormat: oneOf('TASKBAY_LOG_FORMAT', env.TASKBAY_LOG_FORMAT, LOG_FORMATS, 'auto'),
    metricsToken: secret('TASKBAY_METRICS_TOKEN', env.TASKBAY_METRICS_TOKEN),
    tracing: tracing(env),

    // The network edge.
    agentDnsServers: parseDnsServers(env.TASKBAY_AGENT_DNS_SERVERS ?? ''),
    wsAuthGraceMs: int('TASKBAY_WS_AUTH_GRACE_MS', env.TASKBAY_WS_AUTH_GRACE_MS, 3000, 100, 60_000),
    wsMaxUnauthenticatedPerAddress: int('TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS', env.TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS, 64, 1, 100_000),
    wsMaxConnectionsPerAddress: int('TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS', env.TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS, 1000, 1, 1_000_000),
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
