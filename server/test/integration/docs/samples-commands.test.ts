import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, eventually, OPS, startTestInstance, type TestInstance, ok } from '../../support/harness.js';
import { runProgram } from '../../support/guard-process.js';
import { REPO_ROOT } from '../../support/repo-root.js';
import { SAMPLES } from '../../support/doc-samples.js';

// The samples of docs/COMMAND-APPROVALS.md (seed 002), run against a real Taskbay on loopback:
// the PreToolUse hook script rewrites a risky command into `taskbay guard`, which then waits for
// a person and runs it once; command-hook.mjs does the same over the REST API and prints the
// envelope shown in command-approval-envelope.json.

let t: TestInstance;
let hook: { id: string; token: string };
let dir: string;
let bin: string;

/** Approves a command approval as the admin (the hook's own token may not). */
async function approve(pid: string) {
  const a = ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { approval { id revision digest } } }`, { p: pid })).commandApproval.approval;
  ok(await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest }));
}
const eventTypes = async (pid: string) =>
  (await t.sql(`select type from audit_event where data->>'approval_id' = $1 order by seq`, [pid])).map((r: any) => r.type as string);

/** The hook script with `stdin` as the host's PreToolUse input, with `taskbay` on its PATH unless `path` says otherwise. */
function runHook(stdin: string, path = `${bin}:${process.env.PATH}`): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('/bin/sh', [`${SAMPLES}/taskbay-guard-hook.sh`], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PATH: path } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  child.stdin.on('error', () => {}); // a hook that blocks before reading its input closes the pipe
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

beforeAll(async () => {
  t = await startTestInstance();
  hook = await createMember(t);
  dir = mkdtempSync(join(tmpdir(), 'taskbay-docs-'));
  // `taskbay` on the PATH, as the hook expects: the repository's CLI.
  bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'taskbay'), `#!/bin/sh\nexec ${REPO_ROOT}node_modules/.bin/tsx ${REPO_ROOT}server/src/cli.ts "$@"\n`);
  chmodSync(join(bin, 'taskbay'), 0o755);
});

afterAll(async () => {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('docs/samples/taskbay-guard-hook.sh', () => {
  it('leaves harmless commands alone and rewrites a risky one into taskbay guard, which runs it once after approval', async () => {
    expect(await runHook(JSON.stringify({ tool_input: { command: 'ls -la' } }))).toEqual({ status: 0, stdout: '', stderr: '' });

    const work = join(dir, 'guarded');
    mkdirSync(join(work, 'build'), { recursive: true });
    const input = { command: 'rm -rf build', description: 'Remove the build', timeout: 120000, run_in_background: false };
    const answer = await runHook(JSON.stringify({ tool_name: 'Bash', tool_input: input }));
    expect(answer.status).toBe(0);
    const out = JSON.parse(answer.stdout);
    // updatedInput replaces the whole input: the other fields stay as they were.
    expect(out).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        updatedInput: { ...input, command: "taskbay guard --risk high -- sh -c 'rm -rf build'" },
      },
    });

    // What the host then runs: the rewritten command, in the agent's directory.
    const run = runProgram('sh', ['-c', out.hookSpecificOutput.updatedInput.command], {
      cwd: work,
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        TASKBAY_URL: t.instance.url,
        TASKBAY_TOKEN: hook.token,
        TASKBAY_STATE_DIR: join(dir, 'state'),
      },
    });
    const pid = await run.waiting;
    expect(existsSync(join(work, 'build'))).toBe(true); // nothing runs before the answer
    await approve(pid);
    expect(await run.code).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
    expect((await eventTypes(pid)).filter((e) => e === 'EXECUTED')).toHaveLength(1);
  }, 90_000);

  it('a command of several lines is guarded whole, not line by line', async () => {
    const answer = await runHook(JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'rm -rf build\necho after' } }));
    expect(JSON.parse(answer.stdout).hookSpecificOutput.updatedInput.command).toBe("taskbay guard --risk high -- sh -c 'rm -rf build\necho after'");
  });

  it('blocks (exit 2) when jq or taskbay is not on the PATH or the input has no command, instead of letting the command through', async () => {
    const risky = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'rm -rf build' } });
    const noTaskbay = await runHook(risky, dirname(process.execPath) + ':/usr/bin:/bin');
    expect(noTaskbay).toMatchObject({ status: 2, stdout: '', stderr: expect.stringContaining('taskbay is not on the PATH') });
    const noJq = await runHook(risky, bin);
    expect(noJq).toMatchObject({ status: 2, stdout: '', stderr: expect.stringContaining('jq is not on the PATH') });
    expect(await runHook('{"tool_input": {}}')).toMatchObject({ status: 2, stderr: expect.stringContaining('no tool_input.command') });
    expect(await runHook('not json')).toMatchObject({ status: 2 });
  });
});

