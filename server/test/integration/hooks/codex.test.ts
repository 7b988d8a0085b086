import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestInstance } from '../../support/harness.js';
import {
  crashingNode,
  decide,
  fakeServer,
  markerLines,
  newSession,
  pathWithoutTaskbay,
  ranLines,
  requestFor,
  runHookCli,
  seedEvents,
  settingsSample,
  commandsAskedBy,
  expectSampleWiring,
  hookEnv,
  startHookTestbed,
  stopHookTestbed,
  type HookMember,
} from '../../support/hook-fixtures.js';
import { codexVerdict, HostStandIn, type Settings, type ToolCallResult } from '../../support/hook-host.js';

// `taskbay hook codex` against a real Taskbay, inside a stand-in of the Codex CLI that reads
// docs/samples/codex-hooks.json as Codex does and follows its published rules (support/hook-host.ts):
// every hook error fails open, unknown output fields are an error, a bare allow and "ask" are
// errors, a deny needs a non-empty reason, exit 2 blocks only with a reason on stderr. So only
// Taskbay's deliberate answers keep a command from running, and an approved one runs once.

let t: TestInstance;
let member: HookMember;
let dir: string;
let bin: string;
const SETTINGS = settingsSample('codex-hooks.json');
const PRE = SETTINGS.hooks.PreToolUse![0]!.hooks[0]!;
/** The same settings calling `taskbay hook codex` bare: the CLI must block by itself, without the `|| exit 2` guard. */
const BARE: Settings = JSON.parse(JSON.stringify(SETTINGS).replaceAll(' || exit 2', ''));

const env = (extra: Record<string, string> = {}) => hookEnv({ t, member, bin }, extra);

/** Codex's Bash tool_input: `{command}` only. */
const bash = (command: string) => ({ command });

/** Codex's PreToolUse input (PreToolUseCommandInput's fields). */
const preToolUse = (sessionId: string, cwd: string, command: string) => ({
  session_id: sessionId,
  turn_id: 'turn-3',
  transcript_path: null,
  cwd,
  hook_event_name: 'PreToolUse',
  model: 'gpt-5.5-codex',
  permission_mode: 'default',
  tool_name: 'Bash',
  tool_input: bash(command),
  tool_use_id: 'call_abc123',
});

/** What Taskbay printed never uses what Codex refuses: "ask", a bare allow, a deny without a reason, unknown fields. */
function expectCodexShapes(r: ToolCallResult) {
  for (const h of r.hooks) {
    if (!h.run.stdout) continue;
    const out = JSON.parse(h.run.stdout);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    const s = out.hookSpecificOutput;
    if (h.event === 'PreToolUse') {
      expect(['allow', 'deny']).toContain(s.permissionDecision);
      if (s.permissionDecision === 'allow') expect(typeof s.updatedInput.command).toBe('string');
      else expect(s.permissionDecisionReason.trim()).not.toBe('');
    } else {
      expect(Object.keys(s.decision).sort()).toEqual(s.decision.behavior === 'allow' ? ['behavior'] : ['behavior', 'message']);
    }
  }
}

const asked = () => commandsAskedBy(t, member.email);

beforeAll(async () => {
  // Short, so a consumed grant whose command failed (no PostToolUse) is closed within the test.
  ({ t, member, dir, bin } = await startHookTestbed('taskbay-hooks-codex-', { env: { TASKBAY_COMMAND_OUTCOME_TIMEOUT: '20' } }));
});

afterAll(() => stopHookTestbed(t, dir));

describe('docs/samples/codex-hooks.json', () => {
  it('wires PreToolUse, PermissionRequest and PostToolUse on ^Bash$ to `taskbay hook codex`, with timeouts above the wait', () => {
    expectSampleWiring(SETTINGS, '^Bash$', 'taskbay hook codex || exit 2');
  });
});

