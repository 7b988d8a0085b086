// Every limit on what agents and people send lives here once (the approval-request extension of
// seed 000, the structured-form subset of seed 003, cards, A2UI, the composer, decisions, people,
// groups, policies, command approvals, webhooks); the server, the fixture agent and the console
// import it, so a box in the console and the check behind it cannot drift apart. The few bounds
// kept elsewhere, and why: docs/choices.md "Issue 24: one place per rule". No Node-only APIs: the
// console bundles this file. Text limits count characters as codePointLength does, unless a limit
// says otherwise.

export const KIB = 1024;

/**
 * How deeply untrusted JSON may nest: levels of arrays and objects below the value itself (an
 * agent's part data and metadata, artifacts, error data, its card, an A2UI surface, an A2UI
 * action's context; an approval's action.data). The seeds state no limit. Every walker of such
 * data recurses (the copy in lib/untrusted.ts, RFC 8785 digests, the console's JSON tree), so
 * the depth is bounded; 64 is far beyond any real payload (docs/choices.md).
 */
export const JSON_DEPTH_MAX = 64;

export const APPROVAL_LIMITS = {
  /** The whole request part, as UTF-8 bytes of its JSON serialization. */
  partMaxBytes: 128 * KIB,
  titleMin: 1,
  titleMax: 200,
  summaryMax: 4000,
  textMin: 1,
  textMax: 20000,
  /** send_message `data` object, UTF-8 bytes of its JSON serialization. */
  dataMaxBytes: 64 * KIB,
  /**
   * send_message `data`: levels of nesting, as deep as the A2A client reads agent content.
   * Deeper data that still fits in 64 KiB would overflow the digest's recursion.
   */
  dataDepthMax: JSON_DEPTH_MAX,
  /** send_data `form`, UTF-8 bytes of its JSON serialization. */
  formMaxBytes: 64 * KIB,
  expiresMinSeconds: 1,
  expiresMaxSeconds: 2_592_000,
  /** Used when a request carries no expiresInSeconds (7 days); TASKBAY_DEFAULT_APPROVAL_TTL overrides. */
  defaultTtlSeconds: 7 * 24 * 3600,
} as const;

/**
 * A2UI v0.9 (forms/a2ui.ts): a part of 1..envelopesMax envelopes of at most bytesMax of JSON,
 * and the action a person's button press sends back, at most actionBytesMax, its names (name,
 * surfaceId, sourceComponentId) at most nameMax characters.
 */
export const A2UI_LIMITS = {
  envelopesMax: 100,
  bytesMax: 256 * KIB,
  actionBytesMax: 16 * KIB,
  nameMax: 200,
} as const;

export const FORM_LIMITS = {
  propertiesMin: 1,
  propertiesMax: 30,
  enumMax: 50,
  propertyName: /^[A-Za-z_][A-Za-z0-9_]{0,63}$/,
  reservedNames: ['__proto__', 'constructor', 'prototype'] as readonly string[],
} as const;

/** What a person may send through the composer (startTask, sendTaskMessage). */
export const MESSAGE_LIMITS = {
  textMax: 20000,
  dataMaxBytes: 64 * KIB,
  /** sendTaskMessage's optional idempotencyKey, in characters. */
  idempotencyKeyMax: 200,
} as const;

/**
 * A request's externalId (createApproval; the command-approvals REST body's external_id): the
 * integration's own id of the call or thread that asks (an MCP request, a framework's tool call
 * or thread). 1 to 200 characters of printable ASCII, space (0x20) to tilde (0x7e), taken exactly
 * as given (nothing trimmed): an id, never prose (approvals/external-id.ts).
 */
export const EXTERNAL_ID_LIMITS = {
  min: 1,
  max: 200,
  characters: /^[\x20-\x7e]*$/,
} as const;

export const DECISION_LIMITS = {
  commentMax: 4000,
} as const;

/**
 * An agent's card (a2a/card.ts): configuration fetched from an agent Taskbay does not control.
 * Text in characters; URLs and protocol bindings, ASCII when valid, in UTF-16 units (as every
 * URL limit: webhooks too); lists in entries. An AG-UI agent has no card: the name its admin
 * gives it and its endpoint URL (agui/agent-registration.ts) are held to nameMax and urlMax too,
 * and a request's approver scope names a skill by an id of at most skillIdMax (approvals/service.ts).
 */
export const AGENT_LIMITS = {
  nameMax: 200,
  descriptionMax: 10_000,
  versionMax: 100,
  urlMax: 2048,
  bindingMax: 64,
  interfacesMax: 32,
  extensionsMax: 64,
  skillsMax: 200,
  skillIdMax: 200,
  skillNameMax: 200,
  tagsMax: 64,
  tagMax: 100,
  modesMax: 64,
  modeMax: 200,
} as const;

