import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startInstance, type TaskbayInstance } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { startFixtureAgent, type FixtureAgent } from '../src/fixture-agent/server.js';
import { prepareWorld, propertySeed, PURE_PROPERTIES, runPure, runWorld, WORLD_PROPERTIES, type PropertyResult } from '../test/fuzz/properties.js';

// `npm run fuzz` (issue 14, "Hostile input, generated", the long run): every property of
// server/test/fuzz/properties.ts with `--scale` cases per unit of weight (default 1000: about
// 100,000 pure cases and 5,000 against a running instance on an embedded Postgres this script
// owns, loopback only). Prints per-property counts and failures and the seed; exits 1 on any
// failure. Reproduce a failure with the printed command (the same seed replays the same cases).
//
//   npm run fuzz -- [--seed N] [--scale 1000] [--only <part of a property name>] [--path <fast-check path>]

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const SEED = Number(arg('--seed') ?? randomBytes(4).readUInt32BE() >>> 1);
const SCALE = Number(arg('--scale') ?? 1000);
const ONLY = arg('--only');
const PATH = arg('--path');
if (!Number.isInteger(SEED) || !(SCALE > 0)) {
  console.error('usage: npm run fuzz -- [--seed <integer>] [--scale <cases per weight>] [--only <name part>] [--path <path>]');
  process.exit(2);
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

const selected = <T extends { name: string }>(list: T[]) => list.map((p, i) => ({ p, i })).filter(({ p }) => !ONLY || p.name.includes(ONLY));

function print(r: PropertyResult): void {
  const status = r.failed ? 'FAILED' : 'ok';
  console.log(`${status.padEnd(6)} ${String(r.runs).padStart(7)} cases ${String(r.ms).padStart(7)} ms  ${r.name}`);
  const answered = Object.entries(r.outcomes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  if (answered) console.log(`${' '.repeat(30)}${answered}`);
  if (r.failed) {
    console.log(`         error: ${r.error}`);
    console.log(`         counterexample: ${r.counterexample}`);
    console.log(`         reproduce: npm run fuzz -- --seed ${SEED} --scale ${SCALE} --only ${JSON.stringify(r.name)} --path ${JSON.stringify(r.path)}`);
  }
}

async function main(): Promise<number> {
  console.log(`fuzz: seed ${SEED}, scale ${SCALE}${ONLY ? `, only "${ONLY}"` : ''}`);
  const results: PropertyResult[] = [];
  const started = Date.now();

  for (const { p, i } of selected(PURE_PROPERTIES)) {
    const r = runPure(p, Math.max(1, Math.round(p.weight * SCALE)), propertySeed(SEED, i), PATH);
    results.push(r);
    print(r);
  }

  const worldProps = selected(WORLD_PROPERTIES);
  if (worldProps.length) {
    let dir: string | null = null;
    let db: EmbeddedDatabase | null = null;
    let agent: FixtureAgent | null = null;
    let instance: TaskbayInstance | null = null;
    try {
      // The temporary directory itself holds the cluster: as root, startEmbeddedPostgres opens
      // it to the postgres user (a directory below a 0700 one would stay out of its reach).
      dir = mkdtempSync(join(tmpdir(), 'taskbay-fuzz-'));
      db = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false });
      agent = await startFixtureAgent();
      const adminToken = `tb_admin_${randomBytes(16).toString('hex')}`;
      const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        TASKBAY_ADMIN_TOKEN: adminToken,
        TASKBAY_AUDIT_KEY: randomBytes(32).toString('base64'),
        TASKBAY_DATA_DIR: join(dir, 'taskbay-data'),
      });
      instance = await startInstance(config, db.appUrl, { migrationDatabaseUrl: db.ownerUrl });
      const world = await prepareWorld(instance, adminToken, agent.cardUrl('showcase'));
      for (const { p, i } of worldProps) {
        const r = await runWorld(p, world, Math.max(1, Math.round(p.weight * SCALE)), propertySeed(SEED, PURE_PROPERTIES.length + i), PATH);
        results.push(r);
        print(r);
      }
    } finally {
      await instance?.stop().catch(() => {});
      await agent?.close().catch(() => {});
      await db?.stop().catch(() => {});
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }

  const total = results.reduce((n, r) => n + r.runs, 0);
  const failed = results.filter((r) => r.failed);
  console.log(
    `fuzz: ${total} generated cases over ${results.length} properties in ${Math.round((Date.now() - started) / 1000)} s; ` +
      `${failed.length} failed; seed ${SEED}`,
  );
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`fuzz: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
