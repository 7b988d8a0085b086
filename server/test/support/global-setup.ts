import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { ensureRoles, prepareDatabase, randomPassword, type RoleLogin } from '../../src/db/roles.js';
import { withDatabase, withLogin } from './db-url.js';
import { freePort } from './free-port.js';

// Real Postgres for every test: DATABASE_URL when set (CI runs the suite once that way against
// the machine's server), otherwise an embedded Postgres in a temporary directory. A migrated
// template database is made once; each test file clones it (CREATE DATABASE ... TEMPLATE).
// As in production, the template is migrated by an owner role that grants an app role its
// rights, and Taskbay runs as the app role; tests keep a superuser connection for assertions
// and tampering. Roles are cluster-wide, so each run has its own pair (named by pid), dropped
// at the end.

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser. */
    pgAdminUrl: string;
    pgTemplate: string;
    pgOwner: RoleLogin;
    pgApp: RoleLogin;
  }
}

export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | null = null;
  let dir: string | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dir = mkdtempSync(join(tmpdir(), 'taskbay-test-pg-'));
    embedded = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false });
    adminUrl = embedded.superuserUrl('postgres');
  }
  const template = `taskbay_template_${process.pid}`;
  const owner = { user: `tb_owner_${process.pid}`, password: randomPassword() };
  const app = { user: `tb_app_${process.pid}`, password: randomPassword() };
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await ensureRoles(admin, { owner, app });
  await admin.query(`create database ${template} owner ${owner.user}`);
  await admin.end();
  const templateUrl = withDatabase(adminUrl, template);
  await prepareDatabase({ appUrl: withLogin(templateUrl, app), ownerUrl: withLogin(templateUrl, owner) });

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgOwner', owner);
  project.provide('pgApp', app);
  console.log(`tests use ${embedded ? 'an embedded Postgres' : 'DATABASE_URL'} (template ${template})`);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const { rows } = await c.query(`select datname from pg_database where datname like $1`, [`tb_t_${process.pid}_%`]);
    for (const r of rows) await c.query(`drop database if exists ${r.datname} with (force)`).catch(() => {});
    await c.query(`drop database if exists ${template} with (force)`).catch(() => {});
    for (const role of [app.user, owner.user]) await c.query(`drop role if exists ${role}`).catch(() => {});
    await c.end();
    await embedded?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
