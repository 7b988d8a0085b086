import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { grantAppRole, prepareDatabase } from '../../../src/db/roles.js';
import { LISTENER_APPLICATION_NAME } from '../../../src/events/listener.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { createTestDatabase, eventually, OPS, roleUrls, startTestInstance, type TestInstance, ok } from '../../support/harness.js';

// Security finding: "History can be rewritten by whoever holds the database login. The app's
// login is a superuser that owns the audit tables; with DISABLE TRIGGER and re-hashing of one
// event and six checkpoints, auditChain reported ok: true." Taskbay now runs as an app role that
// owns nothing and is no superuser; the owner role migrates and grants (server/src/db/roles.ts).
// Every instance of the suite runs as that role (see the harness); this file checks what the role
// can NOT do, and that Taskbay still works end to end as it.

let t: TestInstance;
let agent: FixtureAgent;
let app: pg.Client;

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance();
  app = new pg.Client({ connectionString: t.appUrl });
  await app.connect();
});

afterAll(async () => {
  await app?.end();
  await t?.stop();
  await agent?.close();
});

/** The SQLSTATE a statement of the app role fails with (null when it succeeds, rolled back either way). */
async function sqlstate(text: string): Promise<string | null> {
  await app.query('begin');
  try {
    await app.query(text);
    return null;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  } finally {
    await app.query('rollback');
  }
}

const PERMISSION_DENIED = '42501'; // insufficient_privilege: the privilege check, before any trigger runs
const AUDIT_TABLES = ['audit_event', 'audit_checkpoint'];

describe('the app role cannot rewrite the audit history', () => {
  it('is not a superuser, cannot create roles or databases, and is a member of no role (no pg_execute_server_program, no server files)', async () => {
    const { rows } = await app.query(
      `select r.rolname, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls, r.rolinherit,
              (select count(*)::int from pg_auth_members m where m.member = r.oid) as memberships
         from pg_roles r where r.rolname = current_user`,
    );
    expect(rows).toEqual([
      {
        rolname: inject('pgApp').user,
        rolsuper: false,
        rolcreaterole: false,
        rolcreatedb: false,
        rolreplication: false,
        rolbypassrls: false,
        rolinherit: false,
        memberships: 0,
      },
    ]);
  });

  it('cannot ALTER the audit tables or DISABLE their triggers', async () => {
    for (const table of [...AUDIT_TABLES, 'card_snapshot']) {
      expect({ table, code: await sqlstate(`alter table ${table} disable trigger all`) }).toEqual({ table, code: PERMISSION_DENIED });
      expect({ table, code: await sqlstate(`alter table ${table} add column forged text`) }).toEqual({ table, code: PERMISSION_DENIED });
    }
    expect(await sqlstate('alter table audit_event disable trigger audit_event_no_update')).toBe(PERMISSION_DENIED);
    // Nor turn every trigger off for its own session.
    expect(await sqlstate('set session_replication_role = replica')).toBe(PERMISSION_DENIED);
  });

  it('cannot TRUNCATE, UPDATE or DELETE audit rows: refused by the privileges, not only by the triggers', async () => {
    const [{ n }] = await t.sql(`select count(*)::int as n from audit_event`);
    expect(n).toBeGreaterThan(0); // the bootstrap admin's events are there to be tampered with
    for (const table of AUDIT_TABLES) {
      expect({ table, code: await sqlstate(`truncate ${table}`) }).toEqual({ table, code: PERMISSION_DENIED });
      expect({ table, code: await sqlstate(`update ${table} set hash = hash`) }).toEqual({ table, code: PERMISSION_DENIED });
      expect({ table, code: await sqlstate(`delete from ${table}`) }).toEqual({ table, code: PERMISSION_DENIED });
    }
    expect(await sqlstate(`update card_snapshot set card = card`)).toBe(PERMISSION_DENIED);
    const [{ after }] = await t.sql(`select count(*)::int as after from audit_event`);
    expect(after).toBe(n);
  });

  it('cannot replace the trigger functions, create tables or schemas, or run COPY ... PROGRAM', async () => {
    expect(await sqlstate(`create or replace function audit_append_only() returns trigger language plpgsql as $$ begin return new; end $$`)).toBe(
      PERMISSION_DENIED,
    );
    expect(await sqlstate('create table public.forged (id int)')).toBe(PERMISSION_DENIED);
    expect(await sqlstate('create table graphile_worker.forged (id int)')).toBe(PERMISSION_DENIED);
    expect(await sqlstate('create schema forged')).toBe(PERMISSION_DENIED);
    expect(await sqlstate(`copy (select 1) to program 'true'`)).toBe(PERMISSION_DENIED);
    expect(await sqlstate(`copy audit_event from program 'true'`)).toBe(PERMISSION_DENIED);
  });

  it('holds exactly the privileges of the policy on every table: no TRUNCATE, REFERENCES or TRIGGER anywhere', async () => {
    const { rows } = await app.query<{ table: string; privileges: string[] }>(
      `select n.nspname || '.' || c.relname as table,
              array(select p from unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) p
                     where has_table_privilege(current_user, c.oid, p)) as privileges
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname in ('public', 'graphile_worker') and c.relkind in ('r', 'p', 'v')
        order by 1`,
    );
    const of = Object.fromEntries(rows.map((r) => [r.table, r.privileges]));
    const readWrite = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];
    expect(of['public.audit_event']).toEqual(['SELECT', 'INSERT']);
    expect(of['public.audit_checkpoint']).toEqual(['SELECT', 'INSERT']);
    expect(of['public.card_snapshot']).toEqual(['SELECT', 'INSERT']);
    expect(of['public.approval_grant']).toEqual(['SELECT', 'INSERT', 'UPDATE']); // its trigger refuses DELETE
    expect(of['public.mikro_orm_migrations']).toEqual(['SELECT']);
    expect(of['graphile_worker.migrations']).toEqual(['SELECT']);
    expect(of['public.approval']).toEqual(readWrite);
    expect(of['graphile_worker._private_jobs']).toEqual(readWrite);
    for (const r of rows) expect({ table: r.table, extra: r.privileges.filter((p) => !readWrite.includes(p)) }).toEqual({ table: r.table, extra: [] });
    expect(rows.length).toBeGreaterThan(15);
  });
});

