import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { migrate, openOrm } from '../../src/db/orm.js';
import { withDatabase } from './db-url.js';

// Real Postgres for every test: DATABASE_URL when set (CI runs the suite once that way against
// the machine's server), otherwise an embedded Postgres in a temporary directory. A migrated
// template database is made once; each test file clones it (CREATE DATABASE ... TEMPLATE).

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | null = null;
  let dir: string | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dir = mkdtempSync(join(tmpdir(), 'taskbay-test-pg-'));
    embedded = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false });
    adminUrl = embedded.url('postgres');
  }
  const template = `taskbay_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  await admin.end();
  const templateUrl = withDatabase(adminUrl, template);
  const orm = await openOrm(templateUrl, 2);
  await migrate(orm, templateUrl);
  await orm.close(true);

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  console.log(`tests use ${embedded ? 'an embedded Postgres' : 'DATABASE_URL'} (template ${template})`);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const { rows } = await c.query(`select datname from pg_database where datname like $1`, [`tb_t_${process.pid}_%`]);
    for (const r of rows) await c.query(`drop database if exists ${r.datname} with (force)`).catch(() => {});
    await c.query(`drop database if exists ${template} with (force)`).catch(() => {});
    await c.end();
    await embedded?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
