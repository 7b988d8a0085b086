import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from 'vitest';
import { HOOK_LIMITS } from '../../src/limits.js';
import { createMember, eventually, OPS, ok, startTestInstance, type InstanceOptions, type TestInstance } from './harness.js';
import type { HandlerRun, Session, Settings } from './hook-host.js';
import { REPO_ROOT } from './repo-root.js';
import { sampleJson } from './doc-samples.js';

// What the hook tests around support/hook-host.ts share: the real `taskbay` CLI on the PATH the
// host's hooks see, the settings samples of docs/COMMAND-APPROVALS.md, sessions, and the reviewer.

export const settingsSample = (name: string): Settings => sampleJson(name);

/** A directory holding `taskbay`, the repository's CLI (as `npm install -g` of the package puts it on the PATH). */
export function taskbayOnPath(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'taskbay'), `#!/bin/sh\nexec ${REPO_ROOT}node_modules/.bin/tsx ${REPO_ROOT}server/src/cli.ts "$@"\n`);
  chmodSync(join(bin, 'taskbay'), 0o755);
  return bin;
}

/** The person whose API token a host's hooks use. */
export interface HookMember {
  id: string;
  email: string;
  token: string;
}

/** What a host's hook tests run against: an instance, the member the hooks act for, and a temporary `dir` with `taskbay` on a PATH entry (`bin`). */
export interface HookTestbed {
  t: TestInstance;
  member: HookMember;
  dir: string;
  bin: string;
}

/** Starts the testbed of a host's hook tests (see HookTestbed); the directory is named after `dirPrefix`. */
export async function startHookTestbed(dirPrefix: string, instance: InstanceOptions = {}): Promise<HookTestbed> {
  const t = await startTestInstance(instance);
  try {
    const member = await createMember(t);
    const dir = mkdtempSync(join(tmpdir(), dirPrefix));
    return { t, member, dir, bin: taskbayOnPath(dir) };
  } catch (e) {
    await t.stop();
    throw e;
  }
}

/** Stops the testbed's instance and removes its directory (either may never have been made). */
export async function stopHookTestbed(t: TestInstance | undefined, dir: string | undefined): Promise<void> {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** The environment the host gives its hooks: `taskbay` first on the PATH, Taskbay's URL, the member's token and a 60 s wait, then `extra`. */
export function hookEnv(bed: Pick<HookTestbed, 't' | 'member' | 'bin'>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${bed.bin}:${process.env.PATH}`,
    TASKBAY_URL: bed.t.instance.url,
    TASKBAY_TOKEN: bed.member.token,
    TASKBAY_HOOK_WAIT: '60',
    ...extra,
  };
}

/** How many command approvals the hooks of the person with this email have opened. */
export async function commandsAskedBy(t: TestInstance, email: string): Promise<number> {
  return (await t.sql(`select count(*)::int as n from command_approval c join app_user u on u.id = c.requested_by_id where u.email = $1`, [email]))[0]
    .n as number;
}

/**
 * A settings sample of docs/samples wires PreToolUse, PermissionRequest and PostToolUse, each
 * group on the host's Bash `matcher`, to `command`, with timeouts above the wait.
 */
export function expectSampleWiring(settings: Settings, matcher: string, command: string): void {
  expect(Object.keys(settings.hooks)).toEqual(['PreToolUse', 'PermissionRequest', 'PostToolUse']);
  for (const [event, groups] of Object.entries(settings.hooks)) {
    for (const g of groups) {
      expect(g.matcher).toBe(matcher);
      for (const h of g.hooks) {
        expect(h).toMatchObject({ type: 'command', command });
        // The host cancels a hook at its timeout and then lets the call through: the wait and the relay's margin must end first.
        if (event !== 'PostToolUse') expect(h.timeout!).toBeGreaterThan(HOOK_LIMITS.defaultWaitSeconds + HOOK_LIMITS.relayMarginSeconds);
      }
    }
  }
}

/** PATH without anything that could provide a `taskbay` (node_modules/.bin, the repository). */
export function pathWithoutTaskbay(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !/node_modules[\\/]\.bin$/.test(p) && !p.startsWith(REPO_ROOT) && !existsSync(join(p, 'taskbay')))
    .join(delimiter);
}

/** A host session in its own working directory; what the host runs is appended to `ranLog`. */
export function newSession(dir: string, env: NodeJS.ProcessEnv): Session {
  const sessionId = `sess-${randomBytes(6).toString('hex')}`;
  const cwd = join(dir, sessionId);
  mkdirSync(cwd, { recursive: true });
  return { sessionId, cwd, ranLog: join(cwd, '.ran'), env };
}

/** The lines of what the host ran in the session (none when it ran nothing). */
export const ranLines = (s: Session) => (existsSync(s.ranLog) ? readFileSync(s.ranLog, 'utf8').split('\n').filter(Boolean) : []);
/** The lines the commands themselves appended to a marker file. */
export const markerLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** The command approval Taskbay opened for `command` once it is there (the newest, in the given status). */
export async function requestFor(t: TestInstance, command: string, status = 'pending'): Promise<{ pid: string; id: string }> {
  return eventually(async () => {
    const [row] = await t.sql(`select approval_id, id from command_approval where commands->>0 = $1 and status = $2 order by created_at desc limit 1`, [
      command,
      status,
    ]);
    return row ? { pid: row.approval_id as string, id: row.id as string } : null;
  }, 30_000);
}

export async function decide(t: TestInstance, op: 'approve' | 'reject', pid: string, comment?: string) {
  const a = ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { approval { id revision digest } } }`, { p: pid })).commandApproval.approval;
  ok(await t.gql(OPS[op], { id: a.id, revision: a.revision, digest: a.digest, comment }));
}

