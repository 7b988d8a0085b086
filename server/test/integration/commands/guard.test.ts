import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUARD_EXIT } from '../../../src/commands/cli/client.js';
import { STDERR_TAIL_BYTES } from '../../../src/commands/rules.js';
import { createMember, eventually, OPS, startTestInstance, type TestInstance, ok } from '../../support/harness.js';
import { runCli, type GuardRun } from '../../support/guard-process.js';

// `taskbay guard -- CMD` end to end: the real CLI (npx tsx server/src/cli.ts) against a real
// instance on its port. Seed 002: the hook asks, a person decides, the grant is consumed just
// before the command runs, and EXECUTED / FAILED record the outcome; a command that was not
// approved never runs and leaves no EXECUTED.

let t: TestInstance;
let hook: { id: string; token: string };
let dir: string;

type Run = GuardRun;

/** The `taskbay` CLI as the hook (its token) against this test's instance; see support/guard-process.ts. */
function cli(args: string[], env: Record<string, string> = {}, fast = false): Run {
  return runCli(args, { TASKBAY_URL: t.instance.url, TASKBAY_TOKEN: hook.token, ...env }, fast);
}

async function approvalOf(pid: string) {
  return ok(
    await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { status commands approval { id revision digest status } grant { status } } }`, {
      p: pid,
    }),
  ).commandApproval;
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

  it("a non-zero exit is the guard's exit and is recorded as FAILED with the stderr it showed live (approved with `taskbay approvals approve`)", async () => {
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
    // The failure detail is the status and the command's stderr, which the guard also showed live.
    expect(failed.data).toMatchObject({ exit_code: 3, detail: 'exited with status 3; stderr:\nfailing\n' });
    expect(run.stderr).toMatch(/^failing$/m);
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

  it(`FAILED keeps only the last ${STDERR_TAIL_BYTES} bytes of stderr; all of it was shown live`, async () => {
    const noisy = 'i=0; while [ $i -lt 400 ]; do echo "noise line $i"; i=$((i+1)); done >&2; echo "fatal: the real error" >&2; exit 4';
    const run = cli(['guard', '--timeout', '60', '--', 'sh', '-c', noisy], {}, true);
    const pid = await run.waiting;
    const a = await approvalOf(pid);
    ok(await t.gql(OPS.approve, { id: a.approval.id, revision: a.approval.revision, digest: a.approval.digest }));
    expect(await run.code).toBe(4);
    expect(run.stderr).toMatch(/^noise line 0$/m);
    expect(run.stderr).toMatch(/^fatal: the real error$/m);
    const [failed] = await t.sql(`select data from audit_event where data->>'approval_id' = $1 and type = 'FAILED'`, [pid]);
    const head = `exited with status 4; stderr (last ${STDERR_TAIL_BYTES} bytes):\n`;
    expect(failed.data.detail.startsWith(head)).toBe(true);
    const tail = failed.data.detail.slice(head.length);
    expect(Buffer.byteLength(tail)).toBe(STDERR_TAIL_BYTES);
    expect(tail.endsWith('noise line 399\nfatal: the real error\n')).toBe(true);
    expect(tail).not.toMatch(/^noise line 0$/m);
  }, 60_000);

  it('"scope ... command.split()[0]": the first token of the verbatim (quoted) command, not argv[0]', async () => {
    const run = cli(['guard', '--timeout', '60', '--', 'my tool', '--flag'], {}, true);
    const pid = await run.waiting;
    const view = ok(
      await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { commands payload approval { id revision digest } } }`, { p: pid }),
    ).commandApproval;
    expect(view.commands).toEqual([`'my tool' --flag`]);
    expect(view.payload.scope).toBe(`'my`);
    ok(await t.gql(OPS.reject, { id: view.approval.id, revision: view.approval.revision, digest: view.approval.digest }));
    expect(await run.code).toBe(GUARD_EXIT.NOT_APPROVED);
  }, 60_000);
});