describe('taskbay hook codex in Codex', () => {
  it("approved: PreToolUse allows with updatedInput {command}, the approval prompt is that call's, it runs once, EXECUTED; replayed, it is asked again", async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo approved >> ${marker}`;
    const host = new HostStandIn('codex', SETTINGS, { approvalNeeded: true });
    const call = host.bashCall(s, bash(command), 'call_APPROVED');
    const { pid } = await requestFor(t, command);
    expect(markerLines(marker)).toEqual([]);
    await decide(t, 'approve', pid);
    const r = await call;
    expect(r.blockedBy).toBeNull();
    expect(r.hooks.map((h) => [h.event, h.verdict.decision])).toEqual([
      ['PreToolUse', 'allow'],
      ['PermissionRequest', 'allow'],
      ['PostToolUse', 'none'],
    ]);
    expect(JSON.parse(r.hooks[0]!.run.stdout).hookSpecificOutput).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: expect.stringContaining(pid),
      updatedInput: { command },
    });
    expect(JSON.parse(r.hooks[1]!.run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    expectCodexShapes(r);
    expect(markerLines(marker)).toEqual(['approved']);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);

    const replay = await host.bashCall({ ...s, env: env({ TASKBAY_HOOK_WAIT: '2' }) }, bash(command), 'call_APPROVED');
    expect(replay.blockedBy?.event).toBe('PreToolUse');
    expect(replay.hooks[0]!.run).toMatchObject({ code: 2, stderr: expect.stringContaining('[T3_BLOCKED]') });
    expectCodexShapes(replay);
    expect(markerLines(marker)).toEqual(['approved']);
    expect(ranLines(s)).toEqual([command]);
    const again = /approval_id: (P-[0-9a-f]{32})/.exec(replay.blockedBy!.reason)![1]!;
    expect(again).not.toBe(pid);
    await decide(t, 'reject', again);
  }, 90_000);

  it("rejected: blocked by exit 2 with the reviewer's words on stderr (and a JSON deny with a reason); never runs", async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo rejected >> ${marker}`;
    const call = new HostStandIn('codex', SETTINGS, { approvalNeeded: true }).bashCall(s, bash(command), 'call_REJECTED');
    const { pid } = await requestFor(t, command);
    await decide(t, 'reject', pid, 'use the staging bucket');
    const r = await call;
    expect(r.blockedBy?.event).toBe('PreToolUse');
    expect(r.hooks[0]!.run).toMatchObject({ code: 2, stderr: expect.stringContaining('use the staging bucket') });
    expect(r.blockedBy!.reason).toContain(pid);
    expectCodexShapes(r);
    expect(markerLines(marker)).toEqual([]);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'REJECTED']);
  }, 90_000);

  it('expired: blocked saying so; never runs', async () => {
    const s = newSession(dir, env({ TASKBAY_HOOK_EXPIRES: '2' }));
    const marker = join(s.cwd, 'marker');
    const command = `echo expired >> ${marker}`;
    const r = await new HostStandIn('codex', SETTINGS, { approvalNeeded: true }).bashCall(s, bash(command), 'call_EXPIRED');
    expect(r.blockedBy?.reason).toMatch(/expired before anyone decided/);
    expectCodexShapes(r);
    expect(markerLines(marker)).toEqual([]);
  }, 90_000);

  describe('PermissionRequest alone holds the command (no PreToolUse hook: the approval prompt is where Codex asks)', () => {
    const only: Settings = { hooks: { PermissionRequest: SETTINGS.hooks.PermissionRequest!, PostToolUse: SETTINGS.hooks.PostToolUse! } };
    /** The one PermissionRequest answer: Codex reads a deny only from the JSON decision at exit 0 (exit 2 is unconfirmed there). */
    const permissionDecision = (r: ToolCallResult) => {
      expect(r.hooks[0]!.event).toBe('PermissionRequest');
      expect(r.hooks[0]!.run).toMatchObject({ code: 0, stderr: '' });
      const out = JSON.parse(r.hooks[0]!.run.stdout);
      expect(out.hookSpecificOutput.hookEventName).toBe('PermissionRequest');
      return out.hookSpecificOutput.decision;
    };

    it('approved: behavior allow, it runs once, EXECUTED from PostToolUse by session and command', async () => {
      const s = newSession(dir, env());
      const marker = join(s.cwd, 'marker');
      const command = `echo prompt-approved >> ${marker}`;
      const call = new HostStandIn('codex', only, { approvalNeeded: true }).bashCall(s, bash(command), 'call_PROMPTOK');
      const { pid } = await requestFor(t, command);
      expect(markerLines(marker)).toEqual([]);
      await decide(t, 'approve', pid);
      const r = await call;
      expect(r.hooks.map((h) => [h.event, h.verdict.decision])).toEqual([
        ['PermissionRequest', 'allow'],
        ['PostToolUse', 'none'],
      ]);
      expect(permissionDecision(r)).toEqual({ behavior: 'allow' });
      expectCodexShapes(r);
      expect(markerLines(marker)).toEqual(['prompt-approved']);
      expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
    }, 90_000);

    it("rejected: behavior deny with the reviewer's words as the message; never runs", async () => {
      const s = newSession(dir, env());
      const marker = join(s.cwd, 'marker');
      const command = `echo prompt-rejected >> ${marker}`;
      const call = new HostStandIn('codex', only, { approvalNeeded: true }).bashCall(s, bash(command), 'call_PROMPTREJ');
      const { pid } = await requestFor(t, command);
      await decide(t, 'reject', pid, 'not during the freeze');
      const r = await call;
      expect(r.hooks).toHaveLength(1);
      expect(permissionDecision(r)).toEqual({ behavior: 'deny', message: expect.stringContaining('not during the freeze') });
      expect(r.blockedBy).toMatchObject({ event: 'PermissionRequest', reason: expect.stringContaining(pid) });
      expectCodexShapes(r);
      expect(r.ran).toBeNull();
      expect(markerLines(marker)).toEqual([]);
      expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'REJECTED']);
    }, 90_000);

    it('expired: behavior deny saying so; never runs', async () => {
      const s = newSession(dir, env({ TASKBAY_HOOK_EXPIRES: '2' }));
      const marker = join(s.cwd, 'marker');
      const command = `echo prompt-expired >> ${marker}`;
      // No sleep: the deadline sweeper expires it at 2 s, and its approval.expired event ends the hook's wait.
      const r = await new HostStandIn('codex', only, { approvalNeeded: true }).bashCall(s, bash(command), 'call_PROMPTEXP');
      expect(r.hooks).toHaveLength(1);
      expect(permissionDecision(r)).toEqual({
        behavior: 'deny',
        message: expect.stringMatching(/P-[0-9a-f]{32} expired before anyone decided; the command did not run/),
      });
      expect(r.blockedBy?.event).toBe('PermissionRequest');
      expectCodexShapes(r);
      expect(r.ran).toBeNull();
      expect(markerLines(marker)).toEqual([]);
      const { pid } = await requestFor(t, command, 'expired');
      expect(await seedEvents(t, pid)).toEqual(['REQUESTED']);
    }, 90_000);
  });

  it('pending at the end of the wait, then approved: the re-run in the session resumes the request and runs once', async () => {
    const s = newSession(dir, env({ TASKBAY_HOOK_WAIT: '2' }));
    const marker = join(s.cwd, 'marker');
    const command = `echo later >> ${marker}`;
    const host = new HostStandIn('codex', SETTINGS, { approvalNeeded: true });
    const first = await host.bashCall(s, bash(command), 'call_FIRST');
    expect(first.blockedBy?.reason).toMatch(/^\[T3_BLOCKED\] /);
    const pid = /approval_id: (P-[0-9a-f]{32})/.exec(first.blockedBy!.reason)![1]!;
    await decide(t, 'approve', pid);
    const rerun = await host.bashCall(s, bash(command), 'call_SECOND');
    expect(rerun.blockedBy).toBeNull();
    expect(markerLines(marker)).toEqual(['later']);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
  }, 90_000);

  it('approved, but the command fails: no PostToolUse, so the consumed grant becomes FAILED "outcome never reported" after the outcome timeout', async () => {
    const s = newSession(dir, env());
    const command = 'echo failing >&2; exit 3';
    const call = new HostStandIn('codex', SETTINGS).bashCall(s, bash(command), 'call_FAILS');
    const { pid } = await requestFor(t, command);
    await decide(t, 'approve', pid);
    const r = await call;
    expect(r.exitCode).toBe(3);
    expect(r.hooks.map((h) => h.event)).toEqual(['PreToolUse']);
    await eventually(async () => (await seedEvents(t, pid)).includes('FAILED'), 60_000);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'FAILED']);
    const [failed] = await t.sql(`select data from audit_event where data->>'approval_id' = $1 and type = 'FAILED'`, [pid]);
    expect(failed.data.detail).toMatch(/outcome never reported/);
  }, 90_000);
});

