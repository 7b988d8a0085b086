import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_LIMITS } from '../../../src/limits.js';
import { createMember, startTestInstance, type TestInstance, ok } from '../../support/harness.js';
import {
  crashingNode,
  decide,
  fakeServer,
  silentServer,
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
import { claudeCodeVerdict, HostStandIn, type Handler, type Settings } from '../../support/hook-host.js';
import { sampleText } from '../../support/doc-samples.js';

// `taskbay hook claude-code` against a real Taskbay, inside a stand-in of Claude Code that reads
// docs/samples/claude-code-settings.json (and the HTTP form, claude-code-http-hooks.json) as Claude
// Code does and follows its published exit-code and JSON rules (support/hook-host.ts): an approved
// command runs exactly once, with exactly the approved input; a rejected, expired, unanswered or
// unreachable one never runs; PostToolUse records EXECUTED (seed 002).

let t: TestInstance;
let member: HookMember;
let reviewer: HookMember;
let dir: string;
let bin: string;
const SETTINGS = settingsSample('claude-code-settings.json');

const env = (extra: Record<string, string> = {}) => hookEnv({ t, member, bin }, extra);

/** Claude Code's Bash tool_input (hooks reference: command, description, timeout in ms, run_in_background). */
const bash = (command: string) => ({ command, description: 'Run it', timeout: 120000, run_in_background: false });
const PRE_HANDLER = SETTINGS.hooks.PreToolUse![0]!.hooks[0]!;
/** The same settings calling `taskbay hook claude-code` bare: the CLI must block by itself, without the `|| exit 2` guard. */
const BARE: Settings = JSON.parse(JSON.stringify(SETTINGS).replaceAll(' || exit 2', ''));

/** One tool call's PreToolUse input, as the hooks reference shows it. */
const preToolUse = (sessionId: string, cwd: string, command: string, toolUseId = 'toolu_01ABC') => ({
  session_id: sessionId,
  prompt_id: '550e8400-e29b-41d4-a716-446655440000',
  transcript_path: `/home/user/.claude/projects/x/${sessionId}.jsonl`,
  cwd,
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: bash(command),
  tool_use_id: toolUseId,
});

/** How many command approvals the member's hook has opened. */
const asked = () => commandsAskedBy(t, member.email);

/** The reviewer (another person than the admin `decide` acts as) rejects `pid` with `words`, so a denial can be checked to name them. */
async function rejectAsReviewer(pid: string, words: string) {
  const a = ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { approval { id revision digest } } }`, { p: pid })).commandApproval.approval;
  ok(
    await t.gql(
      `mutation($id: ID!, $r: Int!, $d: String!, $c: String) { reject(input: { approvalId: $id, revision: $r, digest: $d, comment: $c }) { id } }`,
      { id: a.id, r: a.revision, d: a.digest, c: words },
      reviewer.token,
    ),
  );
}

beforeAll(async () => {
  ({ t, member, dir, bin } = await startHookTestbed('taskbay-hooks-cc-'));
  reviewer = await createMember(t, { role: 'ADMIN' });
});

afterAll(() => stopHookTestbed(t, dir));

describe('docs/samples/claude-code-settings.json', () => {
  it('wires PreToolUse, PermissionRequest and PostToolUse on Bash to `taskbay hook claude-code`, with timeouts above the wait', () => {
    expectSampleWiring(SETTINGS, 'Bash', 'taskbay hook claude-code || exit 2');
  });
});

describe('taskbay hook claude-code in Claude Code (command hooks)', () => {
  it('approved: allowed with exactly the approved input, runs once, EXECUTED; the same PreToolUse replayed is asked again and never runs', async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo approved >> ${marker}`;
    const host = new HostStandIn('claude-code', SETTINGS);
    const call = host.bashCall(s, bash(command), 'toolu_01APPROVED');
    const { pid } = await requestFor(t, command);
    expect(markerLines(marker)).toEqual([]); // nothing runs before the decision
    await decide(t, 'approve', pid);
    const r = await call;
    expect(r.blockedBy).toBeNull();
    expect(markerLines(marker)).toEqual(['approved']);
    const pre = r.hooks[0]!;
    expect(pre.run.code).toBe(0);
    expect(JSON.parse(pre.run.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: expect.stringContaining(pid),
        updatedInput: bash(command),
      },
    });
    // "allow" skips the permission prompt; the clean exit fires PostToolUse, which closes the audit cycle.
    expect(r.hooks.map((h) => h.event)).toEqual(['PreToolUse', 'PostToolUse']);
    expect(r.hooks[1]!.run).toMatchObject({ code: 0, stdout: '' });
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);

    // The host replays the same PreToolUse: the grant is used, so it is a new request, and it does not run.
    const replay = await host.bashCall({ ...s, env: env({ TASKBAY_HOOK_WAIT: '2' }) }, bash(command), 'toolu_01APPROVED');
    expect(replay.blockedBy?.event).toBe('PreToolUse');
    const again = /approval_id: (P-[0-9a-f]{32})/.exec(replay.blockedBy!.reason)?.[1];
    expect(again).toBeDefined();
    expect(again).not.toBe(pid);
    expect(markerLines(marker)).toEqual(['approved']);
    expect(ranLines(s)).toEqual([command]);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
    await decide(t, 'reject', again!);
  }, 90_000);

  it("rejected: denied with the reviewer's words and who rejected (exit 2, JSON deny); never runs", async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo rejected >> ${marker}`;
    const call = new HostStandIn('claude-code', SETTINGS).bashCall(s, bash(command), 'toolu_01REJECTED');
    const { pid } = await requestFor(t, command);
    const words = 'not on the shared checkout, use a branch';
    await rejectAsReviewer(pid, words);
    const r = await call;
    expect(r.blockedBy?.event).toBe('PreToolUse');
    expect(r.blockedBy!.reason).toContain(words);
    expect(r.blockedBy!.reason).toContain(reviewer.email);
    expect(r.blockedBy!.reason).toContain(pid);
    const pre = r.hooks[0]!;
    expect(pre.run.code).toBe(2);
    expect(pre.run.stderr).toContain(words);
    expect(JSON.parse(pre.run.stdout).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(r.ran).toBeNull();
    expect(markerLines(marker)).toEqual([]);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'REJECTED']);
  }, 90_000);

  it('expired: denied saying so; never runs', async () => {
    const s = newSession(dir, env({ TASKBAY_HOOK_EXPIRES: '2' }));
    const marker = join(s.cwd, 'marker');
    const command = `echo expired >> ${marker}`;
    const r = await new HostStandIn('claude-code', SETTINGS).bashCall(s, bash(command), 'toolu_01EXPIRED');
    expect(r.blockedBy?.event).toBe('PreToolUse');
    expect(r.blockedBy!.reason).toMatch(/P-[0-9a-f]{32} expired before anyone decided; the command did not run/);
    expect(r.hooks[0]!.run.code).toBe(2);
    expect(markerLines(marker)).toEqual([]);
    const { pid } = await requestFor(t, command, 'expired');
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED']);
  }, 90_000);

  it("still pending at the end of the wait: seed 002's blocked denial; the same command run again after the approval resumes that request and runs once", async () => {
    const s = newSession(dir, env({ TASKBAY_HOOK_WAIT: '2' }));
    const marker = join(s.cwd, 'marker');
    const command = `echo later >> ${marker}`;
    const host = new HostStandIn('claude-code', SETTINGS);
    const first = await host.bashCall(s, bash(command), 'toolu_01FIRST');
    expect(first.blockedBy?.event).toBe('PreToolUse');
    const reason = first.blockedBy!.reason;
    expect(reason).toMatch(/^\[T3_BLOCKED\] /);
    expect(reason).toMatch(/Run the same command again after it is approved/);
    const pid = /approval_id: (P-[0-9a-f]{32})/.exec(reason)![1]!;
    expect(markerLines(marker)).toEqual([]);
    // The envelope in the denial is the server's, verbatim (seed 002: the agent relays it).
    const envelope = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(reason)![1]!);
    const rest = await fetch(`${t.instance.url}/api/command-approvals/${pid}`, { headers: { authorization: `Bearer ${member.token}` } });
    expect(envelope).toEqual(((await rest.json()) as { envelope: unknown }).envelope);

    await decide(t, 'approve', pid);
    const rerun = await host.bashCall(s, bash(command), 'toolu_01SECOND');
    expect(rerun.blockedBy).toBeNull();
    expect(JSON.parse(rerun.hooks[0]!.run.stdout).hookSpecificOutput.permissionDecisionReason).toContain(pid);
    expect(markerLines(marker)).toEqual(['later']);
    expect(await t.sql(`select approval_id from command_approval where commands->>0 = $1`, [command])).toEqual([{ approval_id: pid }]);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
  }, 90_000);

  it('with ask rules after an allow: the PermissionRequest of the call just allowed is allowed once, without a second grant', async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo asked >> ${marker}`;
    const host = new HostStandIn('claude-code', SETTINGS, { askAfterAllow: true });
    const call = host.bashCall(s, bash(command), 'toolu_01ASK');
    const { pid } = await requestFor(t, command);
    await decide(t, 'approve', pid);
    const r = await call;
    expect(r.hooks.map((h) => [h.event, h.verdict.decision])).toEqual([
      ['PreToolUse', 'allow'],
      ['PermissionRequest', 'allow'],
      ['PostToolUse', 'none'],
    ]);
    expect(JSON.parse(r.hooks[1]!.run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    expect(markerLines(marker)).toEqual(['asked']);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
    // That prompt is answered once: another PermissionRequest for the same command is a new request.
    const prompt = new HostStandIn('claude-code', { hooks: { PermissionRequest: SETTINGS.hooks.PermissionRequest! } });
    const again = await prompt.bashCall({ ...s, env: env({ TASKBAY_HOOK_WAIT: '1' }) }, bash(command), 'toolu_01ASK2');
    expect(again.blockedBy).toMatchObject({ event: 'PermissionRequest', reason: expect.stringMatching(/^\[T3_BLOCKED\]/) });
    expect(markerLines(marker)).toEqual(['asked']);
    await decide(t, 'reject', (await requestFor(t, command)).pid);
  }, 90_000);

  it('PermissionRequest alone holds the command: allowed after approval (EXECUTED from PostToolUse by session and command), denied in the JSON decision otherwise', async () => {
    const only: Settings = { hooks: { PermissionRequest: SETTINGS.hooks.PermissionRequest!, PostToolUse: SETTINGS.hooks.PostToolUse! } };
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo prompted >> ${marker}`;
    const host = new HostStandIn('claude-code', only);
    const call = host.bashCall(s, bash(command), 'toolu_01PROMPT');
    const { pid } = await requestFor(t, command);
    await decide(t, 'approve', pid);
    const r = await call;
    expect(r.hooks.map((h) => [h.event, h.verdict.decision])).toEqual([
      ['PermissionRequest', 'allow'],
      ['PostToolUse', 'none'],
    ]);
    expect(markerLines(marker)).toEqual(['prompted']);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);

    const denied = `echo denied >> ${marker}`;
    const call2 = host.bashCall(s, bash(denied), 'toolu_01PROMPT2');
    await decide(t, 'reject', (await requestFor(t, denied)).pid, 'no');
    const r2 = await call2;
    // Exit 2 is not honoured for PermissionRequest: the deny is in the JSON decision, at exit 0.
    expect(r2.hooks[0]!.run.code).toBe(0);
    expect(JSON.parse(r2.hooks[0]!.run.stdout).hookSpecificOutput.decision).toMatchObject({ behavior: 'deny', message: expect.stringContaining('rejected') });
    expect(r2.blockedBy?.event).toBe('PermissionRequest');
    expect(markerLines(marker)).toEqual(['prompted']);
  }, 90_000);

  it('PermissionRequest alone, expired: denied in the JSON decision at exit 0, saying so; never runs', async () => {
    const only: Settings = { hooks: { PermissionRequest: SETTINGS.hooks.PermissionRequest!, PostToolUse: SETTINGS.hooks.PostToolUse! } };
    const s = newSession(dir, env({ TASKBAY_HOOK_EXPIRES: '2' }));
    const marker = join(s.cwd, 'marker');
    const command = `echo prompt-expired >> ${marker}`;
    // No sleep: the deadline sweeper expires it at 2 s, and its approval.expired event ends the hook's wait.
    const r = await new HostStandIn('claude-code', only).bashCall(s, bash(command), 'toolu_01PROMPTEXP');
    expect(r.hooks.map((h) => h.event)).toEqual(['PermissionRequest']);
    expect(r.hooks[0]!.run.code).toBe(0);
    expect(JSON.parse(r.hooks[0]!.run.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: expect.stringMatching(/P-[0-9a-f]{32} expired before anyone decided; the command did not run/) },
      },
    });
    expect(r.blockedBy?.event).toBe('PermissionRequest');
    expect(r.ran).toBeNull();
    expect(markerLines(marker)).toEqual([]);
    const { pid } = await requestFor(t, command, 'expired');
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED']);
  }, 90_000);
});

describe('taskbay hook claude-code fails closed', () => {
  it('Taskbay unreachable: PreToolUse blocked (exit 2, JSON deny), PermissionRequest denied in JSON at exit 0; nothing runs', async () => {
    for (const settings of [SETTINGS, BARE]) {
      const s = newSession(dir, env({ TASKBAY_URL: 'http://127.0.0.1:9' }));
      const marker = join(s.cwd, 'marker');
      const command = `echo unreachable >> ${marker}`;
      const r = await new HostStandIn('claude-code', settings).bashCall(s, bash(command), 'toolu_01DOWN');
      expect(r.blockedBy).toMatchObject({ event: 'PreToolUse', reason: expect.stringContaining('cannot reach Taskbay') });
      expect(r.hooks[0]!.run.code).toBe(2);
      expect(JSON.parse(r.hooks[0]!.run.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
      expect(markerLines(marker)).toEqual([]);
      // PermissionRequest on its own (the host asks without a PreToolUse hook): exit 2 would not count there.
      const permission = await new HostStandIn('claude-code', { hooks: { PermissionRequest: settings.hooks.PermissionRequest! } }).bashCall(
        s,
        bash(command),
        'toolu_01DOWN2',
      );
      expect(permission.blockedBy).toMatchObject({ event: 'PermissionRequest', reason: expect.stringContaining('cannot reach Taskbay') });
      expect(permission.hooks[0]!.run.code).toBe(0);
      expect(JSON.parse(permission.hooks[0]!.run.stdout).hookSpecificOutput).toMatchObject({
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: expect.stringContaining('cannot reach Taskbay') },
      });
      expect(markerLines(marker)).toEqual([]);
    }
  }, 60_000);

  it('Taskbay stops while the command waits: blocked; nothing runs', async () => {
    const t2 = await startTestInstance();
    try {
      const m2 = await createMember(t2);
      const s = newSession(dir, env({ TASKBAY_URL: t2.instance.url, TASKBAY_TOKEN: m2.token }));
      const marker = join(s.cwd, 'marker');
      const command = `echo stopped >> ${marker}`;
      const call = new HostStandIn('claude-code', BARE).bashCall(s, bash(command), 'toolu_01STOP');
      await requestFor(t2, command);
      await t2.instance.stop();
      const r = await call;
      expect(r.blockedBy?.event).toBe('PreToolUse');
      expect(r.hooks[0]!.run.code).toBe(2);
      expect(markerLines(marker)).toEqual([]);
    } finally {
      await t2.stop().catch(() => {});
    }
  }, 90_000);

  it("a 5xx, an answer that is not Taskbay's, a TASKBAY_URL that is no URL, no token: blocked, nothing runs", async () => {
    const gateway = await fakeServer(502, '<html>Bad gateway</html>');
    const portal = await fakeServer(200, '<html>Sign in to the network</html>');
    try {
      for (const [extra, why] of [
        [{ TASKBAY_URL: gateway.url }, /answered HTTP 502/],
        [{ TASKBAY_URL: portal.url }, /not its hook answer/],
        [{ TASKBAY_URL: 'http://[::1' }, /TASKBAY_URL is not a URL/],
        [{ TASKBAY_TOKEN: '' }, /TASKBAY_TOKEN is not set/],
        [{ TASKBAY_TOKEN: 'tb_not_a_token' }, /refused the API token/],
      ] as const) {
        const s = newSession(dir, env(extra));
        const marker = join(s.cwd, 'marker');
        const r = await new HostStandIn('claude-code', BARE).bashCall(s, bash(`echo ran >> ${marker}`), 'toolu_01BAD');
        expect(r.blockedBy?.reason, JSON.stringify(extra)).toMatch(why);
        expect(r.hooks[0]!.run.code).toBe(2);
        expect(markerLines(marker)).toEqual([]);
      }
    } finally {
      await gateway.close();
      await portal.close();
    }
  }, 90_000);

  it('no answer within the wait and the relay margin: blocked before the host would time the hook out', async () => {
    const silent = await silentServer();
    try {
      const s = newSession(dir, env({ TASKBAY_URL: silent.url, TASKBAY_HOOK_WAIT: '1' }));
      const marker = join(s.cwd, 'marker');
      const r = await new HostStandIn('claude-code', BARE).bashCall(s, bash(`echo ran >> ${marker}`), 'toolu_01SILENT');
      expect(r.blockedBy).toMatchObject({ event: 'PreToolUse', reason: expect.stringContaining(`no answer within ${1 + HOOK_LIMITS.relayMarginSeconds}s`) });
      expect(r.hooks[0]!.run).toMatchObject({ code: 2, timedOut: false });
      expect(markerLines(marker)).toEqual([]);
    } finally {
      await silent.close();
    }
  }, 60_000);

  it("no `taskbay` on the PATH: the settings command still blocks (exit 2 with the shell's error), where a bare `taskbay hook` would exit 127 and let it run", async () => {
    const s = newSession(dir, { ...env(), PATH: pathWithoutTaskbay() });
    const marker = join(s.cwd, 'marker');
    const r = await new HostStandIn('claude-code', SETTINGS).bashCall(s, bash(`echo ran >> ${marker}`), 'toolu_01NOBIN');
    expect(r.hooks[0]!.run.code).toBe(2);
    expect(r.blockedBy?.reason).toMatch(/taskbay.*not found/);
    expect(markerLines(marker)).toEqual([]);
    // The same without `|| exit 2`: the first run (exit 127, a non-blocking error).
    const bare: Settings = { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ ...PRE_HANDLER, command: 'taskbay hook claude-code' }] }] } };
    const open = await new HostStandIn('claude-code', bare).bashCall(s, bash(`echo ran >> ${marker}`), 'toolu_01NOBIN2');
    expect(open.hooks[0]!.run.code).toBe(127);
    expect(markerLines(marker)).toEqual(['ran']);
  }, 60_000);

  it('malformed input, an unknown host, a bad option: blocked by the CLI with a clear reason; nothing is asked', async () => {
    const s = newSession(dir, env());
    const before = await asked();
    const good = preToolUse(s.sessionId, s.cwd, 'echo x');
    const cases: [string[], string, RegExp][] = [
      [['claude-code'], 'not json', /not JSON/],
      [['claude-code'], '', /not JSON/],
      [['claude-code'], JSON.stringify({ hook_event_name: 'PreToolUse' }), /malformed: session_id is missing/],
      [['claude-code'], JSON.stringify({ ...good, tool_use_id: undefined }), /malformed: tool_use_id is missing/],
      [['claude-code'], JSON.stringify({ ...good, tool_input: { command: 42 } }), /tool_input.command must be a non-empty string/],
      [['claude-code'], JSON.stringify({ ...good, hook_event_name: 'Stop' }), /not meant for "Stop"/],
      [['claude-code'], 'x'.repeat(HOOK_LIMITS.bodyMaxBytes + 1), /larger than/],
      [['cursor'], JSON.stringify(good), /answers claude-code and codex, not "cursor"/],
      [['claude-code', '--wait', 'soon'], JSON.stringify(good), /--wait/],
      [['claude-code', '--nope'], JSON.stringify(good), /Unknown option/],
    ];
    for (const [args, stdin, why] of cases) {
      const run = await runHookCli(args, stdin, s.env);
      const verdict = claudeCodeVerdict('PreToolUse', PRE_HANDLER, run);
      expect(verdict, `${args.join(' ')} ${stdin.slice(0, 80)}`).toMatchObject({ decision: 'block', reason: expect.stringMatching(why) });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(why);
    }
    expect(await asked()).toBe(before);
  }, 90_000);

  it('a crash inside the CLI, at once or later: blocked with the reason', async () => {
    for (const when of ['at-once', 'later'] as const) {
      const s = newSession(dir, env({ NODE_OPTIONS: crashingNode(dir, when) }));
      const marker = join(s.cwd, 'marker');
      const r = await new HostStandIn('claude-code', BARE).bashCall(s, bash(`echo ran >> ${marker}`), 'toolu_01CRASH');
      expect(r.blockedBy, when).toMatchObject({ event: 'PreToolUse', reason: expect.stringContaining('injected crash') });
      expect(r.hooks[0]!.run.code).toBe(2);
      expect(markerLines(marker)).toEqual([]);
    }
  }, 60_000);
});

describe('the HTTP hook form (docs/samples/claude-code-http-hooks.json)', () => {
  const httpSettings = (url: string, onFailure = true): Settings => {
    const s: Settings = JSON.parse(sampleText('claude-code-http-hooks.json').replaceAll('http://localhost:4000', url));
    if (!onFailure) for (const groups of Object.values(s.hooks)) for (const g of groups) for (const h of g.hooks) delete (h as Handler).onFailure;
    return s;
  };

  it('approved: Claude Code posts the hook input to /api/hooks/claude-code and runs the approved command once; EXECUTED', async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo http >> ${marker}`;
    const call = new HostStandIn('claude-code', httpSettings(t.instance.url)).bashCall(s, bash(command), 'toolu_01HTTP');
    const { pid } = await requestFor(t, command);
    await decide(t, 'approve', pid);
    const r = await call;
    expect(r.blockedBy).toBeNull();
    expect(r.hooks.map((h) => [h.event, h.run.code])).toEqual([
      ['PreToolUse', 200],
      ['PostToolUse', 200],
    ]);
    expect(JSON.parse(r.hooks[0]!.run.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'allow', updatedInput: bash(command) });
    expect(r.hooks[1]!.run.stdout).toBe(''); // 2xx with an empty body: nothing to decide
    expect(markerLines(marker)).toEqual(['http']);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'SHOWN', 'APPROVED', 'EXECUTED']);
  }, 90_000);

  it("rejected: 200 with a JSON deny carrying the reviewer's words and who rejected; never runs, no PostToolUse", async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo http-rejected >> ${marker}`;
    const call = new HostStandIn('claude-code', httpSettings(t.instance.url)).bashCall(s, bash(command), 'toolu_01HTTPREJ');
    const { pid } = await requestFor(t, command);
    const words = 'not from the HTTP hook, ask in #deploys first';
    await rejectAsReviewer(pid, words);
    const r = await call;
    expect(r.hooks.map((h) => [h.event, h.run.code])).toEqual([['PreToolUse', 200]]);
    const reason = JSON.parse(r.hooks[0]!.run.stdout).hookSpecificOutput;
    expect(reason).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: expect.stringContaining(words) });
    expect(reason.permissionDecisionReason).toContain(reviewer.email);
    expect(reason.permissionDecisionReason).toContain(pid);
    expect(r.blockedBy).toEqual({ event: 'PreToolUse', reason: reason.permissionDecisionReason });
    expect(r.ran).toBeNull();
    expect(markerLines(marker)).toEqual([]);
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED', 'REJECTED']);
  }, 90_000);

  it('expired (?expires=2 on the URL): 200 with a JSON deny saying so; never runs', async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const command = `echo http-expired >> ${marker}`;
    const settings: Settings = JSON.parse(
      JSON.stringify(httpSettings(t.instance.url)).replaceAll('/api/hooks/claude-code', '/api/hooks/claude-code?expires=2'),
    );
    // No sleep: the deadline sweeper expires it at 2 s, and its approval.expired event ends the hook's wait.
    const r = await new HostStandIn('claude-code', settings).bashCall(s, bash(command), 'toolu_01HTTPEXP');
    expect(r.hooks.map((h) => [h.event, h.run.code])).toEqual([['PreToolUse', 200]]);
    expect(JSON.parse(r.hooks[0]!.run.stdout).hookSpecificOutput).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/P-[0-9a-f]{32} expired before anyone decided; the command did not run/),
    });
    expect(r.blockedBy?.event).toBe('PreToolUse');
    expect(r.ran).toBeNull();
    expect(markerLines(marker)).toEqual([]);
    const { pid } = await requestFor(t, command, 'expired');
    expect(await seedEvents(t, pid)).toEqual(['REQUESTED']);
  }, 90_000);

  it('refusals are 200 with a deny in the body (a non-2xx would let the call through): no token, too large, not JSON, unknown host; nothing is asked', async () => {
    const before = await asked();
    const input = JSON.stringify(preToolUse('sess-http', '/tmp', 'echo x'));
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${t.instance.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    for (const [res, why] of [
      [await post('/api/hooks/claude-code', input), /refused the API token/],
      [await post('/api/hooks/claude-code', 'x'.repeat(HOOK_LIMITS.bodyMaxBytes + 1), { authorization: `Bearer ${member.token}` }), /larger than/],
      [await post('/api/hooks/claude-code', '{nope', { authorization: `Bearer ${member.token}` }), /not JSON/],
      [await post('/api/hooks/cursor', input, { authorization: `Bearer ${member.token}` }), /not "cursor"/],
      [await post('/api/hooks/claude-code?wait=0', input, { authorization: `Bearer ${member.token}` }), /wait must be/],
      [
        await post('/api/hooks/claude-code', JSON.stringify(preToolUse('sess-http', '/tmp', 'echo \u0000 x')), { authorization: `Bearer ${member.token}` }),
        /cannot be stored: it contains a NUL character/,
      ],
    ] as const) {
      expect(res.status).toBe(200);
      expect((await res.json()).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(why) });
    }
    expect(await asked()).toBe(before);
  });

  it('Taskbay unreachable: blocked with onFailure "block"; without it Claude Code lets the command run (why the docs ask for it)', async () => {
    const s = newSession(dir, env());
    const marker = join(s.cwd, 'marker');
    const blockedRun = await new HostStandIn('claude-code', httpSettings('http://127.0.0.1:9')).bashCall(s, bash(`echo down >> ${marker}`), 'toolu_01HTTPDOWN');
    expect(blockedRun.blockedBy?.event).toBe('PreToolUse');
    expect(markerLines(marker)).toEqual([]);
    const open = await new HostStandIn('claude-code', httpSettings('http://127.0.0.1:9', false)).bashCall(
      s,
      bash(`echo down >> ${marker}`),
      'toolu_01HTTPOPEN',
    );
    expect(open.blockedBy).toBeNull();
    expect(markerLines(marker)).toEqual(['down']);
  }, 60_000);
});

describe('command rules (docs/samples/command-rules.json)', () => {
  it('decide what waits: ALLOW leaves the call to Claude Code, DENY denies with the reason, the rest waits; bad CEL is refused and nothing is saved', async () => {
    const rules = JSON.parse(sampleText('command-rules.json'));
    const set = ok(await t.gql(sampleText('set-command-rules.graphql'), { rules })).setCommandRules;
    expect(set.rules).toEqual(rules);
    const version = set.version;
    try {
      const s = newSession(dir, env());
      const host = new HostStandIn('claude-code', SETTINGS);
      const before = await asked();

      const ls = await host.bashCall(s, bash('ls -la'), 'toolu_01LS');
      expect(ls.hooks.slice(0, 2).map((h) => [h.event, h.run.code, h.run.stdout])).toEqual([
        ['PreToolUse', 0, ''],
        ['PermissionRequest', 0, ''],
      ]);
      expect(ls.ran).toBe('ls -la');

      const sudo = await host.bashCall(s, bash('sudo echo denied'), 'toolu_01SUDO');
      expect(sudo.blockedBy).toMatchObject({ event: 'PreToolUse', reason: expect.stringContaining('coding agents do not run sudo') });
      expect(sudo.ran).toBeNull();
      expect(await asked()).toBe(before);

      const piped = `ls | sh -c 'echo piped >> ${join(s.cwd, 'marker')}'`;
      const held = await host.bashCall({ ...s, env: env({ TASKBAY_HOOK_WAIT: '1' }) }, bash(piped), 'toolu_01PIPE');
      expect(held.blockedBy?.reason).toMatch(/\[T3_BLOCKED\]/);
      const { pid } = await requestFor(t, piped);
      const payload = ok(await t.gql(`query($p: String!) { commandApproval(approvalId: $p) { payload } }`, { p: pid })).commandApproval.payload;
      expect(payload.rationale).toContain('every other shell command waits for a person');
      expect(markerLines(join(s.cwd, 'marker'))).toEqual([]);

      // Another tool than the shell: no opinion unless a rule says otherwise.
      const write = JSON.stringify({ ...preToolUse(s.sessionId, s.cwd, 'x'), tool_name: 'Write', tool_input: { file_path: join(s.cwd, 'f'), content: 'x' } });
      expect(await runHookCli(['claude-code'], write, s.env)).toMatchObject({ code: 0, stdout: '' });

      const bad = await t.gql(sampleText('set-command-rules.graphql'), { rules: [{ condition: 'command.matches("rm .*")', outcome: 'DENY' }] });
      expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(bad.errors?.[0]?.message).toMatch(/rules\[0\]\.condition: regular expressions/);
      expect(ok(await t.gql(`{ commandRules { version rules { condition } } }`)).commandRules).toEqual({
        version,
        rules: rules.map((r: any) => ({ condition: r.condition })),
      });
      const audited = await t.sql(`select data from audit_event where type = 'command_rules.set' order by seq`);
      expect(audited.map((e: any) => e.data.version)).toEqual([version]);
      expect(audited[0].data.rules).toEqual(rules);
      // A member may not read or change them.
      expect((await t.gql(`{ commandRules { version } }`, {}, member.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      await decide(t, 'reject', pid);
    } finally {
      ok(await t.gql(sampleText('set-command-rules.graphql'), { rules: [] }));
    }
  }, 120_000);
});
