import { startInstance, type TaskbayInstance } from './app.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';

// Boot: config -> database (embedded or DATABASE_URL) -> migrate -> http+ws -> worker.
export async function serve(config: Config): Promise<{ instance: TaskbayInstance; stop(): Promise<void> }> {
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.databaseUrl;
  let migrationDatabaseUrl = config.migrationDatabaseUrl;
  if (!databaseUrl) {
    console.log(`Starting embedded Postgres in ${config.dataDir} (port ${config.embeddedPgPort})`);
    embedded = await startEmbeddedPostgres({ dir: config.dataDir, port: config.embeddedPgPort, persistent: true, log: console.error });
    // Migrations as the owner role, the server as the app role (random passwords, see embedded.ts).
    databaseUrl = embedded.appUrl;
    migrationDatabaseUrl = embedded.ownerUrl;
  }
  const instance = await startInstance(config, databaseUrl, { migrationDatabaseUrl });
  console.log(`Taskbay GraphQL${config.graphiql ? ' (with GraphiQL)' : ''} at ${instance.url.replace('127.0.0.1', 'localhost')}/graphql`);
  if (instance.bootstrap) {
    console.log(`Created admin ${instance.bootstrap.email} with one-time password: ${instance.bootstrap.password}`);
    console.log(`It is shown only now: sign in to the console at ${instance.url.replace('127.0.0.1', 'localhost')}/ (or signIn in GraphiQL), then create API tokens with createApiToken.`);
  }
  return {
    instance,
    async stop() {
      await instance.stop();
      await embedded?.stop();
    },
  };
}