/** Outgoing webhooks (webhooks/service.ts). Endpoints per tenant bound the fan-out of one event. */
export const WEBHOOK_LIMITS = {
  urlMax: 2048,
  descriptionMax: 500,
  endpointsPerTenantMax: 20,
  /** A secret rotation's grace period (the old secret signs beside the new one): 24 hours unless given, at most 7 days. */
  rotationGraceDefaultSeconds: 86400,
  rotationGraceMaxSeconds: 7 * 86400,
} as const;

/**
 * An execution-evidence part (evidence/part.ts), the UTF-8 bytes of its JSON: far above a real
 * report (about 300 bytes plus its detail, whose limit is @taskbay/verify's EVIDENCE_DETAIL_MAX_CHARS).
 */
export const EVIDENCE_LIMITS = { partMaxBytes: 8 * KIB } as const;

/** Failed audit verifications (audit/failures.ts) and their acknowledgement. */
export const AUDIT_LIMITS = {
  /** A failure's reason as kept: the verifier's first problem, clipped. */
  failureReasonMax: 1000,
  /** The note of an admin acknowledging a failure, in code points. */
  acknowledgementNoteMax: 2000,
} as const;

export const RISKS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISKS)[number];

const utf8 = new TextEncoder();

/** Bytes of the JSON serialization of a value, the measure every size limit uses. */
export function jsonBytes(value: unknown): number {
  return utf8.encode(JSON.stringify(value) ?? '').length;
}

/** Characters as every length limit counts them: Unicode code points (stops past `limit`). */
export function codePointLength(s: string, limit = Infinity): number {
  let n = 0;
  for (const _ of s) {
    n++;
    if (n > limit) break;
  }
  return n;
}

/**
 * AG-UI runs (agui/protocol/client.ts): an agent's event stream is hostile input. An event over
 * eventMaxBytes or nested deeper than eventDepthMax, a stream over streamMaxBytes (every byte
 * read: comments and framing too) or eventsMax events, or a run ending with more than
 * interruptsMax interrupts is a protocol error recorded on the run.
 */
export const AGUI_LIMITS = {
  eventMaxBytes: 256 * 1024,
  streamMaxBytes: 4 * 1024 * 1024,
  eventsMax: 5000,
  /**
   * Levels of arrays and objects in one event, the event object included (1): a state snapshot
   * or a delta's values nest a level or two less. So a state is at most eventMaxBytes of JSON,
   * nested at most this deep, before anything walks it recursively.
   */
  eventDepthMax: JSON_DEPTH_MAX,
  interruptsMax: 20,
  /** A run (one POST and its stream) is given up after this long. */
  runTimeoutMs: 5 * 60_000,
} as const;

/**
 * Policy conditions (policies/condition.ts, docs/POLICIES.md "Cost bounds"). A condition is CEL an
 * admin of one tenant writes; it runs over agent-written text in the transaction that opens a
 * request, on the event loop every tenant shares. Its size and syntax are bounded when it is
 * saved and loaded; its worst-case cost over the largest inputs below is bounded then too; and
 * each evaluation is metered (policies/condition-budget.ts), so a condition stored behind the
 * API's back or an estimate that is wrong still stops. A unit of work is one character or element
 * of a value an evaluation step produces; a step itself costs stepCost (a step of the library is
 * about as slow as copying that many characters). workMax is about 20 ms on one core.
 */
export const CONDITION_LIMITS = {
  /** A condition's source in UTF-16 code units, as the parser reads it: what bounds its syntax is parser work, not characters. */
  sourceMaxChars: 2000,
  /** The parser's structural limits (syntax nodes, nesting, list and map literals, arguments). */
  astNodesMax: 300,
  depthMax: 32,
  listElementsMax: 32,
  mapEntriesMax: 32,
  callArgumentsMax: 8,
  /** What all of a request's conditions together may spend, and the tenant's enabled conditions together at worst. */
  workMax: 16_000_000,
  stepCost: 128,
  /** The largest value (a string's characters, a list's or map's elements and theirs) one step may produce. */
  valueSizeMax: 1_048_576,
  /** join's separator is a string literal at most this long: the output grows by it per element. */
  joinSeparatorMaxChars: 16,
  /** The longest `text` (UTF-16 code units) a condition is evaluated on; longer fails closed (128 KiB, the request part's limit). */
  textMaxChars: 131_072,
  /** The longest value of every other string variable (title, agent.name, skill, ids, ...). */
  fieldMaxChars: 1000,
} as const;

