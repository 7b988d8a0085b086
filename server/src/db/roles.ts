import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { log } from '../log.js';
import { migrate, openOrm } from './orm.js';

// Least privilege in Postgres. Two roles: an owner that runs the migrations and owns every
// object, and an app role the server runs as. The app role can read and write rows, but it does
// not own the tables, so it cannot ALTER them, DISABLE TRIGGER (the append-only guards of the
// audit log), TRUNCATE them or replace the trigger functions; and it is no superuser, so it
// cannot run COPY ... PROGRAM or set session_replication_role. The operator's SQL for an
// external Postgres is deploy/postgres/roles.sql.

/** The schemas Taskbay's migrations (public) and graphile-worker's (graphile_worker) fill. */
export const WORKER_SCHEMA = 'graphile_worker';
export const MANAGED_SCHEMAS = ['public', WORKER_SCHEMA] as const;

/**
 * Trigger functions that refuse a change outright (declared by the migrations). A table whose
 * unconditional BEFORE row trigger runs one of them for UPDATE or DELETE is append-only for that
 * operation, and the app role does not get the privilege either: the trigger and the grant say
 * the same thing, and a table a later migration guards this way is covered without a list here.
 * (Whether the trigger is enabled does not matter: a guard turned off is no reason to grant more.)
 */
const REFUSING_TRIGGER_FUNCTIONS = ['audit_append_only', 'card_snapshot_immutable', 'policy_version_immutable'];

/** The migrators' own bookkeeping: the app reads it (to see the schema is current), never writes it. */
const READ_ONLY_TABLES = ['public.mikro_orm_migrations', `${WORKER_SCHEMA}.migrations`];

/** Name of the policy that lets the app role see graphile-worker's rows (its tables enable RLS). */
const WORKER_POLICY = 'taskbay_app_rows';

const id = pg.escapeIdentifier;

export interface RoleLogin {
  user: string;
  password: string;
}