describe('taskbay hook codex fails closed', () => {
  it('Taskbay unreachable or answering 5xx: PreToolUse exits 2 with the reason on stderr, PermissionRequest denies in JSON; nothing runs', async () => {
    const gateway = await fakeServer(503, 'Service Unavailable');
    try {
      for (const [url, settings] of [
        ['http://127.0.0.1:9', SETTINGS],
        ['http://127.0.0.1:9', BARE],
        [gateway.url, BARE],
      ] as const) {
        const s = newSession(dir, env({ TASKBAY_URL: url }));
        const marker = join(s.cwd, 'marker');
        const r = await new HostStandIn('codex', settings, { approvalNeeded: true }).bashCall(s, bash(`echo ran >> ${marker}`), 'call_DOWN');
        expect(r.blockedBy?.event).toBe('PreToolUse');
        expect(r.hooks[0]!.run.code).toBe(2);
        expect(r.hooks[0]!.run.stderr).toMatch(/cannot reach Taskbay|answered HTTP 503/);
        expectCodexShapes(r);
        expect(markerLines(marker)).toEqual([]);
        const { tool_use_id: _none, ...permission } = { ...preToolUse(s.sessionId, s.cwd, 'echo x'), hook_event_name: 'PermissionRequest' };
        const p = await runHookCli(['codex'], JSON.stringify(permission), s.env);
        expect(codexVerdict('PermissionRequest', PRE, p)).toMatchObject({ decision: 'block' });
        expect(p.code).toBe(0);
      }
    } finally {
      await gateway.close();
    }
  }, 60_000);

  it("no `taskbay` on the PATH: the settings command exits 2 with the shell's error on stderr, which blocks", async () => {
    const s = newSession(dir, { ...env(), PATH: pathWithoutTaskbay() });
    const marker = join(s.cwd, 'marker');
    const r = await new HostStandIn('codex', SETTINGS).bashCall(s, bash(`echo ran >> ${marker}`), 'call_NOBIN');
    expect(r.hooks[0]!.run.code).toBe(2);
    expect(r.blockedBy?.reason).toMatch(/taskbay.*not found/);
    expect(markerLines(marker)).toEqual([]);
  });

  it('malformed input, an unknown host, a crash path: blocked with a reason on stderr; nothing is asked', async () => {
    const s = newSession(dir, env());
    const before = await asked();
    const good = preToolUse(s.sessionId, s.cwd, 'echo x');
    for (const [args, stdin, extra, why] of [
      [['codex'], '{"hook_event_name": "PreToolUse", "tool_name": ', {}, /not JSON/],
      [['codex'], JSON.stringify({ ...good, session_id: 7 }), {}, /session_id must be a string/],
      [['codex'], JSON.stringify({ ...good, tool_input: 'rm -rf /' }), {}, /tool_input must be an object/],
      [['codex'], JSON.stringify({ ...good, hook_event_name: 'SessionStart' }), {}, /not meant for "SessionStart"/],
      [['codex-cli'], JSON.stringify(good), {}, /not "codex-cli"/],
      [['codex'], JSON.stringify(good), { TASKBAY_URL: 'http://[::1' }, /TASKBAY_URL is not a URL/],
      [['codex'], JSON.stringify(good), { TASKBAY_URL: 'file:///etc/passwd' }, /must be http or https/],
    ] as const) {
      const run = await runHookCli([...args], stdin, { ...s.env, ...extra });
      expect(codexVerdict('PreToolUse', PRE, run), `${args} ${stdin.slice(0, 60)}`).toMatchObject({ decision: 'block', reason: expect.stringMatching(why) });
    }
    expect(await asked()).toBe(before);
  }, 90_000);

  it('a crash inside the CLI, at once or later: exit 2 with the reason on stderr', async () => {
    for (const when of ['at-once', 'later'] as const) {
      const s = newSession(dir, env({ NODE_OPTIONS: crashingNode(dir, when) }));
      const marker = join(s.cwd, 'marker');
      const r = await new HostStandIn('codex', BARE, { approvalNeeded: true }).bashCall(s, bash(`echo ran >> ${marker}`), 'call_CRASH');
      expect(r.blockedBy, when).toMatchObject({ event: 'PreToolUse', reason: expect.stringContaining('injected crash') });
      expect(r.hooks[0]!.run.code).toBe(2);
      expect(markerLines(marker)).toEqual([]);
    }
  }, 60_000);
});
