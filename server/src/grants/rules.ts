import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../approvals/digest.js';

// Seed 002 ("agent-approval-protocol") in plain functions: the sealed payload, the P- ids, the
// fingerprint, the status and event vocabularies. One place per rule.

/** approvals.status (seed 002): lowercase. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'revoked', 'expired'] as const;
export type CommandApprovalStatus = (typeof APPROVAL_STATUSES)[number];
/** approval_grants.status (seed 002): UPPERCASE. Distinct column, never collapsed. */
export const GRANT_STATUSES = ['PENDING', 'CONSUMED', 'REVOKED', 'EXPIRED'] as const;
export type GrantStatus = (typeof GRANT_STATUSES)[number];
/** The nine event types the CHECK admits; NOOP and REVERTED are accepted and never written. */
export const EVENT_TYPES = ['REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'NOOP', 'REVOKED', 'REVERTED'] as const;
export type CommandEventType = Exclude<(typeof EVENT_TYPES)[number], 'NOOP' | 'REVERTED'>;

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
export const MAX_COMMANDS = 32;
export const MAX_COMMAND_CHARS = 20_000;
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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Record<string, unknown>, k: string) => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

function text(v: unknown, name: string, max: number): string | string[] {
  if (typeof v !== 'string' || v.length === 0) return [`${name} must be a non-empty string`];
  if ([...v].length > max) return [`${name} is longer than ${max} characters`];
  return v;
}

/** The sealed payload: exactly the seven fields, relayed verbatim (never authored here). */
export function parseSealedPayload(input: unknown): Parsed<SealedPayload> {
  if (!isObject(input)) return { ok: false, error: 'payload must be an object' };
  const extra = Object.keys(input).filter((k) => !(SEALED_FIELDS as readonly string[]).includes(k));
  if (extra.length) return { ok: false, error: `payload has fields the sealed payload does not have: ${extra.join(', ')}` };
  const out: Record<string, unknown> = {};
  for (const [name, max] of [
    ['operation', 500],
    ['exact_content', MAX_COMMAND_CHARS],
    ['scope', 200],
    ['rationale', 4000],
    ['verification', 4000],
  ] as const) {
    const v = text(own(input, name), name, max);
    if (Array.isArray(v)) return { ok: false, error: v[0]! };
    out[name] = v;
  }
  const risk = own(input, 'risk_level');
  if (risk !== 'high' && risk !== 'medium') return { ok: false, error: 'risk_level must be "high" or "medium" (never low or critical)' };
  if (own(input, 'rollback') !== null) return { ok: false, error: 'rollback must be null (the hook computes no inverse)' };
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
  };
}

export function parseAgentId(v: unknown): Parsed<string> {
  return typeof v === 'string' && AGENT_ID.test(v)
    ? { ok: true, value: v }
    : { ok: false, error: 'agent_id must be "a" followed by 5 or more lowercase hex characters' };
}

/**
 * The command strings: absent (or one string equal to exact_content) is a single command;
 * two or more are a COMMAND_SET.
 */
export function parseCommands(v: unknown, payload: SealedPayload): Parsed<string[]> {
  if (v === undefined || v === null) return { ok: true, value: [payload.exact_content] };
  if (!Array.isArray(v) || v.length === 0) return { ok: false, error: 'commands must be a non-empty array of strings' };
  if (v.length > MAX_COMMANDS) return { ok: false, error: `at most ${MAX_COMMANDS} commands` };
  for (const c of v) {
    const t = text(c, 'each command', MAX_COMMAND_CHARS);
    if (Array.isArray(t)) return { ok: false, error: t[0]! };
  }
  if (v.length === 1 && v[0] !== payload.exact_content) {
    return { ok: false, error: 'a single command must equal payload.exact_content' };
  }
  return { ok: true, value: [...(v as string[])] };
}

/** Canonical JSON (RFC 8785) then SHA-256 hex. */
export const canonicalSha256 = (value: unknown) => sha256Hex(canonicalJson(value));

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

export const isRunCommand = (action: unknown): action is RunCommandAction => isObject(action) && action.kind === 'run_command';

/** The nonce prefix shown in option labels (seed 002): `[P-b1bdfbb0]`. */
export const noncePrefix = (approvalId: string) => approvalId.slice(0, 10);

/** POSIX-shell quoting of an argv, so exact_content is the command verbatim and re-runnable. */
export function shellQuote(argv: string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The leading CLI/resource token (seed 002: `command.split()[0]`). */
export const scopeOf = (command: string) => command.trim().split(/\s+/)[0] ?? command;
