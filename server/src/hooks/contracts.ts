import { CONDITION_LIMITS, HOOK_LIMITS } from '../limits.js';

// The hosts' hook contracts (Claude Code and OpenAI Codex CLI, docs/COMMAND-APPROVALS.md "The
// hosts' contracts"): what a host's hook input holds, and how Taskbay's answer is said in the
// host's own output and exit codes. Plain functions with no server imports: the server's hook
// routes (hooks/routes.ts) answer with them, and the `taskbay hook` relay (hooks/cli.ts) uses them
// for the answers it must give itself when the server cannot (unreachable, 5xx, its own timeout,
// a crash), so both say the same thing the same way.
//
// Fail closed: every answer that is not an explicit allow or "no opinion" (for a call Taskbay does
// not hold) blocks, in the host's terms for that event:
// - PreToolUse (both hosts): a deny decision in JSON on stdout AND exit 2 with the reason on
//   stderr. Claude Code: "exit 2 blocks whether or not you print JSON"; Codex: exit 2 with a
//   non-empty stderr blocks, and a JSON deny needs a non-empty permissionDecisionReason.
// - PermissionRequest (both hosts): the deny in the JSON decision at exit 0. Claude Code: "Exit
//   code 2 isn't honored for this event"; Codex: exit 2 is unconfirmed there, so never relied on.
// - PostToolUse and any other event: exit 2 with the reason on stderr (nothing on stdout).
// Nothing else is ever printed or returned: any other exit code, invalid JSON, a bare Codex
// allow or an "ask" would be a non-blocking error, and the host would run the command.

export const HOOK_HOSTS = ['claude-code', 'codex'] as const;
export type HookHost = (typeof HOOK_HOSTS)[number];
export const isHookHost = (s: unknown): s is HookHost => typeof s === 'string' && (HOOK_HOSTS as readonly string[]).includes(s);

export const HOOK_EVENTS = ['PreToolUse', 'PermissionRequest', 'PostToolUse'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The shell tool, under the same name on both hosts: the one tool whose calls are command approvals. */
export const SHELL_TOOL = 'Bash';

/** What Taskbay says about one tool call, before the host's wording. */
export type HookAnswer =
  /** No decision: the host's own permission flow goes on (exit 0, no output). */
  | { kind: 'none' }
  /** Approved: run exactly `updatedInput` (PreToolUse) once. */
  | { kind: 'allow'; reason: string; updatedInput: Record<string, unknown> }
  | { kind: 'deny'; reason: string };

/** The answer as the host reads it from a command hook. */
export interface HostReply {
  exitCode: 0 | 2;
  stdout: string;
  stderr: string;
}

const json = (v: unknown) => `${JSON.stringify(v)}\n`;

/** A reason is never empty (Codex refuses an empty deny reason and then does not block). */
const nonEmpty = (reason: string) => (reason.trim() ? reason : 'Taskbay blocked this tool call');

/**
 * The host's form of an answer. `event` is the hook_event_name as far as it is known (null for
 * input that could not be read): an unknown event gets the PreToolUse form, which blocks with
 * exit 2 on both hosts.
 */
export function hostReply(host: HookHost | null, event: string | null, answer: HookAnswer): HostReply {
  if (answer.kind === 'none') return { exitCode: 0, stdout: '', stderr: '' };
  if (event === 'PermissionRequest') {
    const decision = answer.kind === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: nonEmpty(answer.reason) };
    return { exitCode: 0, stdout: json({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } }), stderr: '' };
  }
  if (answer.kind === 'allow') {
    // Only for PreToolUse. Both hosts: allow with the whole input (Claude Code: "Replaces the entire
    // input object"; Codex: allow is valid only with updatedInput holding a string command).
    if (event !== 'PreToolUse')
      return hostReply(host, event, { kind: 'deny', reason: `Taskbay allows only PreToolUse and PermissionRequest calls, not ${event}` });
    return {
      exitCode: 0,
      stdout: json({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'allow',
          permissionDecisionReason: answer.reason,
          updatedInput: answer.updatedInput,
        },
      }),
      stderr: '',
    };
  }
  const reason = nonEmpty(answer.reason);
  const stderr = reason.endsWith('\n') ? reason : `${reason}\n`;
  if (event === 'PostToolUse') return { exitCode: 2, stdout: '', stderr };
  return {
    exitCode: 2,
    stdout: json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }),
    stderr,
  };
}

