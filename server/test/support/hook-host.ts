import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

// A stand-in for the coding-agent host (Claude Code, Codex CLI) around its hooks: it reads the
// hook settings file as the host does (events, matchers, handlers, timeout, onFailure), runs the
// handlers with the host's documented input on stdin (or POSTs it, for Claude Code's HTTP hooks),
// reads their answers by the host's published exit-code and JSON rules (the research of the
// hosts' hook contracts, docs/COMMAND-APPROVALS.md "The hosts' contracts"), and runs the shell
// command (sh -c, in the session's cwd) when those rules say the tool call proceeds.
//
// Every "no decision" and every non-blocking error goes on to the host's normal permission
// flow, which the stand-in models as the command running: the dangerous case, a person who
// clicks yes, or bypassPermissions where nothing asks. So the only thing that keeps a command
// from running here is a hook answer the host treats as blocking.

export type Host = 'claude-code' | 'codex';

export interface Handler {
  type: 'command' | 'http';
  command?: string;
  url?: string;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
  timeout?: number;
  onFailure?: 'continue' | 'block';
}

export interface Settings {
  hooks: Record<string, { matcher?: string; hooks: Handler[] }[]>;
}

/** One handler's run: what the host saw. */
export interface HandlerRun {
  /** The exit code (command), or the HTTP status (http); null when it did not start, was killed or could not connect. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** It could not start (command) or connect (http). */
  failedToStart: boolean;
}

/** How the host reads one handler's answer. */
export type Verdict =
  | { decision: 'block'; reason: string }
  | { decision: 'allow'; updatedInput: Record<string, unknown> | null }
  | { decision: 'none'; why: string };

const DEFAULT_TIMEOUT_SECONDS = 600;

/** The host's matcher rules: "*", "" or none match all; letters, digits, _ - space , | is a list of exact names; anything else a regex (unanchored). */
export function matches(matcher: string | undefined, tool: string, host: Host): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (host === 'claude-code' && /^[A-Za-z0-9_\- ,|]+$/.test(matcher)) return matcher.split(/[|,]/).some((m) => m.trim() === tool);
  return new RegExp(matcher).test(tool);
}

function runCommandHandler(h: Handler, input: string, env: NodeJS.ProcessEnv, cwd: string): Promise<HandlerRun> {
  return new Promise((resolve) => {
    // Claude Code runs command hooks in bash; Codex in `$SHELL -lc` (here sh -c: no login profile).
    const child = spawn('sh', ['-c', h.command!], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let failedToStart = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    const timer = setTimeout(
      () => {
        timedOut = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone already
        }
      },
      (h.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
    );
    child.on('error', () => (failedToStart = true));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: timedOut ? null : code, stdout, stderr, timedOut, failedToStart });
    });
  });
}

