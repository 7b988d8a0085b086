import { join } from 'node:path';
import { startInstance, type TaskbayInstance } from './app.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { APPROVAL_KEY_FILE } from './approval-signing/module.js';
import { AUDIT_KEY_FILE } from './audit/module.js';
import { startupSignInLink } from './auth/module.js';
import { log, type LogFormat, setLogFormat, setLogLevel } from './log.js';
import { showStartup } from './startup-output.js';
import { StartupError, assertPortFree, isDiskFull, isPortTaken, startupMessage } from './startup-errors.js';

// Boot: config -> database (embedded or DATABASE_URL) -> migrate -> http+ws -> worker.
// Stop: the reverse. The app (HTTP, sockets, worker, LISTEN loop, ORM) closes its connections
// first; the embedded Postgres stops last, so nothing of the app sees its database go away.
export async function serve(config: Config): Promise<{ instance: TaskbayInstance; stop(): Promise<void> }> {
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.databaseUrl;
  let migrationDatabaseUrl = config.migrationDatabaseUrl;
  setLogLevel(config.logLevel);
  setLogFormat(logFormatOf(config));
  await assertPortFree('PORT', config.host, config.port);
  if (!databaseUrl) {
    log.info(`Starting embedded Postgres in ${config.dataDir} (port ${config.embeddedPgPort})`);
    embedded = await startEmbeddedPostgres({ dir: config.dataDir, port: config.embeddedPgPort, persistent: true, log: (line) => log.warn(line) });
    // Migrations as the owner role, the server as the app role (random passwords, see embedded.ts).
    databaseUrl = embedded.appUrl;
    migrationDatabaseUrl = embedded.ownerUrl;
  }
  let instance: TaskbayInstance;
  try {
    instance = await startInstance(config, databaseUrl, { migrationDatabaseUrl });
  } catch (e) {
    await embedded?.stop();
    throw explainStartFailure(e, config);
  }
  try {
    await tell(config, instance, embedded);
  } catch (e) {
    await instance.stop();
    await embedded?.stop();
    throw e;
  }
  return {
    instance,
    async stop() {
      await instance.stop();
      await embedded?.stop();
    },
  };
}

/** TASKBAY_LOG_FORMAT, `auto` decided here: text when stdout is a terminal (a person reads it), JSON otherwise. */
function logFormatOf(config: Config): LogFormat {
  return config.logFormat === 'auto' ? (process.stdout.isTTY ? 'text' : 'json') : config.logFormat;
}

/**
 * What serve says once ready (startup-output.ts), with a one-time sign-in link when the admin of
 * TASKBAY_ADMIN_EMAIL has no password. Made here, not in startInstance: it is for the person who
 * started this process, and instances started by tests or the library show nothing.
 */
async function tell(config: Config, instance: TaskbayInstance, embedded: EmbeddedDatabase | null): Promise<void> {
  const local = instance.url.replace('127.0.0.1', 'localhost');
  // TASKBAY_PUBLIC_URL when set; its default names PORT, which is 0 when the system picked one.
  const base = config.publicUrl === `http://localhost:${config.port}` ? local : config.publicUrl;
  const link = await startupSignInLink(instance.orm.em.fork(), { adminEmail: config.adminEmail, baseUrl: base });
  showStartup(
    {
      consoleUrl: `${base}/`,
      graphqlUrl: `${local}/graphql`,
      graphiql: config.graphiql,
      dataDir: config.dataDir,
      database: embedded
        ? `embedded PostgreSQL in ${join(config.dataDir, 'pg')}, port ${config.embeddedPgPort}`
        : `DATABASE_URL ${withoutCredentials(config.databaseUrl!)}`,
      auditKey: config.auditSigningKey ? 'from TASKBAY_AUDIT_KEY' : join(config.dataDir, AUDIT_KEY_FILE),
      approvalKey: config.approvalSigningKey ? 'from TASKBAY_APPROVAL_KEY' : join(config.dataDir, APPROVAL_KEY_FILE),
      auditPins: config.auditPinDir,
      adminCreated: instance.bootstrap?.email ?? null,
      signIn: link ? { email: link.user.email, url: link.url, expiresAt: link.expiresAt } : null,
    },
    {
      format: logFormatOf(config),
      asked: config.logFormat,
      stdoutIsTty: process.stdout.isTTY === true,
      stderrIsTty: process.stderr.isTTY === true,
      writeStderr: (text) => process.stderr.write(text),
    },
  );
}

/** A database URL to show: scheme, host, port and database, no user or password. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(DATABASE_URL is set)';
  }
}

/** The HTTP port taken, or a full disk (the audit signing key, the console): one sentence. */
function explainStartFailure(e: unknown, config: Config): unknown {
  if (e instanceof StartupError) return e;
  if (isPortTaken(e)) return new StartupError(startupMessage.portTaken('PORT', config.host, config.port));
  if (isDiskFull(e)) return new StartupError(startupMessage.diskFull(config.dataDir, 'TASKBAY_DATA_DIR'));
  return e;
}
