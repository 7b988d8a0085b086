import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// No Docker engine on this machine kind: docker-compose.yml is checked structurally, with the
// init script and SQL it mounts into the postgres container.
const root = new URL('../../../', import.meta.url);
const raw = readFileSync(new URL('docker-compose.yml', root), 'utf8');
const compose = parse(raw);
const APPS = ['app', 'app2'];

/** `${NAME:?message}`: compose refuses to start while NAME is unset or empty. */
const REQUIRED = /^\$\{([A-Z_]+):\?[^}]+\}$/;
const requiredVariable = (value: string) => REQUIRED.exec(value)?.[1] ?? null;

/** postgres://USER:${VAR:?...}@HOST:PORT/DB (the password part is no valid URL until substituted). */
function databaseUrl(value: string) {
  const m = /^postgres:\/\/([a-z_]+):(\$\{[^}]+\})@([a-z0-9]+):(\d+)\/([a-z_]+)$/.exec(value);
  expect(m, value).not.toBeNull();
  const [, user, password, host, port, database] = m!;
  return { user, passwordVariable: requiredVariable(password!), host, port, database };
}

describe('docker-compose.yml', () => {
  it('has Postgres and two app replicas: the server runs as the app role, migrations as the owner role, on one database', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'app2', 'postgres']);
    const db = compose.services.postgres;
    expect(db.image).toMatch(/^postgres:\d+/);
    for (const name of APPS) {
      const app = compose.services[name];
      const runtime = databaseUrl(app.environment.DATABASE_URL);
      const migrations = databaseUrl(app.environment.TASKBAY_MIGRATION_DATABASE_URL);
      expect(runtime).toEqual({ user: 'taskbay_app', passwordVariable: 'TASKBAY_APP_DB_PASSWORD', host: 'postgres', port: '5432', database: 'taskbay' });
      expect(migrations).toEqual({ ...runtime, user: 'taskbay_owner', passwordVariable: 'TASKBAY_OWNER_DB_PASSWORD' });
      // The postgres container gets the same two passwords to create the roles with.
      expect(requiredVariable(db.environment[runtime.passwordVariable!])).toBe(runtime.passwordVariable);
      expect(requiredVariable(db.environment[migrations.passwordVariable!])).toBe(migrations.passwordVariable);
      expect(app.depends_on.postgres.condition).toBe('service_healthy');
      expect(app.command.join(' ')).toContain('npm start');
    }
  });

  it('refuses to start without TASKBAY_ADMIN_TOKEN and the Postgres passwords: no default secret anywhere', () => {
    for (const name of APPS) expect(requiredVariable(compose.services[name].environment.TASKBAY_ADMIN_TOKEN)).toBe('TASKBAY_ADMIN_TOKEN');
    expect(requiredVariable(compose.services.postgres.environment.POSTGRES_PASSWORD)).toBe('POSTGRES_PASSWORD');
    // Every substitution in the file is a required one (no ${X:-default}, no ${X-default}, no bare ${X}).
    const substitutions = raw.match(/\$\{[^}]*\}/g) ?? [];
    expect(substitutions.length).toBeGreaterThanOrEqual(9);
    for (const s of substitutions) expect(s).toMatch(REQUIRED);
    // Every secret-looking setting of every service is such a reference, or a URL whose password is.
    for (const [service, def] of Object.entries<any>(compose.services)) {
      for (const [key, value] of Object.entries<string>(def.environment ?? {})) {
        if (/PASSWORD|TOKEN|SECRET/.test(key)) expect({ service, key, variable: requiredVariable(value) }).toEqual({ service, key, variable: key });
        if (/^postgres:/.test(value)) expect(databaseUrl(value).passwordVariable).not.toBeNull();
      }
    }
  });

  it('creates the owner and app roles (no superuser, no inheritance for the app) on the first start of the postgres volume', () => {
    const db = compose.services.postgres;
    const mounts = Object.fromEntries((db.volumes as string[]).map((v) => v.split(':')).map(([from, to]) => [to, from]));
    const script = mounts['/docker-entrypoint-initdb.d/10-taskbay-roles.sh'];
    expect(script).toBe('./deploy/postgres/init-taskbay-roles.sh');
    const scriptText = readFileSync(new URL(script!, root), 'utf8');
    const sqlPath = /-f (\S+)/.exec(scriptText)?.[1];
    expect(mounts[sqlPath!]).toBe('./deploy/postgres/roles.sql');
    // The script hands the container's two passwords to the SQL as psql variables.
    const variables = Object.fromEntries([...scriptText.matchAll(/-v (\w+)="\$(\w+)"/g)].map((m) => [m[1], m[2]]));
    expect(variables).toEqual({ owner_password: 'TASKBAY_OWNER_DB_PASSWORD', app_password: 'TASKBAY_APP_DB_PASSWORD' });
    for (const env of Object.values(variables)) expect(db.environment[env]).toBeDefined();

    const sql = readFileSync(new URL(mounts[sqlPath!]!, root), 'utf8').replace(/--.*$/gm, '').replace(/\s+/g, ' ');
    const role = (name: string) => new RegExp(`CREATE ROLE ${name} ([^;]*);`).exec(sql)?.[1]?.split(' ') ?? [];
    const owner = role('taskbay_owner');
    const app = role('taskbay_app');
    expect(owner).toEqual(expect.arrayContaining(['LOGIN', 'NOSUPERUSER', 'NOCREATEDB', 'NOCREATEROLE', 'PASSWORD', ":'owner_password'"]));
    expect(app).toEqual(expect.arrayContaining(['LOGIN', 'NOSUPERUSER', 'NOCREATEDB', 'NOCREATEROLE', 'NOINHERIT', 'NOBYPASSRLS', 'PASSWORD', ":'app_password'"]));
    expect(sql).toContain('CREATE DATABASE taskbay OWNER taskbay_owner;');
    // The app role is given nothing here (Taskbay grants it rows after migrating), least of all a role.
    expect(sql).not.toMatch(/GRANT [^;]* TO taskbay_app/i);
    expect(db.healthcheck.test.join(' ')).toMatch(/pg_isready -h 127\.0\.0\.1 .*-d taskbay/);
  });

  it('publishes each replica on its own host port', () => {
    const ports = APPS.map((n) => compose.services[n].ports[0].split(':')[0]);
    expect(new Set(ports).size).toBe(2);
  });
});