async function runHttpHandler(h: Handler, input: string, env: NodeJS.ProcessEnv): Promise<HandlerRun> {
  // "Only variables listed in allowedEnvVars are resolved"; unlisted references become empty strings.
  const allowed = new Set(h.allowedEnvVars ?? []);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(h.headers ?? {})) {
    headers[k] = v.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_m, name: string) => (allowed.has(name) ? (env[name] ?? '') : ''));
  }
  try {
    const res = await fetch(h.url!, { method: 'POST', headers, body: input, signal: AbortSignal.timeout((h.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000) });
    return { code: res.status, stdout: await res.text(), stderr: '', timedOut: false, failedToStart: false };
  } catch (e) {
    const timedOut = (e as Error).name === 'TimeoutError';
    return { code: null, stdout: '', stderr: String(e), timedOut, failedToStart: !timedOut };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJsonObject(stdout: string): Record<string, unknown> | 'invalid' | null {
  const text = stdout.trim();
  if (!text.startsWith('{')) return null;
  try {
    const v = JSON.parse(text);
    return isObject(v) ? v : 'invalid';
  } catch {
    return 'invalid';
  }
}

/** Claude Code: an object passing the output schema for the event decides; anything else is no decision. */
function claudeDecision(event: string, out: Record<string, unknown>): Verdict | 'invalid' {
  if (out.continue === false) return { decision: 'block', reason: String(out.stopReason ?? 'continue: false') };
  const specific = out.hookSpecificOutput;
  if (specific !== undefined) {
    if (!isObject(specific) || specific.hookEventName !== event) return 'invalid';
    if (event === 'PreToolUse') {
      const d = specific.permissionDecision;
      if (d !== undefined && !['allow', 'deny', 'ask', 'defer'].includes(d as string)) return 'invalid';
      if (specific.updatedInput !== undefined && !isObject(specific.updatedInput)) return 'invalid';
      if (d === 'deny') return { decision: 'block', reason: String(specific.permissionDecisionReason ?? '') };
      if (d === 'allow') return { decision: 'allow', updatedInput: (specific.updatedInput as Record<string, unknown>) ?? null };
      // "ask" prompts the person: the stand-in's person says yes (the dangerous case).
      if (d === 'ask') return { decision: 'none', why: 'ask: the person at the prompt' };
      return { decision: 'none', why: `permissionDecision ${String(d)}` };
    }
    if (event === 'PermissionRequest') {
      const decision = specific.decision;
      if (decision === undefined) return { decision: 'none', why: 'no decision object' };
      if (!isObject(decision) || !['allow', 'deny'].includes(decision.behavior as string)) return 'invalid';
      if (decision.behavior === 'deny') return { decision: 'block', reason: String(decision.message ?? '') };
      return { decision: 'allow', updatedInput: isObject(decision.updatedInput) ? decision.updatedInput : null };
    }
    return { decision: 'none', why: `${event} output` };
  }
  // Deprecated top-level form of PreToolUse: "approve" / "block".
  if (event === 'PreToolUse' && out.decision === 'block') return { decision: 'block', reason: String(out.reason ?? '') };
  if (event === 'PreToolUse' && out.decision === 'approve') return { decision: 'allow', updatedInput: null };
  return { decision: 'none', why: 'no decision fields' };
}

/** Claude Code's reading of one handler's run (hooks reference: exit codes, JSON output, HTTP response handling, onFailure). */
export function claudeCodeVerdict(event: string, h: Handler, run: HandlerRun): Verdict {
  const failure = (why: string): Verdict => {
    // onFailure "block": a failure "does what exit code 2 does on that event, except on PermissionRequest, where it denies the request".
    if (h.onFailure === 'block') return { decision: 'block', reason: `hook failure (${why})` };
    return { decision: 'none', why: `non-blocking error: ${why}` };
  };
  if (run.timedOut) return failure('timed out');
  if (run.failedToStart) return failure('could not start or connect');
  if (h.type === 'http') {
    if (run.code === null || run.code < 200 || run.code > 299) return failure(`HTTP ${run.code}`);
    if (!run.stdout.trim()) return { decision: 'none', why: '2xx with an empty body' };
    const out = parseJsonObject(run.stdout);
    if (out === null || out === 'invalid') return failure('2xx with a body that is not a JSON object');
    const d = claudeDecision(event, out);
    return d === 'invalid' ? failure('schema validation failed') : d;
  }
  const out = parseJsonObject(run.stdout);
  if (run.code === 2) {
    // "Exit code 2 isn't honored for this event and the permission flow proceeds unchanged."
    if (event === 'PermissionRequest') return { decision: 'none', why: 'exit 2 is not honored for PermissionRequest' };
    // "exit 2 blocks whether or not you print JSON"; the reason is the JSON's when it makes one, else stderr.
    const d = out && out !== 'invalid' ? claudeDecision(event, out) : 'invalid';
    return { decision: 'block', reason: d !== 'invalid' && d.decision === 'block' ? d.reason : run.stderr };
  }
  if (out && out !== 'invalid') {
    // "With a parsed object that passes schema validation ... the JSON alone decides the outcome", whatever the exit code.
    const d = claudeDecision(event, out);
    if (d !== 'invalid') return d;
  }
  if (run.code === 0) return out === 'invalid' ? failure('invalid JSON on stdout') : { decision: 'none', why: 'exit 0 with no decision' };
  return failure(`exit ${run.code}`);
}

const CODEX_TOP = new Set(['continue', 'stopReason', 'suppressOutput', 'systemMessage', 'decision', 'reason', 'hookSpecificOutput']);
const CODEX_PRE = new Set(['hookEventName', 'permissionDecision', 'permissionDecisionReason', 'updatedInput', 'additionalContext']);
const CODEX_PERMISSION = new Set(['hookEventName', 'decision']);
const CODEX_PERMISSION_DECISION = new Set(['behavior', 'message', 'updatedInput', 'updatedPermissions', 'interrupt']);
const unknownKeys = (o: Record<string, unknown>, known: Set<string>) => Object.keys(o).some((k) => !known.has(k));

/** Codex's reading of one handler's run (hooks page and codex-rs/hooks output_parser.rs: fails open on every error). */
export function codexVerdict(event: string, _h: Handler, run: HandlerRun): Verdict {
  const failed = (why: string): Verdict => ({ decision: 'none', why: `hook failed, the call continues: ${why}` });
  if (run.timedOut) return failed('timed out');
  if (run.failedToStart || run.code === null) return failed('did not start or was killed');
  if (run.code === 2) {
    if (event === 'PermissionRequest') return failed('exit 2 on PermissionRequest (unconfirmed: taken as a failure)');
    return run.stderr.trim() ? { decision: 'block', reason: run.stderr } : failed('exit 2 without a reason on stderr');
  }
  if (run.code !== 0) return failed(`exit ${run.code}`);
  const out = parseJsonObject(run.stdout);
  if (out === null) return { decision: 'none', why: 'no JSON: no opinion' };
  if (out === 'invalid') return failed('invalid JSON output');
  // deny_unknown_fields on every wire struct.
  if (unknownKeys(out, CODEX_TOP)) return failed('unknown fields');
  if (out.continue === false || out.stopReason !== undefined || out.suppressOutput !== undefined) return failed('unsupported fields');
  if (event === 'PreToolUse') {
    if (out.decision === 'approve') return failed('decision approve is unsupported');
    if (out.decision === 'block')
      return typeof out.reason === 'string' && out.reason.trim() ? { decision: 'block', reason: out.reason } : failed('block without a reason');
    const s = out.hookSpecificOutput;
    if (s === undefined) return { decision: 'none', why: 'no decision' };
    if (!isObject(s) || unknownKeys(s, CODEX_PRE) || s.hookEventName !== 'PreToolUse') return failed('invalid hookSpecificOutput');
    const d = s.permissionDecision;
    if (d === undefined) return { decision: 'none', why: 'no permissionDecision' };
    if (d === 'deny') {
      return typeof s.permissionDecisionReason === 'string' && s.permissionDecisionReason.trim()
        ? { decision: 'block', reason: s.permissionDecisionReason }
        : failed('deny without a non-empty permissionDecisionReason');
    }
    if (d === 'allow') {
      // "Allow is valid only with updatedInput"; for Bash it must hold a string command.
      if (!isObject(s.updatedInput) || typeof s.updatedInput.command !== 'string') return failed('unsupported permissionDecision:allow');
      return { decision: 'allow', updatedInput: s.updatedInput };
    }
    return failed(`unsupported permissionDecision:${String(d)}`);
  }
  if (event === 'PermissionRequest') {
    const s = out.hookSpecificOutput;
    if (s === undefined) return { decision: 'none', why: 'no decision' };
    if (!isObject(s) || unknownKeys(s, CODEX_PERMISSION) || s.hookEventName !== 'PermissionRequest') return failed('invalid hookSpecificOutput');
    const decision = s.decision;
    if (decision === undefined) return { decision: 'none', why: 'no decision' };
    if (!isObject(decision) || unknownKeys(decision, CODEX_PERMISSION_DECISION)) return failed('invalid decision');
    // updatedInput, updatedPermissions and interrupt:true "fail closed today": the decision is dropped.
    if (decision.updatedInput !== undefined || decision.updatedPermissions !== undefined || decision.interrupt === true)
      return failed('unsupported decision fields');
    if (decision.behavior === 'deny') return { decision: 'block', reason: String(decision.message ?? 'PermissionRequest hook denied approval') };
    if (decision.behavior === 'allow') return { decision: 'allow', updatedInput: null };
    return failed('invalid behavior');
  }
  return { decision: 'none', why: `${event} output` };
}

export interface ToolCallResult {
  /** The command the host ran (sh -c), or null when it did not run. */
  ran: string | null;
  exitCode: number | null;
  /** Each hook the host ran, in order, and how it read its answer. */
  hooks: { event: string; run: HandlerRun; verdict: Verdict }[];
  /** The blocking reason when a hook blocked. */
  blockedBy: { event: string; reason: string } | null;
}

export interface Session {
  sessionId: string;
  cwd: string;
  /** Appended one line per command the host runs: what ran, in order. */
  ranLog: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The host around its hooks, for one tool call of the shell tool. Claude Code: PreToolUse; a
 * decision-less answer goes on to the normal permission flow, where PermissionRequest hooks run
 * (and, with `askAfterAllow`, also after a PreToolUse allow: the host's ask rules still apply);
 * Codex: PreToolUse (a rewrite or nothing), then its approval flow's PermissionRequest when
 * `approvalNeeded`. The command then runs, and PostToolUse hooks run after a clean exit (seed 002).
 */
export class HostStandIn {
  readonly hooksRun: { event: string; input: Record<string, unknown> }[] = [];

  constructor(
    readonly host: Host,
    readonly settings: Settings,
    readonly opts: { askAfterAllow?: boolean; approvalNeeded?: boolean } = {},
  ) {}

  private handlers(event: string, tool: string): Handler[] {
    return (this.settings.hooks[event] ?? []).filter((g) => matches(g.matcher, tool, this.host)).flatMap((g) => g.hooks);
  }

  /** Runs the event's matching handlers with `input`; the first blocking answer wins, else the last allow. */
  async runEvent(event: string, input: Record<string, unknown>, session: Session): Promise<{ verdict: Verdict; runs: ToolCallResult['hooks'] }> {
    const runs: ToolCallResult['hooks'] = [];
    let verdict: Verdict = { decision: 'none', why: 'no hook' };
    for (const h of this.handlers(event, String(input.tool_name))) {
      this.hooksRun.push({ event, input });
      const body = JSON.stringify(input);
      const run = h.type === 'http' ? await runHttpHandler(h, body, session.env) : await runCommandHandler(h, body, session.env, session.cwd);
      const v = this.host === 'claude-code' ? claudeCodeVerdict(event, h, run) : codexVerdict(event, h, run);
      runs.push({ event, run, verdict: v });
      if (v.decision === 'block') return { verdict: v, runs };
      if (v.decision === 'allow') verdict = v;
    }
    return { verdict, runs };
  }

  /** One call of the shell tool with `toolInput`, as the host makes it. */
  async bashCall(session: Session, toolInput: Record<string, unknown>, toolUseId: string): Promise<ToolCallResult> {
    const result: ToolCallResult = { ran: null, exitCode: null, hooks: [], blockedBy: null };
    const common = this.commonInput(session);
    const pre = await this.runEvent(
      'PreToolUse',
      { ...common, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: toolInput, tool_use_id: toolUseId },
      session,
    );
    result.hooks.push(...pre.runs);
    if (pre.verdict.decision === 'block') return { ...result, blockedBy: { event: 'PreToolUse', reason: pre.verdict.reason } };
    let input = pre.verdict.decision === 'allow' && pre.verdict.updatedInput ? pre.verdict.updatedInput : toolInput;
    const asks = this.host === 'claude-code' ? pre.verdict.decision !== 'allow' || this.opts.askAfterAllow === true : this.opts.approvalNeeded === true;
    if (asks) {
      const permission = await this.runEvent(
        'PermissionRequest',
        { ...common, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: input },
        session,
      );
      result.hooks.push(...permission.runs);
      if (permission.verdict.decision === 'block') return { ...result, blockedBy: { event: 'PermissionRequest', reason: permission.verdict.reason } };
      if (permission.verdict.decision === 'allow' && permission.verdict.updatedInput) input = permission.verdict.updatedInput;
      // No decision: the person at the prompt (or bypassPermissions) lets it run.
    }
    const command = String(input.command);
    appendFileSync(session.ranLog, `${command}\n`);
    result.ran = command;
    result.exitCode = await new Promise<number | null>((resolve) => {
      const child = spawn('sh', ['-c', command], { cwd: session.cwd, stdio: 'ignore' });
      child.on('close', (code) => resolve(code));
    });
    if (result.exitCode === 0) {
      const post = await this.runEvent(
        'PostToolUse',
        { ...common, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: input, tool_response: {}, tool_use_id: toolUseId },
        session,
      );
      result.hooks.push(...post.runs);
    }
    return result;
  }

  /** The fields of every hook input of this host (the contract's names). */
  commonInput(session: Session): Record<string, unknown> {
    return this.host === 'claude-code'
      ? { session_id: session.sessionId, transcript_path: `/tmp/${session.sessionId}.jsonl`, cwd: session.cwd, permission_mode: 'default' }
      : {
          session_id: session.sessionId,
          turn_id: 'turn-1',
          transcript_path: null,
          cwd: session.cwd,
          model: 'gpt-5.5-codex',
          permission_mode: 'default',
        };
  }
}
