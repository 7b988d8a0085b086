// The kinds of agent record. This module's own are A2A (registered from an Agent Card) and
// COMMAND_HOOK (one person's coding-agent hook, the `hook_user_id` column); a later module that
// brings a kind of its own (AG-UI, MCP hosts) registers it from its module.ts with
// `registerAgentKind` and adds its name to `AgentKinds` by declaration merging, so the agent
// table, its checks and the GraphQL enum grow without an edit here.
//
// The list is read when the ORM discovers the entities and when the schema is built, both after
// every module's face was imported (modules.ts); a registration after that first read throws
// rather than be missing from one of them.

/** Each kind's name, as stored in `agent.kind`; modules add theirs (`declare module '../agents/module.js'`). */
export interface AgentKinds {
  A2A: true;
  COMMAND_HOOK: true;
}
export type AgentKind = keyof AgentKinds & string;

export interface AgentKindSpec {
  readonly kind: AgentKind;
  /** How a refusal names an agent of this kind: "an MCP client". */
  readonly noun: string;
  /** Its sentence in the GraphQL enum's description. */
  readonly description: string;
  /** SQL over the agent table's columns that every row of this kind satisfies (the shape check). */
  readonly shape: string;
  /** Why no grant can be limited to a skill of such an agent; null when its card may list skills. */
  readonly noSkills: string | null;
}

const specs = new Map<AgentKind, AgentKindSpec>();
/** Live: the entity's enum holds this array and reads it at discovery. */
export const AGENT_KIND_NAMES: AgentKind[] = [];
let read = false;

export function registerAgentKind(spec: AgentKindSpec): void {
  if (read) throw new Error(`agent kind ${spec.kind} registered after the kinds were read: register it from a module.ts`);
  if (specs.has(spec.kind)) throw new Error(`two agent kinds are named ${spec.kind}`);
  specs.set(spec.kind, spec);
  AGENT_KIND_NAMES.push(spec.kind);
}

/** Every kind, in the order registered (this module's first, then modules.ts order). */
export function agentKinds(): readonly AgentKindSpec[] {
  read = true;
  return [...specs.values()];
}

export function agentKindSpec(kind: AgentKind): AgentKindSpec {
  const spec = specs.get(kind);
  if (!spec) throw new Error(`unknown agent kind ${kind}`);
  return spec;
}

registerAgentKind({
  kind: 'A2A',
  noun: 'an A2A agent',
  description: 'registered from an Agent Card.',
  shape: 'card_url is not null and hook_user_id is null and endpoint_url is null',
  noSkills: null,
});
registerAgentKind({
  kind: 'COMMAND_HOOK',
  noun: 'a command hook',
  description: "the agent record of one person's coding-agent hook; its command approvals belong to it. It has no card and takes no tasks.",
  shape: 'card_url is null and hook_user_id is not null and endpoint_url is null',
  noSkills: 'a command hook has no skills: grant on the whole hook agent',
});