export const eventTypes = async (t: TestInstance, pid: string) =>
  (await t.sql(`select type from audit_event where data->>'approval_id' = $1 order by seq`, [pid])).map((r: any) => r.type as string);

/** The seed's events of a command approval, in order. */
export const seedEvents = async (t: TestInstance, pid: string) =>
  (await eventTypes(t, pid)).filter((e) => ['REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'REVOKED'].includes(e));

/** The real `taskbay hook HOST ARGS` as a child process with `stdin`, outside any host. */
export function runHookCli(args: string[], stdin: string | Buffer, env: NodeJS.ProcessEnv): Promise<HandlerRun> {
  return new Promise((resolve) => {
    const child = spawn(join(REPO_ROOT, 'node_modules/.bin/tsx'), [join(REPO_ROOT, 'server/src/cli.ts'), 'hook', ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
    child.on('close', (code) => resolve({ code, stdout, stderr, timedOut: false, failedToStart: false }));
  });
}

/**
 * NODE_OPTIONS that make the CLI crash inside (node:http's request throws, at once or later out of
 * nowhere), without any switch in the CLI for it: what a bug or a broken install would do.
 */
export function crashingNode(dir: string, when: 'at-once' | 'later'): string {
  const file = join(dir, `crash-${when}.mjs`);
  const request =
    when === 'at-once'
      ? `() => { throw new Error('injected crash'); }`
      : `() => { setImmediate(() => { throw new Error('injected crash, later'); }); return { on() { return this; }, end() {}, destroy() {} }; }`;
  writeFileSync(
    file,
    `import http from 'node:http';\nimport { syncBuiltinESMExports } from 'node:module';\nhttp.request = ${request};\nsyncBuiltinESMExports();\n`,
  );
  return `--import=${file}`;
}

/** A server that takes every request and never answers it (a Taskbay hung, a proxy holding the line). */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req) => req.resume());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A server that answers every request with `status` and `body`: what a proxy in front of a Taskbay that is down might say. */
export async function fakeServer(status: number, body: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    _req.resume();
    res.writeHead(status, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
