import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `tsx server/scripts/start-time.ts [--runs N] -- COMMAND ...` (docs/PERFORMANCE.md "Start time"):
// runs COMMAND (e.g. `npm start`) N times against one embedded Postgres data directory and
// reports the time from spawning it to the first 200 from /healthz. One unmeasured run first
// creates the cluster, so every measured run is a restart, as after a deploy.

const dash = process.argv.indexOf('--');
const own = process.argv.slice(2, dash < 0 ? undefined : dash);
const command = dash < 0 ? ['npm', 'start'] : process.argv.slice(dash + 1);
const runs = Number(own[own.indexOf('--runs') + 1] ?? 5) || 5;

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

async function once(dataDir: string): Promise<number> {
  const [port, pgPort] = [await freePort(), await freePort()];
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
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

const dataDir = mkdtempSync(join(tmpdir(), 'taskbay-start-'));
try {
  await once(dataDir);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    times.push(await once(dataDir));
    console.log(`run ${i + 1}: ${(times.at(-1)! / 1000).toFixed(2)} s`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(`${command.join(' ')}: median ${(sorted[Math.floor(runs / 2)]! / 1000).toFixed(2)} s, min ${(sorted[0]! / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
