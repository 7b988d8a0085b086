import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from './repo-root.js';

// Taskbay as a child process (`taskbay serve`), for crash tests and the soak: the real CLI, one
// Node process (node --import tsx, no wrapper that would outlive a SIGKILL), loopback only.

/** The message of the JSON log line (log.ts) saying the server is serving. */
const READY = /^Taskbay GraphQL (?:\(with GraphiQL\) )?at http:\/\/localhost:(\d+)\/graphql$/;

/** The port a complete stdout line announces, when it is that JSON log line. */
function readyPort(line: string): number | null {
  let entry: { level?: unknown; msg?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return null;
  }
  const m = entry.level === 'info' && typeof entry.msg === 'string' ? READY.exec(entry.msg) : null;
  return m ? Number(m[1]) : null;
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** Resolves with the exit code (null after a signal) once the process is gone. */
  exited: Promise<number | null>;
  /** Everything the process wrote (stdout and stderr), for diagnostics. */
  output(): string;
  /** SIGKILL: no shutdown code runs. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop. Resolves once the process is gone. */
  stop(): Promise<void>;
  /** Ctrl-C in a terminal: SIGINT to the whole process group (needs ownProcessGroup). */
  interrupt(): Promise<void>;
}

export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 90_000,
  /** `command`/`cwd`: another `serve` than the repository's (the packaged CLI's bin). */
  opts: { ownProcessGroup?: boolean; command?: string[]; cwd?: string } = {},
): Promise<ServerProcess> {
  const [program, ...args] = opts.command ?? [process.execPath, '--import', 'tsx', 'server/src/cli.ts', 'serve'];
  const child: ChildProcess = spawn(program!, args, {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a shell gives a foreground job: a group signal reaches it and
    // whatever it started in that group, and nothing of the test runner.
    detached: opts.ownProcessGroup ?? false,
  });
  let output = '';
  let stdoutLines = '';
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (e) => {
      output += `${e.message}\n`; // not started at all (no such program)
      resolve(null);
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`taskbay serve did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      stdoutLines += chunk.toString('utf8');
      const lines = stdoutLines.split('\n');
      stdoutLines = lines.pop()!;
      for (const line of lines) {
        const port = readyPort(line);
        if (port !== null) {
          clearTimeout(timer);
          resolve(port);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`taskbay serve exited (${code}) before it was ready:\n${output}`));
    });
  });
  const signal = async (s: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(s);
    await exited;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    exited,
    output: () => output,
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGTERM'),
    async interrupt() {
      if (!opts.ownProcessGroup) throw new Error('interrupt() needs ownProcessGroup');
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGINT');
      await exited;
    },
  };
}

/** GraphQL over HTTP against a server process. */
export async function gqlAt<T = any>(
  url: string,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ data?: T; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
}
