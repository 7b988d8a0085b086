import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_LINK_FILE } from '../../../src/startup-output.js';
import { createTestDatabase, roleUrls } from '../../support/harness.js';
import { REPO_ROOT } from '../../support/repo-root.js';
import { startServerProcess } from '../../support/server-process.js';

// Issue 26, item 7: "`npm start` prints JSON log lines on a terminal, the one-time admin password
// inside one." Now (server/src/startup-output.ts): on a terminal, readable lines with the console
// URL, the one-time sign-in link, where data and keys are; JSON lines otherwise, or when
// TASKBAY_LOG_FORMAT=json asks for them, and then the link is never in a line: it is in a file
// readable only by the server's user, or on the terminal (stderr) when only stdout is collected.
// The terminal is a pseudo-terminal from util-linux's `script` (Debian's bsdutils, essential, so
// in CI too): `taskbay serve` really sees isTTY. One database for all starts: the admin of
// TASKBAY_ADMIN_TOKEN never chooses a password here, so every start shows a link.

const SECRET = /\/set-password#([\w-]{43})/;
const READY_TEXT = 'Stop with Ctrl-C.';
/** Each test starts a server (5 to 10 s here, more on a loaded machine); `until` names what never came first. */
const START_MS = 120_000;
const cleanups: (() => unknown)[] = [];
let env: Record<string, string>;
let dataDir: string;