/** A random password that is safe in a URL without escaping. */
export function randomPassword(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * A SCRAM-SHA-256 verifier (RFC 5803, the form Postgres stores), so CREATE/ALTER ROLE never
 * carries the password itself. Only for our generated ASCII passwords (no SASLprep needed).
 */
export function scramVerifier(password: string): string {
  if (!/^[\x21-\x7e]+$/.test(password)) throw new Error('scramVerifier takes printable ASCII passwords only');
  const iterations = 4096;
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const storedKey = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Creates (or brings back to these attributes and passwords) the owner and the app role. Run as a
 * superuser; roles are cluster-wide. The app role is a member of no role at all, so it cannot
 * gain pg_execute_server_program, pg_read_server_files, pg_write_server_files or the owner.
 */
export async function ensureRoles(superuser: pg.ClientBase, roles: { owner: RoleLogin; app: RoleLogin }): Promise<void> {
  const attributes = {
    owner: 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS',
    app: 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS',
  };
  for (const kind of ['owner', 'app'] as const) {
    const { user, password } = roles[kind];
    const { rowCount } = await superuser.query('select 1 from pg_roles where rolname = $1', [user]);
    const verb = rowCount ? 'ALTER' : 'CREATE';
    await superuser.query(`${verb} ROLE ${id(user)} WITH ${attributes[kind]} PASSWORD ${pg.escapeLiteral(scramVerifier(password))}`);
  }
  const { rows } = await superuser.query<{ role: string }>(
    `select g.rolname as role from pg_auth_members m join pg_roles g on g.oid = m.roleid join pg_roles r on r.oid = m.member where r.rolname = $1`,
    [roles.app.user],
  );
  for (const { role } of rows) await superuser.query(`REVOKE ${id(role)} FROM ${id(roles.app.user)}`);
}

/**
 * Makes the owner role the owner of every object in the managed schemas (tables with their
 * sequences and indexes, views, standalone sequences, composite and other types, functions, the
 * schemas). Run as a superuser in the database; it upgrades a database whose objects a superuser
 * created (REASSIGN OWNED cannot move objects of the bootstrap superuser). Idempotent.
 */
export async function transferOwnership(superuser: pg.ClientBase, ownerRole: string): Promise<string[]> {
  const owner = id(ownerRole);
  const notExtensionMember = (classid: string, objid: string) =>
    `not exists (select 1 from pg_depend d where d.classid = '${classid}'::regclass and d.objid = ${objid} and d.deptype = 'e')`;
  const statements: string[] = [];
  const schemas = await superuser.query<{ name: string }>(
    `select n.nspname as name from pg_namespace n
      where n.nspname = any($1) and n.nspowner <> (select oid from pg_roles where rolname = $2)
        and n.nspowner <> 'pg_database_owner'::regrole`,
    [MANAGED_SCHEMAS, ownerRole],
  );
  for (const s of schemas.rows) statements.push(`ALTER SCHEMA ${id(s.name)} OWNER TO ${owner}`);
  const relationKind: Record<string, string> = { r: 'TABLE', p: 'TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', f: 'FOREIGN TABLE', S: 'SEQUENCE', c: 'TYPE' };
  const relations = await superuser.query<{ name: string; kind: string }>(
    `select c.oid::regclass::text as name, c.relkind as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1) and c.relowner <> (select oid from pg_roles where rolname = $2)
        and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S', 'c')
        -- a sequence owned by a column (serial, identity) follows its table
        and not (c.relkind = 'S' and exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass
                 and d.objid = c.oid and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')))
        -- a partition follows its parent
        and not c.relispartition
        and ${notExtensionMember('pg_class', 'c.oid')}
      order by c.oid`,
    [MANAGED_SCHEMAS, ownerRole],
  );
  for (const r of relations.rows) statements.push(`ALTER ${relationKind[r.kind]} ${r.name} OWNER TO ${owner}`);
  const routineKind: Record<string, string> = { f: 'FUNCTION', w: 'FUNCTION', p: 'PROCEDURE', a: 'AGGREGATE' };
  const routines = await superuser.query<{ name: string; kind: string }>(
    `select p.oid::regprocedure::text as name, p.prokind as kind from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = any($1) and p.proowner <> (select oid from pg_roles where rolname = $2)
        and ${notExtensionMember('pg_proc', 'p.oid')}
      order by p.oid`,
    [MANAGED_SCHEMAS, ownerRole],
  );
  for (const r of routines.rows) statements.push(`ALTER ${routineKind[r.kind]} ${r.name} OWNER TO ${owner}`);
  // Types of their own (enums, domains, ranges); a table's row type, an array type and a
  // multirange follow the object they belong to.
  const types = await superuser.query<{ name: string; kind: string }>(
    `select t.oid::regtype::text as name, t.typtype as kind from pg_type t join pg_namespace n on n.oid = t.typnamespace
      where n.nspname = any($1) and t.typowner <> (select oid from pg_roles where rolname = $2)
        and t.typrelid = 0 and t.typtype <> 'm'
        and not exists (select 1 from pg_type e where e.typarray = t.oid)
        and ${notExtensionMember('pg_type', 't.oid')}
      order by t.oid`,
    [MANAGED_SCHEMAS, ownerRole],
  );
  for (const t of types.rows) statements.push(`ALTER ${t.kind === 'd' ? 'DOMAIN' : 'TYPE'} ${t.name} OWNER TO ${owner}`);
  if (statements.length) {
    await superuser.query('begin');
    try {
      for (const s of statements) await superuser.query(s);
      await superuser.query('commit');
    } catch (e) {
      await superuser.query('rollback');
      throw e;
    }
  }
  return statements;
}

/**
 * Grants the app role exactly what the server needs, derived from the catalog so that tables of
 * later migrations are covered. Run as the owner after every migration; idempotent (everything is
 * revoked and granted again in one transaction, so nothing broader survives):
 * - USAGE on the managed schemas (never CREATE); CREATE on public revoked from PUBLIC;
 * - SELECT, INSERT, UPDATE, DELETE on tables, minus UPDATE/DELETE where a refusing trigger makes
 *   the table append-only (audit_event, audit_checkpoint, card_snapshot, ...); SELECT only on the
 *   migrators' bookkeeping; never TRUNCATE, REFERENCES or TRIGGER;
 * - USAGE, SELECT on sequences; EXECUTE on graphile-worker's functions;
 * - a policy on each graphile-worker table with row-level security (it enables RLS without
 *   policies, so only the owner would see the jobs).
 */
export async function grantAppRole(owner: pg.ClientBase, appRole: string): Promise<void> {
  const app = id(appRole);
  await owner.query('begin');
  try {
    // Concurrent GRANTs on one object fail ("tuple concurrently updated"): instances starting
    // together take turns.
    await owner.query(`select pg_advisory_xact_lock(hashtextextended('taskbay:grant-app-role', 7))`);
    const schemas = (
      await owner.query<{ name: string }>(`select nspname as name from pg_namespace where nspname = any($1) order by nspname`, [MANAGED_SCHEMAS])
    ).rows.map((r) => r.name);
    for (const s of schemas) {
      await owner.query(`REVOKE ALL ON SCHEMA ${id(s)} FROM ${app}`);
      await owner.query(`GRANT USAGE ON SCHEMA ${id(s)} TO ${app}`);
      await owner.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${id(s)} FROM PUBLIC, ${app}`);
      await owner.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${id(s)} FROM PUBLIC, ${app}`);
      await owner.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${id(s)} TO ${app}`);
    }
    if (schemas.includes('public')) await owner.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    if (schemas.includes(WORKER_SCHEMA)) await owner.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${id(WORKER_SCHEMA)} TO ${app}`);

    const refuses = (bit: number) => `exists (select 1 from pg_trigger t join pg_proc p on p.oid = t.tgfoid
        where t.tgrelid = c.oid and t.tgqual is null and t.tgattr = ''::int2vector
          and t.tgtype & 3 = 3 and t.tgtype & ${bit} <> 0 and p.proname = any($2))`;
    const tables = await owner.query<{ schema: string; name: string; kind: string; rls: boolean; refusesUpdate: boolean; refusesDelete: boolean }>(
      `select n.nspname as schema, c.relname as name, c.relkind as kind, c.relrowsecurity as rls,
              ${refuses(16)} as "refusesUpdate", ${refuses(8)} as "refusesDelete"
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = any($1) and c.relkind in ('r', 'p', 'v', 'm', 'f')
        order by n.nspname, c.relname`,
      [MANAGED_SCHEMAS, REFUSING_TRIGGER_FUNCTIONS],
    );
    for (const t of tables.rows) {
      const name = `${id(t.schema)}.${id(t.name)}`;
      await owner.query(`GRANT ${appTablePrivileges(t).join(', ')} ON ${name} TO ${app}`);
      if (t.schema === WORKER_SCHEMA && t.rls && !(await hasWorkerPolicy(owner, t.schema, t.name, appRole))) {
        // Only when missing: DROP/CREATE POLICY locks the queue tables the running workers use.
        await owner.query(`DROP POLICY IF EXISTS ${id(WORKER_POLICY)} ON ${name}`);
        await owner.query(`CREATE POLICY ${id(WORKER_POLICY)} ON ${name} FOR ALL TO ${app} USING (true) WITH CHECK (true)`);
      }
    }
    await owner.query('commit');
  } catch (e) {
    await owner.query('rollback').catch(() => {});
    throw e;
  }
}

async function hasWorkerPolicy(owner: pg.ClientBase, schema: string, table: string, appRole: string): Promise<boolean> {
  const { rowCount } = await owner.query(
    `select 1 from pg_policy p
      where p.polrelid = format('%I.%I', $1::text, $2::text)::regclass and p.polname = $3 and p.polcmd = '*' and p.polpermissive
        and p.polroles = array[(select oid from pg_roles where rolname = $4)]
        and pg_get_expr(p.polqual, p.polrelid) = 'true' and pg_get_expr(p.polwithcheck, p.polrelid) = 'true'`,
    [schema, table, WORKER_POLICY, appRole],
  );
  return rowCount === 1;
}

/** The table privileges of the app role (see grantAppRole). */
export function appTablePrivileges(t: { schema: string; name: string; kind: string; refusesUpdate: boolean; refusesDelete: boolean }): string[] {
  if (READ_ONLY_TABLES.includes(`${t.schema}.${t.name}`) || t.kind === 'm') return ['SELECT'];
  const privileges = ['SELECT', 'INSERT'];
  if (!t.refusesUpdate) privileges.push('UPDATE');
  if (!t.refusesDelete) privileges.push('DELETE');
  return privileges;
}

/** Who the server runs as, and what that role could do to the audit history. */
export async function inspectRuntimeRole(client: pg.ClientBase): Promise<{ role: string; problems: string[] }> {
  const { rows } = await client.query<{ role: string; superuser: boolean; ownsAudit: boolean; serverFiles: string[] }>(
    `select current_user as role, r.rolsuper as superuser,
            exists (select 1 from pg_class c where c.oid in (to_regclass('public.audit_event'), to_regclass('public.audit_checkpoint'))
                      and pg_has_role(current_user, c.relowner, 'MEMBER')) as "ownsAudit",
            array(select g::text from unnest(array['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files']::name[]) g
                   where pg_has_role(current_user, g, 'MEMBER')) as "serverFiles"
       from pg_roles r where r.rolname = current_user`,
  );
  const r = rows[0]!;
  const problems: string[] = [];
  // A superuser passes every check below; saying so is enough.
  if (r.superuser) problems.push('is a superuser');
  else if (r.ownsAudit) problems.push('owns the audit tables (it can DISABLE TRIGGER and rewrite them)');
  if (!r.superuser && r.serverFiles.length) problems.push(`is a member of ${r.serverFiles.join(', ')}`);
  return { role: r.role, problems };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Before the server uses the database: migrate (as the owner when a migration URL is given, else
 * as the runtime role, which then needs the rights to do it), grant the runtime role its rights,
 * and warn once when the runtime role could rewrite the audit history.
 */
export async function prepareDatabase(
  urls: { appUrl: string; ownerUrl?: string | null },
  warn: (line: string) => void = (line) => log.warn(line),
): Promise<void> {
  const migrationUrl = urls.ownerUrl || urls.appUrl;
  const orm = await openOrm(migrationUrl, 2);
  try {
    await migrate(orm, migrationUrl);
  } finally {
    await orm.close(true);
  }
  const runtime = await withClient(urls.appUrl, inspectRuntimeRole);
  if (urls.ownerUrl) {
    await withClient(urls.ownerUrl, async (owner) => {
      const { rows } = await owner.query<{ role: string }>('select current_user as role');
      // The same role twice: revoking "its" privileges would strip the owner's own.
      if (rows[0]!.role !== runtime.role) await grantAppRole(owner, runtime.role);
    });
  }
  if (runtime.problems.length) {
    const fix = urls.ownerUrl
      ? 'set DATABASE_URL to a role without those rights (see deploy/postgres/roles.sql)'
      : 'set DATABASE_URL to an app role and TASKBAY_MIGRATION_DATABASE_URL to the owner role (see deploy/postgres/roles.sql)';
    warn(
      `Warning: the database role "${runtime.role}" Taskbay runs as ${runtime.problems.join(' and ')}, so whoever holds its login can rewrite the audit history; ${fix}.`,
    );
  }
}
