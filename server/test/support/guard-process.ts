import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './repo-root.js';

// The real `taskbay` CLI as a child process, for the guard and approvals tests: its output, its
// exit code, and the P- id once it prints its waiting line.

export interface GuardRun {
  stderr: string;
  stdout: string;
  code: Promise<number>;
  /** Resolves with the P- id once the waiting line is printed. */
  waiting: Promise<string>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * `npx tsx server/src/cli.ts ARGS` (the `taskbay` command); `fast` runs the same commands through
 * their own entry (server/src/commands/cli.ts), which skips loading the server's modules.
 */
export function runCli(args: string[], env: Record<string, string>, fast = false): GuardRun {
  const [cmd, pre] = fast ? [join(REPO_ROOT, 'node_modules/.bin/tsx'), ['server/src/commands/cli.ts']] : ['npx', ['tsx', 'server/src/cli.ts']];
  return runProgram(cmd, [...pre, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
}

/**
 * Any program the same way (the packaged CLI), in `cwd` with exactly the environment `env`.
 * With `group`, in its own process group, and kill() signals the whole group: a wrapper such as
 * npx does not pass the signal on to the program it started.
 */
export function runProgram(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; group?: boolean }): GuardRun {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.group ?? false });
  const kill = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!opts.group) return void child.kill(signal);
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone already
    }
  };
  const run = { stderr: '', stdout: '', kill } as GuardRun;
  let onWaiting!: (id: string) => void;
  let notWaiting!: (e: Error) => void;
  run.waiting = new Promise((resolve, reject) => {
    onWaiting = resolve;
    notWaiting = reject;
  });
  run.waiting.catch(() => {}); // rejected only for a test that awaits it
  child.stdout.on('data', (d) => (run.stdout += d));
  child.stderr.on('data', (d) => {
    run.stderr += d;
    const m = /waiting for approval of (P-[0-9a-f]{32})/.exec(run.stderr);
    if (m) onWaiting(m[1]!);
  });
  run.code = new Promise((r) => {
    child.on('exit', (code) => r(code ?? -1));
    // Not started at all (no such program): -1 at once, not a test that waits for its timeout.
    child.on('error', (e) => {
      run.stderr += `${e.message}\n`;
      r(-1);
    });
  });
  void run.code.then(() => notWaiting(new Error(`${cmd} ended without waiting for approval:\n${run.stderr}`)));
  return run;
}
