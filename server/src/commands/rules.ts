import { randomUUID } from 'node:crypto';
import { canonicalSha256 } from '../lib/hashing.js';
import { isPlainObject, own } from '../lib/untrusted.js';
import { COMMAND_LIMITS } from '../limits.js';

// Seed 002 ("agent-approval-protocol") in plain functions: the sealed payload, the P- ids, the
// fingerprint, the status vocabularies. One place per rule; its event types are in the audit
// log's catalogue (audit/catalogue.ts COMMAND_EVENT_TYPES).

/** approvals.status (seed 002): lowercase. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'revoked', 'expired'] as const;
export type CommandApprovalStatus = (typeof APPROVAL_STATUSES)[number];
/** approval_grants.status (seed 002): UPPERCASE. Distinct column, never collapsed. */
export const GRANT_STATUSES = ['PENDING', 'CONSUMED', 'REVOKED', 'EXPIRED'] as const;
export type GrantStatus = (typeof GRANT_STATUSES)[number];

export const SEALED_FIELDS = ['operation', 'exact_content', 'scope', 'risk_level', 'rollback', 'rationale', 'verification'] as const;
export interface SealedPayload {
  operation: string;
  exact_content: string;
  scope: string;
  risk_level: 'high' | 'medium';
  rollback: null;
  rationale: string;
  verification: string;
}

export const AGENT_ID = /^a[0-9a-f]{5,159}$/;
export const APPROVAL_ID = /^P-[0-9a-f]{32}$/;
/** A grant not consumed within this many seconds of activation expires. */
export const GRANT_TTL_SECONDS = 15 * 60;

