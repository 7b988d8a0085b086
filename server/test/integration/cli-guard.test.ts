import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUARD_EXIT } from '../../src/grants/cli.js';
import { createMember, eventually, OPS, startTestInstance, type GqlResult, type TestInstance } from '../support/harness.js';

// `taskbay guard -- CMD` end to end: the real CLI (npx tsx server/src/cli.ts) against a real
// instance on its port. Seed 002: the hook asks, a person decides, the grant is consumed just
// before the command runs, and EXECUTED / FAILED record the outcome; a command that was not
// approved never runs and leaves no EXECUTED.

const ROOT = new URL('../../../', import.meta.url).pathname;
let t: TestInstance;
let hook: { id: string; token: string };
let dir: string;

interface Run {
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
function cli(args: string[], env: Record<string, string> = {}, fast = false): Run {
  const [cmd, pre] = fast ? [join(ROOT, 'node_modules/.bin/tsx'), ['server/src/grants/cli.ts']] : ['npx', ['tsx', 'server/src/cli.ts']];
  const child = spawn(cmd, [...pre, ...args], {
    cwd: ROOT,
    env: { ...process.env, TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: hook.token, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { stderr: '', stdout: '' } as Run;
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

function ok<T = any>(r: GqlResult<T>): T {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data as T;
}

async function approvalOf(pid: string) {
  return ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { status commands approval { id revision digest status } grant { status } } }`, { p: pid }))
    .commandApproval;
}
const eventTypes = async (pid: string) =>
  (await t.sql(`select type from audit_event where data->>'approval_id' = $1 order by seq`, [pid])).map((r: any) => r.type as string);

beforeAll(async () => {
  t = await startTestInstance();
  hook = await createMember(t);
  dir = mkdtempSync(join(tmpdir(), 'taskbay-guard-'));
});

afterAll(async () => {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('taskbay guard -- CMD', () => {
  it('approved from GraphQL: runs once with its own stdio (file written), exits 0, EXECUTED once; the grant is CONSUMED', async () => {
    const file = join(dir, 'approved.txt');
    const run = cli(['guard', '--timeout', '60', '--', 'sh', '-c', `echo ok > ${file}`]);
    const pid = await run.waiting;
    expect(existsSync(file)).toBe(false); // "Nothing the approval covers runs before the answer" (seed 001)
    const a = await approvalOf(pid);
    expect(a.commands).toEqual([`sh -c 'echo ok > ${file}'`]);
    ok(await t.gql(OPS.approve, { id: a.approval.id, revision: a.approval.revision, digest: a.approval.digest }));
    expect(await run.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('ok\n');
    expect(run.stderr).toMatch(/approved; running/);
    const types = await eventTypes(pid);
    expect(types.filter((x) => x === 'EXECUTED')).toHaveLength(1);
    expect(types.filter((x) => ['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED', 'FAILED'].includes(x))).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
    expect((await approvalOf(pid)).grant).toEqual({ status: 'CONSUMED' });
  }, 60_000);

  it(`rejected: never runs (no file), exits ${GUARD_EXIT.NOT_APPROVED}, no EXECUTED`, async () => {
    const file = join(dir, 'rejected.txt');
    const run = cli(['guard', '--timeout', '60', '--', 'sh', '-c', `echo ok > ${file}`]);
    const pid = await run.waiting;
    const a = await approvalOf(pid);
    ok(await t.gql(OPS.reject, { id: a.approval.id, revision: a.approval.revision, digest: a.approval.digest }));
    expect(await run.code).toBe(GUARD_EXIT.NOT_APPROVED);
    expect(existsSync(file)).toBe(false);
    expect(run.stderr).toMatch(/rejected; the command did not run/);
    const types = await eventTypes(pid);
    expect(types).toContain('REJECTED');
    expect(types).not.toContain('EXECUTED');
    expect(await approvalOf(pid)).toMatchObject({ status: 'rejected', grant: null });
  }, 60_000);

  it('a non-zero exit is the guard\'s exit and is recorded as FAILED (approved with `taskbay approvals approve`)', async () => {
    const run = cli(['guard', '--timeout', '60', '--', 'sh', '-c', 'echo failing >&2; exit 3'], {}, true);
    const pid = await run.waiting;
    const list = cli(['approvals', 'list'], { TASKBAY_TOKEN: t.adminToken }, true);
    expect(await list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`PENDING .*COMMAND +${pid}  sh -c 'echo failing >&2; exit 3'`));
    const reviewer = cli(['approvals', 'approve', pid], { TASKBAY_TOKEN: t.adminToken }, true);
    expect(await reviewer.code).toBe(0);
    expect(reviewer.stdout).toMatch(/APPROVE revision 1/);
    expect(await run.code).toBe(3);
    const types = await eventTypes(pid);
    expect(types).toContain('FAILED');
    expect(types).not.toContain('EXECUTED');
    const [failed] = await t.sql(`select data from audit_event where data->>'approval_id' = $1 and type = 'FAILED'`, [pid]);
    expect(failed.data).toMatchObject({ exit_code: 3, detail: 'exited with status 3' });
    const show = cli(['approvals', 'show', pid], {}, true);
    expect(await show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'APPROVED', command: { approvalId: pid, status: 'approved', grant: { status: 'CONSUMED' } } });
  }, 60_000);

  it(`times out (${GUARD_EXIT.EXPIRED}) and an unreachable server (${GUARD_EXIT.UNREACHABLE}): the command never runs`, async () => {
    const f1 = join(dir, 'timeout.txt');
    const f2 = join(dir, 'unreachable.txt');
    const timeout = cli(['guard', '--timeout', '1', '--', 'sh', '-c', `echo ok > ${f1}`], {}, true);
    const unreachable = cli(['guard', '--', 'sh', '-c', `echo ok > ${f2}`], { TASKBAY_URL: 'http://127.0.0.1:9' }, true);
    expect(await timeout.code).toBe(GUARD_EXIT.EXPIRED);
    expect(await unreachable.code).toBe(GUARD_EXIT.UNREACHABLE);
    expect(unreachable.stderr).toMatch(/cannot reach Taskbay/);
    expect(existsSync(f1)).toBe(false);
    expect(existsSync(f2)).toBe(false);
    const pid = await timeout.waiting;
    // The request was asked to expire with the wait, so it does not linger in the inbox.
    await eventually(async () => (await approvalOf(pid)).status === 'expired');
    expect(await eventTypes(pid)).not.toContain('EXECUTED');
  }, 60_000);
});
