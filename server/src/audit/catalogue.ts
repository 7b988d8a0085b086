import { isPlainObject } from '../lib/untrusted.js';

// Every audit event type Taskbay writes, declared once: the stream it belongs to, its payload
// (whose TypeScript type is inferred from the same declaration that checks it at runtime), and
// what tells it to the outside: the webhook payload type it becomes, the GraphQL subscriptions
// that deliver it besides approvalChanged, the console's words for it. audit/log.ts refuses an
// event this file does not declare, or whose payload does not match, before writing anything.
// Plain TypeScript with no Node built-ins: the console imports it for its labels.

// ---- Checks: each returns null when it admits a JSON value, else what is wrong with it. ----

/** A check of one JSON value; `T` is the TypeScript type of what it admits. */
export interface Check<T> {
  (value: unknown): string | null;
  /** Never set: carries T. */
  readonly admits?: T;
}

/** A payload field that may be absent (never undefined: payloads are stored as JSON). */
interface Optional<T> {
  readonly optional: Check<T>;
}

type Field = Check<unknown> | Optional<unknown>;
type Shape = Readonly<Record<string, Field>>;

type TypeOf<F> = F extends Optional<infer T> ? T : F extends Check<infer T> ? T : never;
type RequiredKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? never : K }[keyof S];
type OptionalKeys<S extends Shape> = Exclude<keyof S, RequiredKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The payload a shape admits. */
export type PayloadOf<S extends Shape> = Simplify<{ [K in RequiredKeys<S>]: TypeOf<S[K]> } & { [K in OptionalKeys<S>]?: TypeOf<S[K]> }>;

/** A problem of a part of a value, said of the value: `data` and `.kind is not a string` make `data.kind is not a string`. */
const at = (where: string, problem: string) => (problem.startsWith('.') || problem.startsWith('[') ? `${where}${problem}` : `${where} ${problem}`);

const check = <T>(test: (v: unknown) => boolean, what: string): Check<T> => ((v: unknown) => (test(v) ? null : `is not ${what}`)) as Check<T>;

const str = check<string>((v) => typeof v === 'string', 'a string');
const int = check<number>((v) => Number.isSafeInteger(v), 'an integer');
const num = check<number>((v) => typeof v === 'number' && Number.isFinite(v), 'a number');
const bool = check<boolean>((v) => typeof v === 'boolean', 'a boolean');
/** Any JSON value but absent: a structure written and checked elsewhere (an action, a sealed payload, rules). */
const json = (() => null) as Check<NonNullable<unknown> | null>;

const literal = <const L extends readonly (string | boolean)[]>(...values: L): Check<L[number]> =>
  check<L[number]>((v) => values.includes(v as L[number]), `one of ${values.map((x) => JSON.stringify(x)).join(', ')}`);

const nullable = <T>(c: Check<T>): Check<T | null> => ((v: unknown) => (v === null ? null : c(v))) as Check<T | null>;

const optional = <T>(c: Check<T>): Optional<T> => ({ optional: c });

/** Null or absent: a column the ORM types as optional (written as read, undefined dropped by JSON). */
const maybe = <T>(c: Check<T>): Optional<T | null> => optional(nullable(c));

const arrayOf = <T>(c: Check<T>): Check<T[]> =>
  ((v: unknown) => {
    if (!Array.isArray(v)) return 'is not an array';
    for (let i = 0; i < v.length; i++) {
      const p = c(v[i]);
      if (p) return at(`[${i}]`, p);
    }
    return null;
  }) as Check<T[]>;

/** An object with exactly these fields (the optional ones may be absent); an undeclared field is refused. */
function shape<S extends Shape>(fields: S): Check<PayloadOf<S>> {
  const entries = Object.entries(fields).map(([key, f]) => ({ key, check: typeof f === 'function' ? f : f.optional, required: typeof f === 'function' }));
  return ((v: unknown) => {
    if (!isPlainObject(v)) return 'is not an object';
    for (const key of Object.keys(v)) if (!Object.hasOwn(fields, key)) return `has an undeclared field ${JSON.stringify(key)}`;
    for (const e of entries) {
      if (!Object.hasOwn(v, e.key)) {
        if (e.required) return `lacks ${e.key}`;
        continue;
      }
      const p = e.check(v[e.key]);
      if (p) return at(`.${e.key}`, p);
    }
    return null;
  }) as Check<PayloadOf<S>>;
}