describe('taskbay guard --deny-mode -- CMD (hosts whose hooks can only deny)', () => {
  const AGENT = 'a0deadbeef';
  const deny = (file: string, agent = AGENT) =>
    cli(['guard', '--deny-mode', '--agent-id', agent, '--risk', 'high', '--', 'sh', '-c', `echo ok > ${file}`], {}, true);
  const denial = (stdout: string) => {
    const m = /^\[T3_BLOCKED\] [^\n]+\n(?:[^\n]*\n)*?approval_id: (P-[0-9a-f]{32})\n```json\n([\s\S]*?)\n```\n$/.exec(stdout);
    expect(m, stdout).not.toBeNull();
    return { pid: m![1]!, envelope: JSON.parse(m![2]!) };
  };

  it(`blocked: prints the [T3_BLOCKED] denial with the APPROVAL_REQUEST envelope and exits ${GUARD_EXIT.NOT_APPROVED} at once; the re-run after approval runs once`, async () => {
    const file = join(dir, 'deny.txt');
    const first = deny(file);
    expect(await first.code).toBe(GUARD_EXIT.NOT_APPROVED);
    expect(existsSync(file)).toBe(false);
    const { pid, envelope } = denial(first.stdout);
    const exact = `sh -c 'echo ok > ${file}'`;
    // The envelope is the server's, verbatim.
    const rest = await fetch(`${t.instance.url}/api/command-approvals/${pid}`, { headers: { authorization: `Bearer ${hook.token}` } });
    expect(envelope).toEqual(((await rest.json()) as any).envelope);
    expect(envelope).toMatchObject({
      agent_status: { agent_state: 'APPROVAL_REQUEST', agent_id: AGENT, next_action: 'awaiting user approval' },
      approval_request: { exact_content: exact, scope: 'sh', risk_level: 'high', rollback: null, approval_id: pid },
    });

    // A re-run before the decision: the same request again, nothing new, nothing run.
    const early = deny(file);
    expect(await early.code).toBe(GUARD_EXIT.NOT_APPROVED);
    expect(denial(early.stdout).pid).toBe(pid);
    // Another session running the same command gets its own request.
    const other = deny(file, 'a0feedface');
    expect(await other.code).toBe(GUARD_EXIT.NOT_APPROVED);
    expect(denial(other.stdout).pid).not.toBe(pid);
    expect(existsSync(file)).toBe(false);

    const a = await approvalOf(pid);
    ok(await t.gql(OPS.approve, { id: a.approval.id, revision: a.approval.revision, digest: a.approval.digest }));
    const rerun = deny(file);
    expect(await rerun.code).toBe(0);
    expect(rerun.stdout).not.toContain('[T3_BLOCKED]');
    expect(readFileSync(file, 'utf8')).toBe('ok\n');
    const types = await eventTypes(pid);
    expect(types.filter((x) => ['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED', 'FAILED'].includes(x))).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);

    // The grant was used once: the next run is blocked again with a new request.
    rmSync(file);
    const again = deny(file);
    expect(await again.code).toBe(GUARD_EXIT.NOT_APPROVED);
    expect(denial(again.stdout).pid).not.toBe(pid);
    expect(existsSync(file)).toBe(false);
  }, 90_000);

  it('the sealed payload the guard sends: operation, rationale and verification default when the hook passes none, and are relayed verbatim when it does', async () => {
    const payloadOf = async (pid: string) =>
      ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { payload } }`, { p: pid })).commandApproval.payload;
    const argv = ['git', 'push', 'origin', `main-${Date.now()}`];
    const bare = cli(['guard', '--deny-mode', '--agent-id', AGENT, '--', ...argv], {}, true);
    expect(await bare.code).toBe(GUARD_EXIT.NOT_APPROVED);
    const defaults = denial(bare.stdout);
    // Seed 002: operation "e.g. 'MUTATIVE command intercepted: push'"; rationale "why this T3 needs
    // approval (built from agent + verb)" (ours names the verb: docs/CONFORMANCE.md 002-rationale);
    // verification "how to confirm success after execution".
    const expected = {
      operation: 'MUTATIVE command intercepted: git',
      rationale: "git runs only with a person's approval (taskbay guard)",
      verification: 'the command exits with status 0',
    };
    expect(await payloadOf(defaults.pid)).toMatchObject({ ...expected, exact_content: argv.join(' '), scope: 'git' });
    expect(defaults.envelope.approval_request).toMatchObject(expected);

    const given = {
      operation: 'MUTATIVE command intercepted: push',
      rationale: 'the agent a0deadbeef pushes to main',
      verification: 'git ls-remote shows the commit',
    };
    const told = cli(
      [
        'guard',
        '--deny-mode',
        '--agent-id',
        AGENT,
        '--operation',
        given.operation,
        '--rationale',
        given.rationale,
        '--verification',
        given.verification,
        '--',
        ...argv,
      ],
      {},
      true,
    );
    expect(await told.code).toBe(GUARD_EXIT.NOT_APPROVED);
    const relayed = denial(told.stdout);
    expect(relayed.pid).not.toBe(defaults.pid);
    expect(await payloadOf(relayed.pid)).toMatchObject(given);
    expect(relayed.envelope.approval_request).toMatchObject(given);
  }, 60_000);

  it(`without a session id (--agent-id or TASKBAY_AGENT_ID) it is a usage error (${GUARD_EXIT.USAGE}) and asks nothing`, async () => {
    const before = (await t.sql(`select count(*)::int as n from command_approval`))[0].n;
    const run = cli(['guard', '--deny-mode', '--', 'true'], { TASKBAY_AGENT_ID: '' }, true);
    expect(await run.code).toBe(GUARD_EXIT.USAGE);
    expect(run.stderr).toMatch(/--agent-id/);
    expect((await t.sql(`select count(*)::int as n from command_approval`))[0].n).toBe(before);
  }, 60_000);
});