/** A host's hook input, as Taskbay reads it. */
export interface HookInput {
  event: HookEvent;
  sessionId: string;
  /** null: PermissionRequest carries none. */
  toolUseId: string | null;
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string;
  permissionMode: string;
  agentType: string;
  /** The shell tool's exact command; null for another tool. */
  command: string | null;
}

export type ParsedInput = { ok: true; input: HookInput } | { ok: false; event: string | null; error: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The hook_event_name of any input, when it has one (to answer malformed input in the right form). */
export function eventOf(raw: unknown): string | null {
  return isObject(raw) && typeof raw.hook_event_name === 'string' ? raw.hook_event_name : null;
}

/**
 * Reads the fields Taskbay uses (the hosts' own names: session_id, hook_event_name, tool_name,
 * tool_input, tool_use_id, cwd, permission_mode, agent_type); others are ignored. Anything
 * missing or of the wrong type is an error, and the call is blocked.
 */
export function parseHookInput(raw: unknown): ParsedInput {
  const event = eventOf(raw);
  const bad = (error: string): ParsedInput => ({ ok: false, event, error: `the hook input is malformed: ${error}` });
  if (!isObject(raw)) return bad('it is not a JSON object');
  if (event === null) return bad('hook_event_name is missing');
  if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
    return { ok: false, event, error: `taskbay hook answers ${HOOK_EVENTS.join(', ')}; it is not meant for ${JSON.stringify(event.slice(0, 100))}` };
  }
  const text = (name: string, max: number, required: boolean): string | null | Error => {
    const v = raw[name];
    if (v === undefined || v === null) return required ? new Error(`${name} is missing`) : null;
    if (typeof v !== 'string') return new Error(`${name} must be a string`);
    if (required && !v) return new Error(`${name} is empty`);
    if (v.length > max) return new Error(`${name} is longer than ${max} characters`);
    return v;
  };
  const e = event as HookEvent;
  const sessionId = text('session_id', HOOK_LIMITS.idMaxChars, true);
  const toolName = text('tool_name', CONDITION_LIMITS.fieldMaxChars, true);
  const toolUseId = text('tool_use_id', HOOK_LIMITS.idMaxChars, e !== 'PermissionRequest');
  const cwd = text('cwd', HOOK_LIMITS.cwdMaxChars, e !== 'PostToolUse');
  const permissionMode = text('permission_mode', CONDITION_LIMITS.fieldMaxChars, false);
  const agentType = text('agent_type', CONDITION_LIMITS.fieldMaxChars, false);
  for (const v of [sessionId, toolName, toolUseId, cwd, permissionMode, agentType]) if (v instanceof Error) return bad(v.message);
  const toolInput = raw.tool_input;
  if (e !== 'PostToolUse' && !isObject(toolInput)) return bad('tool_input must be an object');
  let command: string | null = null;
  if (toolName === SHELL_TOOL && isObject(toolInput)) {
    if (typeof toolInput.command !== 'string' || !toolInput.command.trim()) return bad(`the ${SHELL_TOOL} tool_input.command must be a non-empty string`);
    command = toolInput.command;
  } else if (toolName === SHELL_TOOL && e !== 'PostToolUse') return bad('tool_input must be an object');
  return {
    ok: true,
    input: {
      event: e,
      sessionId: sessionId as string,
      // A PermissionRequest has no tool_use_id (both hosts); one sent anyway is not used.
      toolUseId: e === 'PermissionRequest' ? null : (toolUseId as string),
      toolName: toolName as string,
      toolInput: isObject(toolInput) ? toolInput : {},
      cwd: (cwd as string | null) ?? '',
      permissionMode: (permissionMode as string | null) ?? '',
      agentType: (agentType as string | null) ?? '',
      command,
    },
  };
}

/** What the relay and the route say when Taskbay itself cannot decide: blocked, with why. */
export const blocked = (why: string): HookAnswer => ({
  kind: 'deny',
  reason: `Taskbay could not decide on this tool call, so it is blocked: ${why}. Nothing ran.`,
});
