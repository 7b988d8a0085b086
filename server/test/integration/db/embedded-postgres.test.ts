import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startInstance } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { CREDENTIALS_FILE, EMBEDDED_ROLES, startEmbeddedPostgres, type EmbeddedCredentials, type EmbeddedDatabase } from '../../../src/db/embedded.js';
import { migrate, openOrm } from '../../../src/db/orm.js';
import { platformBinaries, runnableBinaries } from '../../../src/db/pg-binaries.js';
import { initCluster, startCluster } from '../../../src/db/pg-cluster.js';
import { postgresRunAs } from '../../../src/db/pg-system-user.js';
import { OPS, TEST_APPROVAL_KEY, TEST_AUDIT_KEY, testPinDir } from '../../support/harness.js';
import { freePort } from '../../support/free-port.js';

// README: `npm ci && npm start` runs Taskbay on an embedded Postgres. A start after a hard kill
// (the Postgres child left running on the data directory) must still come up. No fixed secret:
// the passwords are random and kept in a 0600 file; Taskbay migrates as the owner role and runs
// as the app role; a data dir of the previous version (superuser taskbay/taskbay owning
// everything) is upgraded in place without losing anything.
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'taskbay-embedded-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function query<T = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** The SQLSTATE of a failed login (null when it succeeds). */
async function loginError(user: string, password: string, port: number, database = 'postgres'): Promise<string | null> {
  try {
    await query(`postgres://${user}:${password}@127.0.0.1:${port}/${database}`, 'select 1');
    return null;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

const credentialsOf = (dir: string) => JSON.parse(readFileSync(join(dir, CREDENTIALS_FILE), 'utf8')) as EmbeddedCredentials;

/** Objects of Taskbay's schemas (and the database) that the owner role does not own. */
async function notOwnedByOwner(db: EmbeddedDatabase): Promise<string[]> {
  const rows = await query<{ object: string }>(
    db.superuserUrl('taskbay'),
    `with o as (select oid from pg_roles where rolname = $1), s as (select oid from pg_namespace where nspname in ('public', 'graphile_worker'))
     select 'schema ' || nspname as object from pg_namespace where oid in (select oid from s)
        and nspowner not in ((select oid from o), 'pg_database_owner'::regrole)
     union all select 'relation ' || oid::regclass from pg_class where relnamespace in (select oid from s) and relowner <> (select oid from o)
     union all select 'function ' || oid::regprocedure from pg_proc where pronamespace in (select oid from s) and proowner <> (select oid from o)
     union all select 'type ' || oid::regtype from pg_type where typnamespace in (select oid from s) and typowner <> (select oid from o)
     union all select 'database ' || datname from pg_database where datname = 'taskbay' and datdba <> (select oid from o)`,
    [EMBEDDED_ROLES.owner],
  );
  return rows.map((r) => r.object);
}

/** What can rewrite history: the role the server runs as must not be able to turn the guards off. */
async function appCannotDisableTriggers(db: EmbeddedDatabase) {
  await expect(query(db.appUrl, 'alter table audit_event disable trigger all')).rejects.toMatchObject({ code: '42501' });
  const [role] = await query(db.appUrl, `select current_user as name, rolsuper from pg_roles where rolname = current_user`);
  expect(role).toEqual({ name: EMBEDDED_ROLES.app, rolsuper: false });
}

describe('embedded Postgres', () => {
  it('starts again after the previous owner was killed with SIGKILL, replacing the orphaned server', async () => {
    const dir = tempDir();
    const port = await freePort();
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(new URL('../../../src/db/embedded.ts', import.meta.url).pathname)};
      await startEmbeddedPostgres({ dir: ${JSON.stringify(dir)}, port: ${port}, persistent: true });
      process.kill(process.pid, 'SIGKILL');`;
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'ignore', timeout: 60_000 });
    const orphanPid = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(() => process.kill(orphanPid, 0)).not.toThrow(); // the orphan really is running

    const db = await startEmbeddedPostgres({ dir, port, persistent: true });
    try {
      expect((await query(db.appUrl, 'select 1 as one'))[0].one).toBe(1);
      expect(() => process.kill(orphanPid, 0)).toThrow(); // replaced, not adopted
    } finally {
      await db.stop();
    }
  }, 90_000);

  it('a fresh data dir gets random passwords in a 0600 file outside pg/, an owner and an app role, and keeps them on the next start', async () => {
    const dir = tempDir();
    const port = await freePort();
    const db = await startEmbeddedPostgres({ dir, port, persistent: true });
    let credentials: EmbeddedCredentials;
    try {
      const file = join(dir, CREDENTIALS_FILE);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      credentials = credentialsOf(dir);
      expect(credentials.superuser.previousPassword).toBeUndefined(); // initdb's throwaway password is replaced
      const passwords = [credentials.superuser.password, credentials.owner.password, credentials.app.password];
      expect(new Set(passwords).size).toBe(3);
      for (const p of passwords) expect(p.length).toBeGreaterThanOrEqual(32);
      expect(db.appUrl).toContain(`${EMBEDDED_ROLES.app}:${credentials.app.password}@`);
      expect(db.ownerUrl).toContain(`${EMBEDDED_ROLES.owner}:${credentials.owner.password}@`);

      // The fixed login of the previous version does not exist; nor do guessable passwords.
      expect(await loginError('taskbay', 'taskbay', port)).toBe('28P01');
      expect(await loginError(credentials.superuser.user, 'taskbay', port)).toBe('28P01');
      expect(await loginError(EMBEDDED_ROLES.app, 'taskbay', port, 'taskbay')).toBe('28P01');
      expect(await loginError(credentials.superuser.user, credentials.superuser.password, port)).toBeNull();

      const roles = await query(
        db.superuserUrl('postgres'),
        `select rolname, rolsuper, rolcreaterole, rolcreatedb, rolinherit from pg_roles where rolname = any($1) order by rolname`,
        [[EMBEDDED_ROLES.app, EMBEDDED_ROLES.owner]],
      );
      expect(roles).toEqual([
        { rolname: EMBEDDED_ROLES.app, rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolinherit: false },
        { rolname: EMBEDDED_ROLES.owner, rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolinherit: true },
      ]);

      // Taskbay as serve() runs it: migrations as the owner, the server as the app role.
      const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY,
        TASKBAY_APPROVAL_KEY: TEST_APPROVAL_KEY,
        TASKBAY_AUDIT_PIN_DIR: testPinDir(),
        TASKBAY_ADMIN_TOKEN: `tb_admin_${randomUUID()}`,
      });
      const instance = await startInstance(config, db.appUrl, { worker: false, listen: false, migrationDatabaseUrl: db.ownerUrl });
      await instance.stop();
      expect(await notOwnedByOwner(db)).toEqual([]);
      await appCannotDisableTriggers(db);
    } finally {
      await db.stop();
    }

    const again = await startEmbeddedPostgres({ dir, port, persistent: true });
    try {
      expect(credentialsOf(dir)).toEqual(credentials);
      expect(again.appUrl).toBe(db.appUrl);
      expect((await query(again.appUrl, 'select count(*)::int as n from app_user'))[0].n).toBe(1);
    } finally {
      await again.stop();
    }
  }, 120_000);

  it('upgrades a data dir of the previous version (superuser taskbay/taskbay owning everything) in place, losing nothing', async () => {
    const dir = tempDir();
    const port = await freePort();
    const adminToken = `tb_admin_${randomUUID()}`;

    // The previous version, as it was: initdb with taskbay/taskbay, database taskbay created by
    // that superuser, migrated and used by Taskbay logged in as it.
    const user = postgresRunAs();
    if (user) chmodSync(dir, 0o755);
    const binaries = runnableBinaries(await platformBinaries(), user);
    await initCluster({ binaries, pgDir: join(dir, 'pg'), user, superuser: 'taskbay', password: 'taskbay' });
    const legacy = await startCluster({ binaries, pgDir: join(dir, 'pg'), port, user, flags: ['-c', 'unix_socket_directories='] });
    const legacyUrl = `postgres://taskbay:taskbay@127.0.0.1:${port}/taskbay`;
    let before: Record<string, unknown>;
    try {
      await query(`postgres://taskbay:taskbay@127.0.0.1:${port}/postgres`, 'create database taskbay');
      const orm = await openOrm(legacyUrl, 2);
      await migrate(orm, legacyUrl);
      await orm.close(true);
      const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY,
        TASKBAY_APPROVAL_KEY: TEST_APPROVAL_KEY,
        TASKBAY_AUDIT_PIN_DIR: testPinDir(),
        TASKBAY_ADMIN_TOKEN: adminToken,
      });
      const old = await startInstance(config, legacyUrl, { worker: false, listen: false });
      const reg = await old.yoga.fetch('http://taskbay.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ query: OPS.createUser, variables: { email: 'kept@example.test', name: 'Kept', role: 'MEMBER' } }),
      });
      expect((await reg.json()).errors).toBeUndefined();
      await old.stop();
      await query(legacyUrl, `select graphile_worker.add_job('audit_checkpoint', '{}'::json, run_at => now() + interval '1 day')`);
      [before] = await query(
        legacyUrl,
        `select (select count(*)::int from audit_event) as events, (select string_agg(hash, ',' order by seq) from audit_event) as hashes,
                (select string_agg(email, ',' order by email) from app_user) as users, (select count(*)::int from graphile_worker.jobs) as jobs`,
      );
      expect(before).toMatchObject({ users: 'admin@localhost,kept@example.test', jobs: 1 });
      const [{ owner }] = await query(legacyUrl, `select pg_get_userbyid(relowner) as owner from pg_class where relname = 'audit_event'`);
      expect(owner).toBe('taskbay'); // the state the finding describes
    } finally {
      await legacy.stop();
    }
    expect(existsSync(join(dir, CREDENTIALS_FILE))).toBe(false);

    const db = await startEmbeddedPostgres({ dir, port, persistent: true });
    let credentials: EmbeddedCredentials;
    try {
      credentials = credentialsOf(dir);
      expect(statSync(join(dir, CREDENTIALS_FILE)).mode & 0o777).toBe(0o600);
      expect(credentials.superuser.user).toBe('taskbay');
      expect(credentials.superuser.previousPassword).toBeUndefined();
      expect(await loginError('taskbay', 'taskbay', port)).toBe('28P01'); // the old password is gone
      expect(await notOwnedByOwner(db)).toEqual([]);
      const [after] = await query(
        db.superuserUrl('taskbay'),
        `select (select count(*)::int from audit_event) as events, (select string_agg(hash, ',' order by seq) from audit_event) as hashes,
                (select string_agg(email, ',' order by email) from app_user) as users, (select count(*)::int from graphile_worker.jobs) as jobs`,
      );
      expect(after).toEqual(before);

      // Taskbay on the upgraded database as the app role: the history verifies, the guards hold.
      const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY,
        TASKBAY_APPROVAL_KEY: TEST_APPROVAL_KEY,
        TASKBAY_AUDIT_PIN_DIR: testPinDir(),
        TASKBAY_ADMIN_TOKEN: adminToken,
      });
      const instance = await startInstance(config, db.appUrl, { worker: false, listen: false, migrationDatabaseUrl: db.ownerUrl });
      try {
        const res = await instance.yoga.fetch('http://taskbay.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: JSON.stringify({ query: OPS.auditChain }),
        });
        expect((await res.json()).data.auditChain).toMatchObject({ ok: true, events: (before as { events: number }).events });
      } finally {
        await instance.stop();
      }
      await appCannotDisableTriggers(db);
    } finally {
      await db.stop();
    }

    // The next start reuses the credentials file.
    const again = await startEmbeddedPostgres({ dir, port, persistent: true });
    try {
      expect(credentialsOf(dir)).toEqual(credentials);
      expect(await notOwnedByOwner(again)).toEqual([]);
    } finally {
      await again.stop();
    }
  }, 180_000);
});