// ---- Vocabularies the payloads and the database share ----

/**
 * Seed 002's event vocabulary: the nine values its `approval_events.event_type` CHECK admits,
 * and the only upper-case types audit_event's CHECK admits (audit/entities.ts). NOOP and REVERTED
 * are accepted there and never written, so they have no declaration below: appendEvents refuses them.
 */
export const COMMAND_EVENT_TYPES = ['REQUESTED', 'SHOWN', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED', 'NOOP', 'REVOKED', 'REVERTED'] as const;
export type CommandEventType = Exclude<(typeof COMMAND_EVENT_TYPES)[number], 'NOOP' | 'REVERTED'>;

/** What an integrity alert reports as refused: the label of taskbay_integrity_alerts_total. */
export const INTEGRITY_ALERT_KINDS = ['delivery', 'agui_resume', 'quorum_vote', 'command_grant'] as const;
export type IntegrityAlertKind = (typeof INTEGRITY_ALERT_KINDS)[number];

// ---- Declarations ----

/** The three kinds of stream (audit/log.ts `stream`): an event is written to one of its kind. */
export type StreamKind = 'approval' | 'task' | 'tenant';

/** The GraphQL subscriptions (approvals/graphql.ts) that deliver an event besides approvalChanged, which delivers every event of an approval. */
export type ApprovalSubscription = 'approvalRequested' | 'approvalSuperseded';

interface Telling {
  /** The webhook payload type the event is told as (webhooks/events.ts); absent: no webhook tells it. */
  webhook?: string;
  subscriptions?: readonly ApprovalSubscription[];
  /** The console's words for it (the raw type when absent); a function reads the stored payload, which events of before may lack. */
  label?: string | ((data: Record<string, unknown>) => string);
}

const declare = <S extends Shape, const A extends Telling = Record<never, never>>(stream: StreamKind, data: S, telling?: A) =>
  ({ stream, check: shape(data), ...(telling as A) }) as { stream: StreamKind; check: Check<PayloadOf<S>> } & A;

// Fields that route an event of an approval's stream to its subscribers (events/listener.ts).
const ofApproval = { approvalId: str, agentId: maybe(str), taskId: maybe(str) };
// A command approval's events (commands/command-event.ts): approval_id is seed 002's P- id.
const ofCommand = { approvalId: str, agentId: nullable(str), approval_id: str };
const decision = {
  ...ofApproval,
  decisionId: str,
  outcome: str,
  revision: int,
  digest: str,
  seenRevision: int,
  seenDigest: str,
  comment: nullable(str),
  delegatedToId: nullable(str),
  status: str,
  quorum: optional(shape({ count: int, required: int })),
};
const evidence = {
  ...ofApproval,
  decisionId: str,
  deliveryId: str,
  evidenceId: str,
  messageId: str,
  outcome: str,
  reportedDigest: str,
  approvedDigest: str,
  digestMatches: bool,
  detail: nullable(str),
};
const delivery = { ...ofApproval, deliveryId: str, decisionId: nullable(str), aguiRunRowId: optional(str) };
const person = { userId: str, email: str };
const grant = { grantId: str, userId: str, agentId: str, skillId: nullable(str), permission: str };
const policy = { policyId: str, name: str, version: int };
const endpoint = { endpointId: str, origin: str };

const OUTCOME_LABELS: Record<string, string> = {
  APPROVE: 'Approved',
  EDIT_AND_APPROVE: 'Edited and approved',
  REJECT: 'Rejected',
  REQUEST_CHANGES: 'Changes requested',
  DELEGATE: 'Delegated',
};

export const AUDIT_EVENTS = {
  // An approval's stream.
  'approval.requested': declare(
    'approval',
    {
      ...ofApproval,
      source: str,
      key: nullable(str),
      title: str,
      risk: str,
      revision: int,
      digest: str,
      action: json,
      expiresAt: str,
      policy: json,
      externalId: optional(str),
      editable: optional(literal(false)),
    },
    { webhook: 'approval.requested', subscriptions: ['approvalRequested'], label: 'Request opened' },
  ),
  'approval.revised': declare(
    'approval',
    { ...ofApproval, decisionId: str, revision: int, digest: str, action: json },
    { label: (d: Record<string, unknown>) => (typeof d.revision === 'number' ? `Revision ${d.revision} (reviewer edit)` : 'New revision (reviewer edit)') },
  ),
  'approval.voted': declare('approval', decision),
  'approval.decided': declare('approval', decision, {
    webhook: 'approval.decided',
    label: (d: Record<string, unknown>) => OUTCOME_LABELS[String(d.outcome)] ?? 'Decided',
  }),
  'approval.delegated': declare('approval', decision, { label: 'Delegated' }),
  'approval.escalated': declare('approval', {
    ...ofApproval,
    policy: json,
    rule: json,
    dueAt: str,
    escalatedAt: str,
    assigneeId: nullable(str),
    assigneeGroupId: nullable(str),
    risk: str,
    changed: json,
    missing: optional(arrayOf(str)),
  }),
  'approval.superseded': declare(
    'approval',
    { ...ofApproval, supersededById: nullable(str), reason: optional(str) },
    { webhook: 'approval.superseded', subscriptions: ['approvalSuperseded'], label: 'Superseded by a newer request' },
  ),
  'approval.expired': declare('approval', { ...ofApproval, expiresAt: str }, { webhook: 'approval.expired', label: 'Expired' }),
  'delivery.queued': declare('approval', { ...delivery, messageId: str }, { label: 'Delivery queued' }),
  'delivery.delivered': declare(
    'approval',
    { ...delivery, messageId: str, attempts: int, observedTaskState: nullable(str) },
    { label: 'Delivered to the agent' },
  ),
  'delivery.failed': declare(
    'approval',
    { ...delivery, attempts: int, error: str, refused: optional(literal(true)) },
    { webhook: 'delivery.failed', label: 'Delivery failed' },
  ),
  'delivery.retried': declare('approval', { ...ofApproval, deliveryId: str }, { label: 'Delivery retried' }),
  // The MCP gateway (mcp/held-call.ts): the approved call forwarded once, and what the upstream answered.
  'mcp.call_forwarded': declare('approval', { ...ofApproval, server: str, tool: str }, { label: 'Forwarded to the MCP server' }),
  'mcp.call_answered': declare(
    'approval',
    { ...ofApproval, server: str, tool: str, resultDigest: str, isError: bool },
    { label: 'The MCP server answered the call' },
  ),
  'delivery.observed': declare('approval', {
    ...ofApproval,
    deliveryId: str,
    decisionId: str,
    messageId: str,
    observedTaskState: str,
    previousObservedTaskState: maybe(str),
  }),
  'evidence.reported': declare('approval', evidence),
  'evidence.digest_mismatch': declare('approval', evidence, { webhook: 'evidence.digest_mismatch' }),
  'integrity.alert': declare(
    'approval',
    {
      ...ofApproval,
      decisionId: nullable(str),
      deliveryId: optional(str),
      kind: literal(...INTEGRITY_ALERT_KINDS),
      problem: str,
      message: str,
    },
    { label: 'Integrity alert: a row Taskbay did not sign was refused' },
  ),
  'command.activation_refused': declare(
    'approval',
    // expected: the fingerprint the REQUESTED event sealed, as read back (refused because it may have been changed).
    { ...ofCommand, reason: literal('FINGERPRINT_MISMATCH'), decisionId: str, expected: json, actual: str, mismatched: arrayOf(str) },
    { label: 'Approval refused: fingerprint mismatch' },
  ),
  'command.grant_expired': declare('approval', { ...ofCommand, grantId: str }),
  'command.grant_consumed': declare('approval', { ...ofCommand, grantId: str }, { webhook: 'command.grant_consumed' }),
  // Seed 002's events of a command approval (its "Event chain"), in its approval's stream.
  REQUESTED: declare(
    'approval',
    {
      ...ofCommand,
      kind: literal('COMMAND', 'COMMAND_SET'),
      agent_id: str,
      commands: arrayOf(str),
      payload: json,
      fingerprint: str,
      revision: int,
      digest: str,
      risk: str,
      expiresAt: str,
      policy: json,
      externalId: optional(str),
    },
    { webhook: 'approval.requested', subscriptions: ['approvalRequested'], label: 'Command requested by the hook' },
  ),
  SHOWN: declare('approval', { ...ofCommand, decisionId: str, label: str, fingerprint: str }, { label: 'Command shown to a reviewer' }),
  APPROVED: declare('approval', { ...ofCommand, decisionId: str, grantId: str, fingerprint: str, grantExpiresAt: str }, { label: 'Grant formed (approved)' }),
  REJECTED: declare('approval', { ...ofCommand, decisionId: str }, { label: 'Command rejected' }),
  EXECUTED: declare(
    'approval',
    { ...ofCommand, grantId: str, exit_code: int, commands: arrayOf(str) },
    { webhook: 'command.executed', label: 'Command ran (exit 0)' },
  ),
  FAILED: declare(
    'approval',
    {
      ...ofCommand,
      grantId: str,
      // null: the outcome was never reported (commands/reconcile.ts), which also sets the rest.
      exit_code: nullable(int),
      commands: arrayOf(str),
      detail: str,
      reconciled: optional(literal(true)),
      consumedAt: optional(str),
      timeoutSeconds: optional(num),
    },
    {
      webhook: 'command.failed',
      label: (d: Record<string, unknown>) => (typeof d.exit_code === 'number' ? `Command failed (exit ${d.exit_code})` : 'Command failed'),
    },
  ),
  REVOKED: declare('approval', { ...ofCommand, grantId: str }, { label: 'Grant revoked' }),

  // A task's stream.
  'task.observed': declare('task', {
    taskId: str,
    agentId: str,
    state: str,
    previousState: str,
    messages: arrayOf(shape({ messageId: str, stepSeq: int })),
  }),
  'task.limit_reached': declare('task', { taskId: str, agentId: str, reason: maybe(str), state: str, previousState: str }),
  'evidence.refused': declare('task', { taskId: str, agentId: str, messageId: str, reason: str, text: str, decisionId: nullable(str) }),

  // A tenant's stream.
  'agent.registered': declare('tenant', {
    agentId: str,
    name: str,
    // An A2A agent, by its card:
    cardUrl: optional(str),
    snapshot: optional(int),
    // An AG-UI agent, by its endpoint:
    protocol: optional(literal('AG_UI')),
    endpointUrl: optional(str),
  }),
  'agent.card_refreshed': declare('tenant', { agentId: str, snapshot: int, name: str }),
  'agent.command_hook_created': declare('tenant', { agentId: str, hookUserId: str, name: str }),
  'agent.mcp_client_created': declare('tenant', { agentId: str, userId: str, clientName: str, name: str }),
  'mcp.server_registered': declare('tenant', { serverId: str, name: str, transport: str, url: nullable(str), command: nullable(str), rules: json }),
  'mcp.server_rules_set': declare('tenant', { serverId: str, name: str, rules: json }),
  'mcp.server_removed': declare('tenant', { serverId: str, name: str }),
  'command_rules.set': declare('tenant', { version: int, rules: json }),
  'session.created': declare('tenant', { userId: str }),
  'user.created': declare('tenant', { userId: str, email: str, role: str, bootstrap: optional(literal(true)) }),
  'user.disabled': declare('tenant', person),
  'user.enabled': declare('tenant', person),
  'user.role_changed': declare('tenant', { ...person, from: str, to: str }),
  'token.created': declare('tenant', { tokenId: str, userId: str, label: str, expiresAt: nullable(str) }),
  'token.revoked': declare('tenant', { tokenId: str, userId: str, label: str }),
  // A one-time sign-in link (auth/sign-in-links.ts): made by an admin (the actor), or at start-up
  // for the admin of TASKBAY_ADMIN_EMAIL (actor system, `startup`); used, it sets the password.
  'sign_in_link.created': declare('tenant', { ...person, expiresAt: str, startup: optional(literal(true)) }),
  'user.password_set': declare('tenant', { ...person, via: literal('sign_in_link') }),
  'grant.set': declare('tenant', grant),
  'grant.revoked': declare('tenant', grant),
  'policy.created': declare('tenant', { ...policy, position: int, enabled: bool, condition: str, rules: json }),
  'policy.updated': declare('tenant', { ...policy, from: optional(str), enabled: optional(bool), condition: optional(str), rules: optional(json) }),
  'policy.enabled': declare('tenant', policy),
  'policy.disabled': declare('tenant', policy),
  'policy.reordered': declare('tenant', { order: arrayOf(str) }),
  'policy.deleted': declare('tenant', policy),
  'group.created': declare('tenant', { groupId: str, name: str, memberIds: arrayOf(str) }),
  'group.renamed': declare('tenant', { groupId: str, from: str, name: str }),
  'group.deleted': declare('tenant', { groupId: str, name: str }),
  'group.member_added': declare('tenant', { groupId: str, userId: str }),
  'group.member_removed': declare('tenant', { groupId: str, userId: str }),
  'webhook.created': declare('tenant', { ...endpoint, eventTypes: arrayOf(str), enabled: bool }),
  'webhook.updated': declare('tenant', { ...endpoint, changed: arrayOf(str), eventTypes: arrayOf(str), enabled: bool }),
  'webhook.deleted': declare('tenant', endpoint),
  'webhook.secret_rotated': declare('tenant', { ...endpoint, graceSeconds: int }),
  'audit.failure_acknowledged': declare('tenant', {
    failureId: str,
    foundAt: str,
    reason: str,
    failedStream: nullable(str),
    failedSeq: nullable(int),
    note: str,
  }),
};

type Catalogue = typeof AUDIT_EVENTS;
export type AuditEventType = keyof Catalogue;
/** The payload of an event of type T, as written (and as stored: JSON, no undefined). */
export type AuditPayload<T extends AuditEventType> = Catalogue[T]['check'] extends Check<infer P> ? P : never;
/** Every audit event, discriminated by its type. */
export type AuditEvent = { [T in AuditEventType]: { type: T; data: AuditPayload<T> } }[AuditEventType];

type WebhookOf<T extends AuditEventType> = Catalogue[T] extends { webhook: infer W extends string } ? W : never;
/** The webhook payload types the catalogue tells events as (webhooks/events.ts names each one). */
export type WebhookPayloadType = { [T in AuditEventType]: WebhookOf<T> }[AuditEventType];

// Upper-case types are seed 002's written ones and no others: the database refuses any other (audit/entities.ts).
type UpperCaseType = { [T in AuditEventType]: T extends Uppercase<T> ? T : never }[AuditEventType];
const onlySeedTypesUpperCase: [Exclude<UpperCaseType, CommandEventType> | Exclude<CommandEventType, UpperCaseType>] extends [never] ? true : never = true;
void onlySeedTypesUpperCase;

// ---- Lookups ----

interface Declared {
  stream: StreamKind;
  check: Check<unknown>;
  webhook?: string;
  subscriptions?: readonly ApprovalSubscription[];
  label?: string | ((data: Record<string, unknown>) => string);
}

const DECLARED = new Map<string, Declared>(Object.entries(AUDIT_EVENTS) as [string, Declared][]);

export const AUDIT_EVENT_TYPES = [...DECLARED.keys()] as AuditEventType[];

/**
 * Why this event may not be written (null when it may): its type is not declared here, its
 * stream is not of the type's kind, or its payload (as JSON gives it back) does not match.
 */
export function auditEventProblem(type: string, stream: string, data: unknown): string | null {
  const d = DECLARED.get(type);
  if (!d) return `audit event type ${JSON.stringify(type)} is not declared in audit/catalogue.ts`;
  if (!stream.startsWith(`${d.stream}:`)) return `audit event ${type} belongs to a ${d.stream} stream, not ${JSON.stringify(stream)}`;
  const p = d.check(data);
  return p ? `audit event ${type}: ${at('data', p)}` : null;
}

/** The webhook payload type an audit event is told as, or null when no webhook tells it. */
export function webhookTypeOf(type: string): WebhookPayloadType | null {
  return (DECLARED.get(type)?.webhook as WebhookPayloadType | undefined) ?? null;
}

/** The audit event types a subscription delivers (a set: its filter runs for every subscriber of every event). */
export function auditTypesOf(subscription: ApprovalSubscription): ReadonlySet<string> {
  return new Set([...DECLARED].filter(([, d]) => d.subscriptions?.includes(subscription)).map(([type]) => type));
}

/** The console's words for an event (the raw type when it has none). */
export function auditEventLabel(type: string, data: unknown): string {
  const label = DECLARED.get(type)?.label;
  if (typeof label === 'string') return label;
  if (label) return label(isPlainObject(data) ? data : {});
  return type;
}