/** The action stored on the approval row (what the reviewer sees and the digest covers). */
export interface RunCommandAction {
  kind: 'run_command';
  agent_id: string;
  commands: string[];
  payload: SealedPayload;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function text(v: unknown, name: string, max: number): string | string[] {
  if (typeof v !== 'string' || v.length === 0) return [`${name} must be a non-empty string`];
  if ([...v].length > max) return [`${name} is longer than ${max} characters`];
  return v;
}

/**
 * Seed 002: "`rollback_hint` in the hook becomes `rollback` in the contract". A payload may use
 * the hook's name for a field (mapped here) or the contract's, never both.
 */
export const HOOK_FIELD_NAMES: Readonly<Record<string, (typeof SEALED_FIELDS)[number]>> = { rollback_hint: 'rollback' };

/**
 * Fields that "exist only at the contract level" (seed 002) and may therefore come beside the
 * hook's payload instead of inside it: `verification` (a hook payload has none).
 */
export interface ContractLevelFields {
  verification?: unknown;
}

/**
 * The sealed payload under the contract's names: exactly the seven fields, relayed verbatim
 * (never authored here). Accepts the hook's names (HOOK_FIELD_NAMES) and `verification` from
 * the contract level; `commands` inside the payload is returned apart (it is not sealed).
 */
export function parseSealedPayload(input: unknown, contract: ContractLevelFields = {}): Parsed<SealedPayload> & { commands?: unknown } {
  if (!isPlainObject(input)) return { ok: false, error: 'payload must be an object' };
  const named: Record<string, unknown> = {};
  const extra: string[] = [];
  for (const key of Object.keys(input)) {
    if (key === 'commands') continue;
    const name = HOOK_FIELD_NAMES[key] ?? key;
    if (!(SEALED_FIELDS as readonly string[]).includes(name)) {
      extra.push(key);
      continue;
    }
    if (Object.hasOwn(named, name)) return { ok: false, error: `payload has both ${name} and its hook name ${key}; give one` };
    named[name] = input[key];
  }
  if (extra.length) return { ok: false, error: `payload has fields the sealed payload does not have: ${extra.join(', ')}` };
  if (contract.verification !== undefined) {
    if (named.verification !== undefined) return { ok: false, error: 'verification is given in the payload and beside it; give it once' };
    named.verification = contract.verification;
  }
  const out: Record<string, unknown> = {};
  for (const [name, max] of [
    ['operation', COMMAND_LIMITS.operationMaxChars],
    ['exact_content', COMMAND_LIMITS.commandMaxChars],
    ['scope', COMMAND_LIMITS.scopeMaxChars],
    ['rationale', COMMAND_LIMITS.rationaleMaxChars],
    ['verification', COMMAND_LIMITS.verificationMaxChars],
  ] as const) {
    const v = text(own(named, name), name, max);
    if (Array.isArray(v)) return { ok: false, error: v[0]! };
    out[name] = v;
  }
  const risk = own(named, 'risk_level');
  if (risk !== 'high' && risk !== 'medium') return { ok: false, error: 'risk_level must be "high" or "medium" (never low or critical)' };
  if (own(named, 'rollback') !== null) return { ok: false, error: "rollback (the hook's rollback_hint) must be null: the hook computes no inverse" };
  const scope = scopeOf(out.exact_content as string);
  if (scope === null) return { ok: false, error: 'exact_content has no command (only whitespace)' };
  if (out.scope !== scope) {
    return { ok: false, error: `scope must be the leading token of exact_content (exact_content.split()[0] = ${JSON.stringify(scope.slice(0, 200))})` };
  }
  return {
    ok: true,
    value: {
      operation: out.operation as string,
      exact_content: out.exact_content as string,
      scope: out.scope as string,
      risk_level: risk,
      rollback: null,
      rationale: out.rationale as string,
      verification: out.verification as string,
    },
    ...(Object.hasOwn(input, 'commands') ? { commands: input.commands } : {}),
  };
}

export function parseAgentId(v: unknown): Parsed<string> {
  return typeof v === 'string' && AGENT_ID.test(v)
    ? { ok: true, value: v }
    : { ok: false, error: 'agent_id must be "a" followed by 5 or more lowercase hex characters' };
}

/** Shell operators that chain the sub-commands of one Bash call (seed 002 "a chain of >= 2"). */
const CHAIN_OPERATOR = /[ \t]*(?:&&|\|\||;|\||&|\r?\n)[ \t\r\n]*/y;

/**
 * Whether exact_content is the commands, in order, joined by chain operators (`&&`, `||`,
 * `;`, `|`, `&`, a newline) with optional blanks around them and around the whole: the
 * verbatim blocked command must be exactly the set the reviewer grants.
 */
export function exactContentIsCommands(exact: string, commands: string[]): boolean {
  let pos = /^\s*/.exec(exact)![0].length;
  for (let i = 0; i < commands.length; i++) {
    const c = commands[i]!;
    if (!exact.startsWith(c, pos)) return false;
    pos += c.length;
    if (i === commands.length - 1) break;
    CHAIN_OPERATOR.lastIndex = pos;
    const op = CHAIN_OPERATOR.exec(exact);
    if (!op) return false;
    pos += op[0].length;
  }
  return exact.slice(pos).trim() === '';
}

/**
 * The command strings: absent (or one string equal to exact_content) is a single command;
 * two or more are a COMMAND_SET, and exact_content must be exactly them (exactContentIsCommands).
 */
export function parseCommands(v: unknown, payload: SealedPayload): Parsed<string[]> {
  if (v === undefined || v === null) return { ok: true, value: [payload.exact_content] };
  if (!Array.isArray(v) || v.length === 0) return { ok: false, error: 'commands must be a non-empty array of strings' };
  if (v.length > COMMAND_LIMITS.commandsMax) return { ok: false, error: `at most ${COMMAND_LIMITS.commandsMax} commands` };
  for (const c of v) {
    const t = text(c, 'each command', COMMAND_LIMITS.commandMaxChars);
    if (Array.isArray(t)) return { ok: false, error: t[0]! };
  }
  if (v.length === 1 && v[0] !== payload.exact_content) {
    return { ok: false, error: 'a single command must equal payload.exact_content' };
  }
  if (v.length > 1 && !exactContentIsCommands(payload.exact_content, v as string[])) {
    return {
      ok: false,
      error: 'exact_content of a COMMAND_SET must be its commands in order, joined by shell chain operators (&&, ||, ;, |, & or a newline)',
    };
  }
  return { ok: true, value: [...(v as string[])] };
}

/** The payload fingerprint: SHA-256 hex of the RFC 8785 canonical JSON of the sealed payload. */
export const payloadFingerprint = (payload: SealedPayload) => canonicalSha256(payload);

/** Seed 002: singular -> P-{uuid4().hex}. */
export const singleApprovalId = () => `P-${randomUUID().replace(/-/g, '')}`;

/**
 * Seed 002: COMMAND_SET -> P-<first 32 hex of sha256(canonical(command strings))>. Canonical
 * form: the RFC 8785 JSON of the array of command strings, in the order given (order matters:
 * `a && b` is not `b && a`).
 */
export const commandSetApprovalId = (commands: string[]) => `P-${canonicalSha256(commands).slice(0, 32)}`;

/** The approval row's digest for a command: SHA-256 of the canonical JSON of the whole action. */
export const runCommandDigest = (action: RunCommandAction) =>
  canonicalSha256({ kind: action.kind, agent_id: action.agent_id, commands: action.commands, payload: action.payload });

export const isRunCommand = (action: unknown): action is RunCommandAction => isPlainObject(action) && action.kind === 'run_command';

/** The nonce prefix shown in option labels (seed 002): `[P-b1bdfbb0]`. */
export { noncePrefix } from './label.js';
import { approveLabel, noncePrefix } from './label.js';

/** POSIX-shell quoting of an argv, so exact_content is the command verbatim and re-runnable. */
export function shellQuote(argv: string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The characters Python's `str.split()` splits at (str.isspace()), which `\s` does not match exactly. */
const PYTHON_WHITESPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** Python's `command.split()`: the whitespace-separated tokens, no empty ones. */
export const pythonSplit = (command: string) => command.split(PYTHON_WHITESPACE).filter((x) => x !== '');

/** The leading CLI/resource token (seed 002: `command.split()[0]`), null when there is none. */
export const scopeOf = (command: string): string | null => pythonSplit(command)[0] ?? null;

/** Seed 002's agent_status.next_action while a request waits. */
export const AWAITING_APPROVAL = 'awaiting user approval';

/**
 * Seed 002's APPROVAL_REQUEST envelope for a command approval: what the agent relays verbatim
 * (agent_status, and approval_request with the seven sealed fields under the contract's names
 * plus approval_id), in the seed's key order.
 */
export function approvalRequestEnvelope(c: { approvalId: string; agentId: string; commands: string[]; payload: SealedPayload }) {
  return {
    agent_status: {
      agent_state: 'APPROVAL_REQUEST' as const,
      agent_id: c.agentId,
      pending_steps: c.commands.map((command) => `run after approval ${noncePrefix(c.approvalId)}: ${command}`),
      next_action: AWAITING_APPROVAL,
    },
    approval_request: {
      operation: c.payload.operation,
      exact_content: c.payload.exact_content,
      scope: c.payload.scope,
      risk_level: c.payload.risk_level,
      rollback: null,
      rationale: c.payload.rationale,
      verification: c.payload.verification,
      approval_id: c.approvalId,
    },
  };
}
export type ApprovalRequestEnvelope = ReturnType<typeof approvalRequestEnvelope>;

/**
 * The `[T3_BLOCKED]` denial (seed 002: both shapes "arrive in the same `[T3_BLOCKED]` denial
 * the hook returns at block time"): the marker and what to do, the approval_id on its own line,
 * then the envelope as a fenced JSON block the agent copies into its handoff.
 */
export function t3BlockedDenial(envelope: ApprovalRequestEnvelope): string {
  const r = envelope.approval_request;
  return [
    `[T3_BLOCKED] ${r.operation}: this command needs a person's approval and did not run.`,
    'Do NOT retry, reword or split it. Report APPROVAL_REQUEST: relay agent_status and approval_request below verbatim, and wait.',
    `After it is approved (${approveLabel(r.approval_id)}), run exactly the same command again; it then runs once.`,
    `Command: ${r.exact_content}`,
    `approval_id: ${r.approval_id}`,
    '```json',
    JSON.stringify(envelope, null, 2),
    '```',
    '',
  ].join('\n');
}

/** How much of a failed command's stderr the guard keeps as the FAILED detail (the tail). */
export const STDERR_TAIL_BYTES = 4096;