/**
 * A password, in UTF-16 code units (JavaScript's length) rather than characters: the bound is
 * there for argon2, which reads every byte of what it is given, so it is checked before anything
 * is hashed (auth/credentials.ts). A UTF-16 unit is at most 3 bytes of UTF-8.
 */
export const PASSWORD_LIMITS = { min: 8, max: 1000 } as const;

/**
 * People and their API tokens (auth/service.ts, auth/lifecycle.ts). An expiry is optional on a
 * token; when given it is bounded, like an approval's. Tokens per person bound the token lists.
 * A createUser refused because the email cannot be used (it belongs to a person of this or
 * another tenant: one answer for both) is counted per tenant; past the limit the tenant's
 * createUser is refused before any email is looked at, so probing which addresses exist
 * elsewhere stays slow (docs/choices.md, "Issue 22: tenants and the person lifecycle").
 */
export const PEOPLE_LIMITS = {
  nameMax: 200,
  /** An email in UTF-16 code units: RFC 5321's 64 of a local part, the @ and 255 of a domain. */
  emailMax: 320,
  tokenLabelMax: 200,
  tokenExpiresMinSeconds: 60,
  tokenExpiresMaxSeconds: 366 * 24 * 3600,
  tokensPerPersonMax: 100,
  unavailableEmailsPerTenant: 20,
  unavailableEmailsWindowSeconds: 3600,
} as const;

/**
 * One-time sign-in links (auth/sign-in-links.ts): the way in of a person without a password, and
 * a password reset. An admin's link lasts a day (time to pass it on); the one shown at start-up
 * an hour (the operator is at the terminal, and the next start shows a new one). A person holds
 * at most livePerPersonMax unexpired links; making another removes their oldest.
 */
export const SIGN_IN_LINK_LIMITS = {
  ttlSeconds: 24 * 3600,
  startupTtlSeconds: 3600,
  livePerPersonMax: 10,
} as const;

// Hostile agents and the transcript. An agent decides how much it sends; these bound what
// Taskbay reads of it and keeps. docs/choices.md "Issue 22: untrusted streams and reading a task"
// says what a task that reaches a limit looks like.

/**
 * One A2A stream (SendStreamingMessage, SubscribeToTask: a2a/connection.ts): it is ended after
 * eventsMax events, or once bytesMax bytes were read (every byte: comments, framing and events
 * without data count). Each event is also at most A2A_RESPONSE_MAX_BYTES (4 MiB) of data.
 */
export const A2A_STREAM_LIMITS = {
  eventsMax: 5000,
  bytesMax: 32 * 1024 * KIB,
} as const;

/**
 * What one task keeps of what its agent sends (tasks/observe.ts), whatever brought it: streams,
 * push callbacks, answers to sends and GetTask, AG-UI runs. A message is measured as the UTF-8
 * bytes of the JSON of what is stored for it (parts, metadata, and the form and A2UI read from
 * them). What would go over a limit is not stored, and Taskbay stops following the task.
 */
export const TASK_LIMITS = {
  messagesMax: 2000,
  bytesMax: 16 * 1024 * KIB,
  statusChangesMax: 2000,
} as const;

/**
 * Reading a transcript (GraphQL Task.messages). A page holds at most pageMax messages, the
 * latest first chosen, and no more of them than fit in pageBytesMax (always at least one); one
 * request (all its aliases and tasks together) reads at most requestBytesMax bytes of messages.
 */
export const TRANSCRIPT_READ_LIMITS = {
  pageMax: 100,
  pageBytesMax: 4 * 1024 * KIB,
  requestBytesMax: 16 * 1024 * KIB,
} as const;

/**
 * Coding-agent hooks (server/src/hooks/, docs/COMMAND-APPROVALS.md). A hook's input is the host's
 * JSON (Claude Code, Codex), read from the CLI's stdin or an HTTP hook's body; a larger one is
 * refused (and the tool call blocked). The wait is how long Taskbay holds a tool call for a
 * person's decision: below the host's hook timeout (600 s by default for both hosts), by
 * `relayMarginSeconds`, the time the CLI allows on top of the wait for the answer to come back.
 */