describe('the grants follow the catalog', () => {
  it('a table of a later migration is granted read-write, or append-only when a refusing trigger guards it; broader grants are revoked', async () => {
    const { ownerUrl } = roleUrls(t.databaseUrl);
    const owner = new pg.Client({ connectionString: ownerUrl });
    await owner.connect();
    try {
      await owner.query(`create table later_state (id int primary key, note text)`);
      await owner.query(`create table later_log (seq bigserial primary key, entry text not null)`);
      await owner.query(`create trigger later_log_no_update before update or delete on later_log for each row execute function audit_append_only()`);
      expect(await sqlstate('select * from later_state')).toBe(PERMISSION_DENIED); // nothing until the grant runs
      // A broader grant left behind (by hand, or by an older version) does not survive.
      await owner.query(`grant all on later_state to ${inject('pgApp').user}`);
      const policies = () => t.sql(`select oid, polrelid::regclass::text as t from pg_policy where polname = 'taskbay_app_rows' order by 2`);
      const before = await policies();
      expect(before.length).toBeGreaterThan(0); // graphile-worker's tables enable row-level security
      await grantAppRole(owner, inject('pgApp').user);
      await grantAppRole(owner, inject('pgApp').user); // idempotent
      // Existing policies are left alone (re-creating them would lock the job queue each start).
      expect(await policies()).toEqual(before);
    } finally {
      await owner.end();
    }
    expect(await sqlstate(`insert into later_state values (1, 'a'); update later_state set note = 'b'; delete from later_state`)).toBeNull();
    expect(await sqlstate(`insert into later_log (entry) values ('a')`)).toBeNull();
    expect(await sqlstate(`update later_log set entry = 'b'`)).toBe(PERMISSION_DENIED);
    expect(await sqlstate(`delete from later_log`)).toBe(PERMISSION_DENIED);
    expect(await sqlstate(`truncate later_state`)).toBe(PERMISSION_DENIED);
  });
});

