import { spawn } from 'node:child_process';
import { join } from 'node:path';

// The real `taskbay` CLI as a child process, for the guard and approvals tests: its output, its
// exit code, and the P- id once it prints its waiting line.

const ROOT = new URL('../../../', import.meta.url).pathname;

export interface GuardRun {
  stderr: string;
  stdout: string;
  code: Promise<number>;
  /** Resolves with the P- id once the waiting line is printed. */
  waiting: Promise<string>;
}

/**
 * `npx tsx server/src/cli.ts ARGS` (the `taskbay` command); `fast` runs the same commands through
 * their own entry (server/src/grants/cli.ts), which skips loading the server's modules.
 */
export function runCli(args: string[], env: Record<string, string>, fast = false): GuardRun {
  const [cmd, pre] = fast ? [join(ROOT, 'node_modules/.bin/tsx'), ['server/src/grants/cli.ts']] : ['npx', ['tsx', 'server/src/cli.ts']];
  const child = spawn(cmd, [...pre, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { stderr: '', stdout: '' } as GuardRun;
  let onWaiting!: (id: string) => void;
  run.waiting = new Promise((r) => (onWaiting = r));
  child.stdout.on('data', (d) => (run.stdout += d));
  child.stderr.on('data', (d) => {
    run.stderr += d;
    const m = /waiting for approval of (P-[0-9a-f]{32})/.exec(run.stderr);
    if (m) onWaiting(m[1]!);
  });
  run.code = new Promise((r) => child.on('exit', (code) => r(code ?? -1)));
  return run;
}
