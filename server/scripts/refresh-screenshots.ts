import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The README's screenshots are refreshed only by this script: it runs the browser tests (which
// write test-results/screenshots, ignored by git) and copies the README's set into
// docs/screenshots. `--no-run` copies what the last run wrote. Build the console first
// (`npm run build`); `npm run screenshots` does both.

const root = fileURLToPath(new URL('../..', import.meta.url));
const from = join(root, 'test-results/screenshots');
const to = join(root, 'docs/screenshots');
export const README_SCREENSHOTS = ['inbox.png', 'approval-confirm.png', 'approval.png', 'task.png', 'inbox-phone.png'];

const started = Date.now();
if (!process.argv.includes('--no-run')) {
  const run = spawnSync('npx', ['vitest', 'run', '--config', 'server/test/e2e/vitest.config.ts'], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error('refresh-screenshots: the browser tests failed; docs/screenshots left as they were.');
    process.exit(run.status ?? 1);
  }
}
mkdirSync(to, { recursive: true });
for (const name of README_SCREENSHOTS) {
  let mtime: number;
  try {
    mtime = statSync(join(from, name)).mtimeMs;
  } catch {
    console.error(`refresh-screenshots: ${join(from, name)} is missing; run the browser tests.`);
    process.exit(1);
  }
  if (!process.argv.includes('--no-run') && mtime < started) {
    console.error(`refresh-screenshots: ${name} was not written by this run.`);
    process.exit(1);
  }
  copyFileSync(join(from, name), join(to, name));
  console.log(`docs/screenshots/${name}`);
}
