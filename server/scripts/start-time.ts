import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `tsx server/scripts/start-time.ts [--runs N] [--in DIR ...] [-- COMMAND ...]` (docs/PERFORMANCE.md
// "Start time"): runs COMMAND (default `npm start`) N times in each DIR (default: here), taking
// turns between the DIRs so that a machine whose load changes affects each alike, and reports the
// time from spawning it to the first 200 from /healthz. Each DIR has its own embedded Postgres
// data directory; one unmeasured run first creates the cluster (and any build), so every measured
// run is a restart, as after a deploy.

const dash = process.argv.indexOf('--');
const own = process.argv.slice(2, dash < 0 ? undefined : dash);
const command = dash < 0 ? ['npm', 'start'] : process.argv.slice(dash + 1);
const runs = Number(own.includes('--runs') ? own[own.indexOf('--runs') + 1] : 5) || 5;
const dirs = own.flatMap((a, i) => (a === '--in' ? [own[i + 1]!] : []));
if (!dirs.length) dirs.push(process.cwd());

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function once(cwd: string, dataDir: string): Promise<number> {
  const [port, pgPort] = [await freePort(), await freePort()];
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), TASKBAY_PG_PORT: String(pgPort), TASKBAY_DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true, // its own process group, as a terminal gives a foreground job
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = started + 120_000;
  for (;;) {
    if (gone) throw new Error(`${command.join(' ')} exited before /healthz answered`);
    if (performance.now() > deadline) throw new Error('no answer from /healthz within 120 s');
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 25)); // polling interval: the resolution of the figure
  }
  const ms = performance.now() - started;
  process.kill(-child.pid!, 'SIGINT'); // Ctrl-C in a terminal
  await exited;
  return ms;
}

const dataDirs = dirs.map(() => mkdtempSync(join(tmpdir(), 'taskbay-start-')));
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
try {
  for (const [i, dir] of dirs.entries()) await once(dir, dataDirs[i]!);
  const times: number[][] = dirs.map(() => []);
  for (let run = 0; run < runs; run++) {
    for (const [i, dir] of dirs.entries()) {
      times[i]!.push(await once(dir, dataDirs[i]!));
      console.log(`${dir} run ${run + 1}: ${seconds(times[i]!.at(-1)!)}`);
    }
  }
  for (const [i, dir] of dirs.entries()) {
    const sorted = [...times[i]!].sort((a, b) => a - b);
    console.log(`${command.join(' ')} in ${dir}: ${times[i]!.map(seconds).join(', ')}; median ${seconds(sorted[Math.floor(runs / 2)]!)}`);
  }
} finally {
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
}