describe('docs/samples/command-hook.mjs', () => {
  it('asks over REST, prints the envelope of command-approval-envelope.json, waits, runs once after approval and reports EXECUTED', async () => {
    const work = join(dir, 'rest');
    mkdirSync(join(work, 'build'), { recursive: true });
    const child = spawn(process.execPath, [`${SAMPLES}/command-hook.mjs`, 'rm -rf build'], {
      cwd: work,
      env: { ...process.env, TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: hook.token, TASKBAY_AGENT_ID: 'a1b2c3' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

    const envelope = await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`command-hook.mjs exited: ${stderr}`);
      try {
        return JSON.parse(stdout);
      } catch {
        return null;
      }
    });
    const pid = envelope.approval_request.approval_id as string;
    expect(pid).toMatch(/^P-[0-9a-f]{32}$/);
    // The sample shows one run's output: the same, but for the approval id (and its 8-hex prefix).
    const shownText = readFileSync(`${SAMPLES}/command-approval-envelope.json`, 'utf8');
    const shownId = /"approval_id": "(P-[0-9a-f]{32})"/.exec(shownText)![1]!;
    const neutral = (text: string, id: string) => JSON.parse(text.replaceAll(id, 'P-ID').replaceAll(id.slice(0, 10), 'P-PREFIX'));
    expect(neutral(stdout, pid)).toEqual(neutral(shownText, shownId));
    expect(existsSync(join(work, 'build'))).toBe(true);

    await approve(pid);
    expect(await exited).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
    const types = await eventTypes(pid);
    expect(types.filter((e) => ['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED', 'FAILED'].includes(e))).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
  }, 90_000);

  it('rejected: exits 2 (what a host reads as blocked) and runs nothing', async () => {
    const work = join(dir, 'rest-rejected');
    mkdirSync(join(work, 'build'), { recursive: true });
    const child = spawn(process.execPath, [`${SAMPLES}/command-hook.mjs`, 'rm -rf build'], {
      cwd: work,
      env: { ...process.env, TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: hook.token, TASKBAY_AGENT_ID: 'a1b2c4' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (b) => (stdout += b));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const pid = await eventually(async () => /"approval_id": "(P-[0-9a-f]{32})"/.exec(stdout)?.[1]);
    const a = ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { approval { id revision digest } } }`, { p: pid })).commandApproval
      .approval;
    ok(await t.gql(OPS.reject, { id: a.id, revision: a.revision, digest: a.digest }));
    expect(await exited).toBe(2);
    expect(existsSync(join(work, 'build'))).toBe(true);
  }, 90_000);

  it('wired as a host hook (the hook input on stdin, no command): exits 2, asks nothing and runs nothing', async () => {
    const work = join(dir, 'rest-as-hook');
    mkdirSync(join(work, 'build'), { recursive: true });
    const before = (await t.sql(`select count(*)::int as n from command_approval`))[0].n;
    const child = spawn(process.execPath, [`${SAMPLES}/command-hook.mjs`], {
      cwd: work,
      env: { ...process.env, TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: hook.token, TASKBAY_AGENT_ID: 'a1b2c5' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += b));
    child.stdin.end(JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf build' } }));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
    expect(stderr).toMatch(/not a host hook/);
    expect(existsSync(join(work, 'build'))).toBe(true);
    expect((await t.sql(`select count(*)::int as n from command_approval`))[0].n).toBe(before);
  }, 30_000);
});
