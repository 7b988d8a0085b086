import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// No Docker engine on this machine kind: docker-compose.yml is checked structurally, with the
// init script and SQL it mounts into the postgres container, and so is the Dockerfile it builds.
const root = new URL('../../../', import.meta.url);
const raw = readFileSync(new URL('docker-compose.yml', root), 'utf8');
const compose = parse(raw);
const APPS = ['app', 'app2'];
const cliPackage = JSON.parse(readFileSync(new URL('packages/agent-taskbay/package.json', root), 'utf8'));

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | null;
  steps: Instruction[];
}

/** The Dockerfile's stages and instructions (continuation lines joined, comments dropped). */
function dockerfileStages(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line)!;
    if (op!.toUpperCase() === 'FROM') {
      const [from, , name] = args!.split(/\s+/);
      stages.push({ from: from!, name: name ?? null, steps: [] });
    } else stages.at(-1)!.steps.push({ op: op!.toUpperCase(), args: args! });
  }
  return stages;
}
const stages = dockerfileStages(readFileSync(new URL('Dockerfile', root), 'utf8'));
const runtime = stages.at(-1)!;
const build = stages.find((s) => s.steps.some((i) => i.op === 'RUN' && i.args.includes('packages/agent-taskbay/build.mjs')));
const runs = (s: Stage) => s.steps.filter((i) => i.op === 'RUN').map((i) => i.args);
/** The exec form's argv (CMD ["node", ...]). */
const argv = (i: Instruction | undefined) => JSON.parse(i!.args.replace(/^CMD\s+/, '')) as string[];

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
    }
  });

  it('runs the image the Dockerfile builds: no npm ci in a stock image, no repository mounted, one shared data volume', () => {
    const dataDir = runtime.steps.find((i) => i.op === 'ENV' && /TASKBAY_DATA_DIR=/.test(i.args))!.args.match(/TASKBAY_DATA_DIR=(\S+)/)![1];
    for (const name of APPS) {
      const app = compose.services[name];
      expect(app.build).toBe('.');
      expect(app.image).toBeUndefined();
      expect(app.command).toBeUndefined();
      // The audit signing key is in the data dir: both replicas sign with the one key.
      expect(app.volumes).toEqual([`taskbay_data:${dataDir}`]);
    }
    expect(Object.keys(compose.volumes)).toContain('taskbay_data');
    // app migrates; app2 starts once app's health check passes.
    expect(compose.services.app2.depends_on.app.condition).toBe('service_healthy');
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
    expect(app).toEqual(
      expect.arrayContaining(['LOGIN', 'NOSUPERUSER', 'NOCREATEDB', 'NOCREATEROLE', 'NOINHERIT', 'NOBYPASSRLS', 'PASSWORD', ":'app_password'"]),
    );
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

describe('Dockerfile', () => {
  it('builds in one stage and runs in another, on the Node the package supports', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build).toBeDefined();
    expect(build).not.toBe(runtime);
    expect(runs(build!).some((r) => /^npm ci\b/.test(r) && !r.includes('--omit=dev'))).toBe(true);
    const engine = Number(/>=(\d+)/.exec(cliPackage.engines.node)![1]);
    for (const s of stages) expect(Number(/^node:(\d+)/.exec(s.from)?.[1])).toBeGreaterThanOrEqual(engine);
  });

  it('the runtime stage has the compiled server and console and production dependencies only, from the lock', () => {
    const copies = runtime.steps.filter((i) => i.op === 'COPY');
    // From the build stage: exactly what the package publishes ("files": dist and console).
    const fromBuild = copies.filter((i) => i.args.startsWith(`--from=${build!.name} `)).map((i) => i.args.split(/\s+/)[1]);
    expect(fromBuild.sort()).toEqual(cliPackage.files.map((f: string) => `/src/packages/agent-taskbay/${f}`).sort());
    // From the context: manifests only (no sources, no `COPY . .`).
    const fromContext = copies.filter((i) => !i.args.startsWith('--from=')).flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const file of fromContext) expect(file).toMatch(/(^|\/)package(-lock)?\.json$/);
    const installs = runs(runtime).filter((r) => /\bnpm (ci|install|i)\b/.test(r));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/^npm ci --omit=dev --workspace agent-taskbay\b/);
    const cmd = argv(runtime.steps.filter((i) => i.op === 'CMD').at(-1));
    expect(cmd).toEqual(['node', `packages/agent-taskbay/${cliPackage.bin['agent-taskbay']}`, 'serve']);
  });

  it('copies every workspace manifest before each npm ci (the lock names them all)', () => {
    const workspaces = readdirSync(new URL('packages/', root)).map((d) => `packages/${d}/package.json`);
    expect(workspaces).toContain('packages/agent-taskbay/package.json');
    for (const stage of [build!, runtime]) {
      const ci = stage.steps.findIndex((i) => i.op === 'RUN' && /^npm ci\b/.test(i.args));
      const copied = stage.steps
        .slice(0, ci)
        .filter((i) => i.op === 'COPY')
        .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
      expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', ...workspaces]));
    }
  });

  it('runs as a non-root user that owns the data dir, with a health check on /healthz', () => {
    const userAt = runtime.steps.findIndex((i) => i.op === 'USER');
    const user = runtime.steps[userAt]!.args.trim();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    // Nothing runs as root after the switch, and the one directory written belongs to the user.
    expect(runtime.steps.slice(userAt + 1).filter((i) => i.op === 'USER' || i.op === 'RUN')).toEqual([]);
    const dataDir = /TASKBAY_DATA_DIR=(\S+)/.exec(runtime.steps.find((i) => i.op === 'ENV' && i.args.includes('TASKBAY_DATA_DIR='))!.args)![1];
    expect(runs(runtime).some((r) => r.includes(`chown ${user}:${user} ${dataDir}`))).toBe(true);
    const health = runtime.steps.find((i) => i.op === 'HEALTHCHECK')!.args;
    expect(health).toMatch(/--interval=\d+s/);
    expect(health).toContain('/healthz');
    expect(health).toMatch(/process\.exit\(r\.ok \? 0 : 1\)/);
  });

  it('.dockerignore keeps dependencies, build outputs and local state out of the build context', () => {
    const ignored = readFileSync(new URL('.dockerignore', root), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const path of ['node_modules', '.git', '.taskbay', '.env', 'web/dist', 'packages/agent-taskbay/dist', 'packages/agent-taskbay/console'])
      expect(ignored).toContain(path);
  });
});
