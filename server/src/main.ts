import { startInstance, type TaskbayInstance } from './app.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { log, setLogLevel } from './log.js';
import { StartupError, assertPortFree, isDiskFull, isPortTaken, startupMessage } from './startup-errors.js';

// Boot: config -> database (embedded or DATABASE_URL) -> migrate -> http+ws -> worker.
// Stop: the reverse. The app (HTTP, sockets, worker, LISTEN loop, ORM) closes its connections
// first; the embedded Postgres stops last, so nothing of the app sees its database go away.
export async function serve(config: Config): Promise<{ instance: TaskbayInstance; stop(): Promise<void> }> {
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.databaseUrl;
  let migrationDatabaseUrl = config.migrationDatabaseUrl;
  setLogLevel(config.logLevel);
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
  log.info(`Taskbay GraphQL${config.graphiql ? ' (with GraphiQL)' : ''} at ${instance.url.replace('127.0.0.1', 'localhost')}/graphql`);
  if (instance.bootstrap) {
    log.info(`Created admin ${instance.bootstrap.email} with one-time password: ${instance.bootstrap.password}`);
    log.info(
      `It is shown only now: sign in to the console at ${instance.url.replace('127.0.0.1', 'localhost')}/ (or signIn in GraphiQL), then create API tokens with createApiToken.`,
    );
  }
  return {
    instance,
    async stop() {
      await instance.stop();
      await embedded?.stop();
    },
  };
}

/** The HTTP port taken, or a full disk (the audit signing key, the console): one sentence. */
function explainStartFailure(e: unknown, config: Config): unknown {
  if (e instanceof StartupError) return e;
  if (isPortTaken(e)) return new StartupError(startupMessage.portTaken('PORT', config.host, config.port));
  if (isDiskFull(e)) return new StartupError(startupMessage.diskFull(config.dataDir, 'TASKBAY_DATA_DIR'));
  return e;
}