beforeAll(async () => {
  const { appUrl, ownerUrl } = roleUrls(await createTestDatabase());
  dataDir = mkdtempSync(join(tmpdir(), 'taskbay-startup-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: appUrl,
    TASKBAY_MIGRATION_DATABASE_URL: ownerUrl,
    TASKBAY_ADMIN_TOKEN: `tb_admin_${randomUUID()}`,
    TASKBAY_DATA_DIR: dataDir,
  };
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const SERVE = [process.execPath, '--import', 'tsx', 'server/src/cli.ts', 'serve'].map(quote).join(' ');

interface Run {
  child: ChildProcess;
  output(): string;
  /** Resolves once the output matches, rejects when the process ends first (or after timeoutMs). */
  until(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

/** `taskbay serve` in a pseudo-terminal (`script`), with `shellTail` after the command (a redirection). */
function inTerminal(extraEnv: Record<string, string> = {}, shellTail = ''): Run {
  const child = spawn('script', ['-qfec', `exec ${SERVE}${shellTail}`, '/dev/null'], {
    cwd: REPO_ROOT,
    env: { ...env, ...extraEnv, TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return watch(child);
}

function watch(child: ChildProcess): Run {
  let output = '';
  const waiters = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (const s of [child.stdout!, child.stderr!]) {
    s.on('data', (d: Buffer) => {
      output += d.toString('utf8');
      for (const w of waiters) w();
    });
  }
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    output: () => output,
    exited,
    until(pattern, timeoutMs = START_MS - 10_000) {
      const seen = () => (typeof pattern === 'string' ? output.includes(pattern) : pattern.test(output));
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
        const check = () => seen() && done(null);
        const done = (e: Error | null) => {
          clearTimeout(timer);
          waiters.delete(check);
          e ? reject(e) : resolve();
        };
        waiters.add(check);
        void exited.then((code) => done(seen() ? null : new Error(`exited (${code}) before ${pattern}:\n${output}`)));
        check();
      });
    },
  };
}

/** Ctrl-C typed into the terminal: the terminal sends SIGINT to the server. */
async function ctrlC(run: Run): Promise<number | null> {
  run.child.stdin!.write('\x03');
  return run.exited;
}

/** Whom the link is for, asked of the running server (the link is real, and not used by asking). */
async function linkPerson(consoleUrl: string, secret: string): Promise<string | null> {
  const res = await fetch(`${consoleUrl}graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'query($s: String!) { signInLink(secret: $s) { email } }', variables: { s: secret } }),
  });
  return ((await res.json()) as { data: { signInLink: { email: string } | null } }).data.signInLink?.email ?? null;
}

const lines = (output: string) =>
  output
    .replace(/\r/g, '')
    .split('\n')
    .filter((l) => l.trim() && l !== '^C');
const isJson = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

describe('taskbay serve on a terminal', { timeout: START_MS }, () => {
  it('prints readable lines: the console, the one-time sign-in link, data and keys; no JSON line; Ctrl-C stops it', async () => {
    const run = inTerminal();
    await run.until(READY_TEXT);
    const out = run.output().replace(/\r/g, '');
    const consoleUrl = /^ {2}Console: {3}(http:\/\/localhost:\d+\/)$/m.exec(out)?.[1];
    expect(consoleUrl, out).toBeDefined();
    expect(out).toContain('Taskbay is ready.');
    expect(out).toContain(`  GraphQL:   ${consoleUrl}graphql`);
    expect(out).toContain('  Admin:     admin@localhost (created now, no password yet)');
    expect(out).toMatch(new RegExp(`^ {2}Sign in: {3}${consoleUrl}set-password#[\\w-]{43}$`, 'm'));
    expect(out).toMatch(/one-time link for admin@localhost, valid until \d\d:\d\d: open it and choose a password/);
    expect(out).toContain(`  Data:      ${dataDir}`);
    expect(out).toMatch(/^ {2}Database: {2}DATABASE_URL postgres:\/\/[^@\s]+\/tb_t_\w+$/m); // host and database, no password
    expect(out).toContain(`  Keys:      audit signing     ${join(dataDir, 'audit-signing-key.pem')}`);
    expect(out).toContain(`             approval signing  ${join(dataDir, 'approval-signing-key.pem')}`);
    expect(out).toContain(`             audit pins        ${join(dataDir, 'audit-pins')}`);
    // Log lines are readable too (time, level, message), not JSON.
    expect(out).toMatch(/^\d\d:\d\d:\d\d INFO {2}Started the audit pins/m);
    expect(lines(out).filter(isJson)).toEqual([]);
    expect(existsSync(join(dataDir, SIGN_IN_LINK_FILE))).toBe(false);
    expect(await linkPerson(consoleUrl!, SECRET.exec(out)![1]!)).toBe('admin@localhost');
    expect(await ctrlC(run)).toBe(0);
  });

  it('TASKBAY_LOG_FORMAT=json: JSON lines on the terminal too, and the link only in a file (asking for JSON says the output is collected)', async () => {
    const run = inTerminal({ TASKBAY_LOG_FORMAT: 'json' });
    await run.until(/"msg":"Sign in: [^"]*"/);
    const out = lines(run.output());
    expect(out.filter((l) => !isJson(l))).toEqual([]);
    const { file, consoleUrl } = linkFileOf(out);
    expect(run.output()).not.toMatch(SECRET);
    expect(await linkPerson(consoleUrl, SECRET.exec(readFileSync(file, 'utf8'))![1]!)).toBe('admin@localhost');
    expect(await ctrlC(run)).toBe(0);
  });

  it('stdout collected, stderr a terminal (`serve > log.json`): JSON lines in the log, the link on the terminal only', async () => {
    const log = join(dataDir, 'serve.log.json');
    const run = inTerminal({}, ` > ${quote(log)}`);
    await run.until(SECRET);
    await run.until(/valid until/);
    const shown = run.output().replace(/\r/g, '');
    expect(shown).toMatch(/^Taskbay, sign in:\n {2}Sign in: {3}http:\/\/localhost:\d+\/set-password#[\w-]{43}\n {13}one-time link for admin@localhost/m);
    expect(existsSync(join(dataDir, SIGN_IN_LINK_FILE))).toBe(false);
    // Ready by now: the log's lines are complete once they say where the link went.
    const logged = await eventuallyLines(log, (ls) => ls.some((l) => l.includes('"msg":"Sign in: ')));
    expect(logged.filter((l) => !isJson(l))).toEqual([]);
    expect(logged.join('\n')).not.toMatch(SECRET);
    expect(logged.find((l) => l.includes('"msg":"Sign in: '))).toContain('written to the terminal (stderr)');
    expect(await ctrlC(run)).toBe(0);
  });
});

describe('taskbay serve with pipes (a log collector)', { timeout: START_MS }, () => {
  it('writes JSON lines only; the link is in a file readable only by its user, named by a line, never in one', async () => {
    const server = await startServerProcess(env);
    cleanups.push(() => server.kill());
    await untilOutput(() => server.output(), '"msg":"Sign in: ');
    const out = lines(server.output());
    expect(out.filter((l) => !isJson(l))).toEqual([]);
    const ready = out.map((l) => JSON.parse(l)).find((e) => /^Taskbay GraphQL at /.test(e.msg));
    expect(ready).toMatchObject({
      level: 'info',
      console: expect.stringMatching(/^http:\/\/localhost:\d+\/$/),
      dataDir,
      database: expect.stringMatching(/^DATABASE_URL postgres:\/\/[^@\s]+\/tb_t_\w+$/),
      auditKey: join(dataDir, 'audit-signing-key.pem'),
      approvalKey: join(dataDir, 'approval-signing-key.pem'),
      auditPins: join(dataDir, 'audit-pins'),
    });
    const { file, consoleUrl } = linkFileOf(out);
    expect(file).toBe(join(dataDir, SIGN_IN_LINK_FILE));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(
      /^One-time sign-in link for admin@localhost, valid until \S+; open it to choose a password:\nhttp:\/\/localhost:\d+\/set-password#[\w-]{43}\n$/,
    );
    const secret = SECRET.exec(text)![1]!;
    expect(server.output()).not.toContain(secret);
    expect(await linkPerson(consoleUrl, secret)).toBe('admin@localhost');
    await server.stop();
  });
});

/** The file the "Sign in:" line names, and the console URL of the ready line. */
function linkFileOf(out: string[]): { file: string; consoleUrl: string } {
  const entries = out.map((l) => JSON.parse(l) as Record<string, any>);
  const signIn = entries.find((e) => typeof e.msg === 'string' && e.msg.startsWith('Sign in: '));
  expect(signIn, out.join('\n')).toMatchObject({ email: 'admin@localhost', file: expect.any(String), expiresAt: expect.any(String) });
  expect(signIn!.msg).toContain('(readable only by this user)');
  const consoleUrl = entries.find((e) => /^Taskbay GraphQL at /.test(e.msg))!.console as string;
  return { file: signIn!.file, consoleUrl };
}

/** Waits until output() contains `text` (the server process's collected output). */
async function untilOutput(output: () => string, text: string, timeoutMs = START_MS - 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!output().includes(text)) {
    if (Date.now() > end) throw new Error(`no ${text} within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The file's complete lines once `ok` holds for them. */
async function eventuallyLines(path: string, ok: (lines: string[]) => boolean, timeoutMs = 30_000): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ls = existsSync(path) ? readFileSync(path, 'utf8').split('\n').slice(0, -1) : [];
    if (ok(ls)) return ls;
    if (Date.now() > end) throw new Error(`${path} never had the line:\n${ls.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