describe('Taskbay works as the app role', () => {
  it('an approval is opened and decided, the worker delivers it, and the LISTEN loop brings the events; every connection is the app role', async () => {
    const agentId = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
    const seen: string[] = [];
    const events = t.instance.pubsub.subscribe('approval');
    const reading = (async () => {
      for await (const e of events) {
        seen.push(e.type);
        if (e.type === 'delivery.delivered') break;
      }
    })();
    const task = ok(await t.gql(OPS.startTask, { agentId, text: 'approve' })).startTask;
    const opened = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges[0]
      .node;
    ok(await t.gql(OPS.approve, { id: opened.id, revision: opened.revision, digest: opened.digest }));
    const approval = await eventually(async () => {
      const a = ok(await t.gql(`query($id: ID!) { approval(id: $id) { status execution { status } } }`, { id: opened.id })).approval;
      return a.execution?.status === 'DELIVERED' ? a : null;
    });
    expect(approval).toEqual({ status: 'APPROVED', execution: { status: 'DELIVERED' } });
    await reading;
    expect(seen).toEqual(expect.arrayContaining(['approval.requested', 'approval.decided', 'delivery.queued', 'delivery.delivered']));
    expect((await t.gql(OPS.auditChain)).data.auditChain.ok).toBe(true);

    // The ORM, the LISTEN loop and the worker: no Taskbay connection is the owner or a superuser.
    const orm = await t.instance.orm.em.fork().getConnection().execute<{ role: string }[]>('select current_user as role');
    expect(orm).toEqual([{ role: inject('pgApp').user }]);
    const sessions = await t.sql<{ usename: string; listener: boolean }>(
      `select s.usename, s.application_name = $1 as listener from pg_stat_activity s join pg_roles r on r.rolname = s.usename
        where s.datname = current_database() and s.backend_type = 'client backend' and not r.rolsuper`,
      [LISTENER_APPLICATION_NAME],
    );
    expect(sessions.some((s) => s.listener)).toBe(true);
    expect([...new Set(sessions.map((s) => s.usename))]).toEqual([inject('pgApp').user]);
  });

  it('starts with the app URL alone when the schema is current, without a warning', async () => {
    const warnings: string[] = [];
    await prepareDatabase({ appUrl: t.appUrl }, (line) => warnings.push(line));
    expect(warnings).toEqual([]);
  });

  it('cannot migrate: on a database that is behind, the app role alone fails and the owner succeeds', async () => {
    const { appUrl, ownerUrl } = roleUrls(await createTestDatabase({ empty: true }));
    await expect(prepareDatabase({ appUrl }, () => {})).rejects.toMatchObject({ code: PERMISSION_DENIED });
    const warnings: string[] = [];
    await prepareDatabase({ appUrl, ownerUrl }, (line) => warnings.push(line));
    expect(warnings).toEqual([]);
    const c = new pg.Client({ connectionString: appUrl });
    await c.connect();
    try {
      const { rows } = await c.query(`select count(*)::int as n from mikro_orm_migrations`);
      expect(rows[0].n).toBeGreaterThan(0);
      await expect(c.query('truncate audit_event')).rejects.toMatchObject({ code: PERMISSION_DENIED });
    } finally {
      await c.end();
    }
  });

  it('warns once when the one database URL is a superuser or owns the audit tables, naming the setting that fixes it', async () => {
    const superuser: string[] = [];
    await prepareDatabase({ appUrl: t.databaseUrl }, (line) => superuser.push(line));
    expect(superuser).toHaveLength(1);
    expect(superuser[0]).toMatch(/is a superuser/);
    expect(superuser[0]).toMatch(/TASKBAY_MIGRATION_DATABASE_URL/);
    const owner: string[] = [];
    await prepareDatabase({ appUrl: roleUrls(t.databaseUrl).ownerUrl }, (line) => owner.push(line));
    expect(owner).toHaveLength(1);
    expect(owner[0]).toMatch(/owns the audit tables/);
    expect(owner[0]).not.toMatch(/superuser/);
  });
});