export const HOOK_LIMITS = {
  bodyMaxBytes: 256 * KIB,
  /** session_id and tool_use_id, in characters (they are stored). */
  idMaxChars: 200,
  /** The host's cwd, in characters, as a rule and the sealed rationale see it. */
  cwdMaxChars: 1000,
  defaultWaitSeconds: 540,
  waitMinSeconds: 1,
  waitMaxSeconds: 3600,
  relayMarginSeconds: 20,
  /** How long a held command's request stays open (a re-run resumes it until then). */
  defaultExpiresSeconds: 3600,
  /** A PermissionRequest this soon after the PreToolUse that was allowed for the same command is that call's prompt. */
  promptAfterAllowSeconds: 120,
  /** Safety net of the wait beside the LISTEN-fed pub/sub (a missed notification during a reconnect). */
  recheckSeconds: 15,
} as const;

/** Reviewer groups (groups/service.ts): a name in characters, groups per tenant, members per group. */
export const GROUP_LIMITS = {
  nameMax: 100,
  groupsPerTenantMax: 200,
  membersPerGroupMax: 500,
} as const;

/** Approval policies (policies/rules.ts, docs/POLICIES.md "Rules"). */
export const POLICY_LIMITS = {
  nameMax: 100,
  policiesPerTenantMax: 100,
  quorumMax: 20,
  groupsPerQuorumMax: 10,
  /** An escalation after the longest a request can stay open would never happen. */
  escalationMaxSeconds: APPROVAL_LIMITS.expiresMaxSeconds,
} as const;

/**
 * A command approval (seed 002; commands/rules.ts): at most commandsMax commands of at most
 * commandMaxChars characters each, the texts of its sealed payload, and the outcome detail kept
 * of a command that ran (a longer one is cut, keeping its end, where a stderr tail has the error).
 */
export const COMMAND_LIMITS = {
  commandsMax: 32,
  commandMaxChars: 20_000,
  operationMaxChars: 500,
  scopeMaxChars: 200,
  rationaleMaxChars: 4000,
  verificationMaxChars: 4000,
  outcomeDetailMaxChars: 8192,
} as const;

/** A tenant's command rules (hooks/rules.ts): an ordered list of CEL conditions and outcomes. */
export const COMMAND_RULE_LIMITS = {
  rulesMax: 100,
  reasonMaxChars: 500,
} as const;

/**
 * Taskbay's MCP server (server/src/mcp/, docs/MCP.md). A JSON-RPC body over bodyMaxBytes is
 * refused (413) before it is parsed. Sessions live in the instance that opened them: at most
 * sessionsMax on one instance and sessionsPerTokenMax per API token (a client that opens more
 * is refused until one closes or idles out after sessionIdleSeconds). A request_approval waits
 * up to waitMaxSeconds for a decision (defaultWaitSeconds unless it says; 0 answers at once with
 * the request id), telling the client it is alive every progressSeconds. The client's name, as
 * its initialize says it, names its agent; a tool call to approve names an MCP server and a tool
 * in at most serverNameMaxChars and toolNameMaxChars (its arguments are the action's data).
 */
export const MCP_LIMITS = {
  bodyMaxBytes: 256 * KIB,
  sessionsMax: 1000,
  sessionsPerTokenMax: 32,
  sessionIdleSeconds: 1800,
  defaultWaitSeconds: 50,
  waitMaxSeconds: 3600,
  progressSeconds: 10,
  clientNameMaxChars: 100,
  serverNameMaxChars: 200,
  toolNameMaxChars: 200,
} as const;

/**
 * The MCP gateway (server/src/mcp/, docs/MCP.md "The gateway"): MCP servers an admin puts
 * behind approval, at most serversPerTenantMax per tenant, each named in at most
 * serverNameMaxChars of [a-z0-9-] (MCP_LIMITS). Its call rules: at most callRulesMax, a reason
 * of at most callRuleReasonMaxChars. What an upstream answers is hostile: one answer of at most
 * upstreamAnswerMaxBytes (a larger or never-ending one is cut and the call fails), within
 * upstreamTimeoutSeconds; a tool list of at most toolsMax tools. A held call's arguments are
 * the action's data (APPROVAL_LIMITS.dataMaxBytes, JSON_DEPTH_MAX levels).
 */
export const MCP_GATEWAY_LIMITS = {
  serversPerTenantMax: 50,
  callRulesMax: 100,
  callRuleReasonMaxChars: 500,
  urlMaxChars: 2048,
  /** A stdio server's command and each of its arguments, in characters; at most argsMax arguments. */
  commandMaxChars: 1000,
  argsMax: 64,
  upstreamAnswerMaxBytes: 4 * 1024 * KIB,
  upstreamTimeoutSeconds: 60,
  toolsMax: 1000,
  /** The console's view of a server: each tool's name, title and description clipped to this; its recent held calls, at most recentCallsMax. */
  toolTextMaxChars: 500,
  recentCallsMax: 50,
} as const;
