import {
  cachedCompile,
  checkedRuleList,
  type CompiledCondition,
  conditionLanguage,
  decideByRules,
  type ListedRule,
  type LoadedListRule,
  loadRuleList,
  type RuleListKind,
  type RuleListVerdict,
  type VariableSpecs,
} from '../policies/module.js';
import { COMMAND_LIMITS, COMMAND_RULE_LIMITS, CONDITION_LIMITS, HOOK_LIMITS } from '../limits.js';

// A tenant's command rules (docs/COMMAND-APPROVALS.md "Which commands wait"): an ordered list,
// each a CEL condition over the tool call a coding agent's hook reports and an outcome. The
// first rule whose condition is true decides; the conditions are policy conditions in another
// language (policies/condition.ts conditionLanguage): the same syntax limits, cost walk, meter
// and CONDITION_LIMITS, over the variables below. A rule that cannot be evaluated fails closed
// as a policy condition does: the rules after it are still tried and the strictest outcome of
// all it could have been applies (DENY over ASK over ALLOW).

export const COMMAND_RULE_OUTCOMES = ['ASK', 'ALLOW', 'DENY'] as const;
export type CommandRuleOutcome = (typeof COMMAND_RULE_OUTCOMES)[number];

/** CEL over the tool call (empty matches every call), its outcome, and the reason shown with it (a DENY's is what the agent reads). */
export type CommandRule = ListedRule<CommandRuleOutcome>;

/** What a rule sees of one tool call (docs/COMMAND-APPROVALS.md "Variables"). */
export interface CommandFacts {
  /** The exact command string of the shell tool ("" for another tool). */
  command: string;
  /** Seed 002's scope: command.split()[0] ("" for another tool). */
  scope: string;
  /** The host's tool name: "Bash", "Write", "apply_patch", "mcp__…". */
  tool: string;
  /** "claude-code" or "codex". */
  host: string;
  /** "PreToolUse" or "PermissionRequest". */
  event: string;
  cwd: string;
  /** The host's permission_mode ("" when it sends none). */
  permissionMode: string;
  /** agent.id: seed 002's agent_id of the session (`a` + hex, derived from the host's session_id); agent.type: the host's agent_type ("" outside a subagent). */
  agent: { id: string; type: string };
}

/** The variables of a command rule, with their descriptions (the GraphQL and the docs say the same). */
export const COMMAND_RULE_VARIABLES: Readonly<Record<keyof CommandFacts, string>> = {
  command: 'the exact command string of the shell tool ("" for another tool)',
  scope: 'seed 002\'s scope: the command\'s first word, command.split()[0] ("" for another tool)',
  tool: 'the tool the agent calls: "Bash" (the shell tool), or another tool\'s name',
  host: '"claude-code" or "codex"',
  event: '"PreToolUse" or "PermissionRequest"',
  cwd: "the agent's working directory",
  permissionMode: 'the host\'s permission_mode ("default", "plan", "acceptEdits", "bypassPermissions", ...; "" when it sends none)',
  agent: "agent.id: the session's seed 002 agent_id (a + hex of a hash of the host's session_id); agent.type: the host's agent_type (\"\" outside a subagent)",
};

const FIELD = CONDITION_LIMITS.fieldMaxChars;
const SPECS: VariableSpecs = {
  command: { type: 'string', maxChars: COMMAND_LIMITS.commandMaxChars },
  scope: { type: 'string', maxChars: FIELD },
  tool: { type: 'string', maxChars: FIELD },
  host: { type: 'string', maxChars: FIELD },
  event: { type: 'string', maxChars: FIELD },
  cwd: { type: 'string', maxChars: HOOK_LIMITS.cwdMaxChars },
  permissionMode: { type: 'string', maxChars: FIELD },
  agent: { type: 'map', fields: { id: FIELD, type: FIELD } },
};

const language = conditionLanguage<CommandFacts>(SPECS);

/** Throws ConditionError (the parser's message, or a cost bound). */
export const compileCommandCondition: (source: string) => CompiledCondition<CommandFacts> = cachedCompile((source) => language.compile(source));

const COMMAND_RULES: RuleListKind<CommandFacts, CommandRuleOutcome> = {
  noun: 'command rule',
  per: 'one tool call',
  outcomes: COMMAND_RULE_OUTCOMES,
  strictness: { ALLOW: 0, ASK: 1, DENY: 2 },
  rulesMax: COMMAND_RULE_LIMITS.rulesMax,
  reasonMaxChars: COMMAND_RULE_LIMITS.reasonMaxChars,
  compile: compileCommandCondition,
};

/** The tenant's rules as they are checked when saved: every problem is BAD_USER_INPUT naming the rule and its field, and nothing is saved. */
export const checkedCommandRules = (input: unknown): CommandRule[] => checkedRuleList(COMMAND_RULES, input);

/** A stored rule, compiled (undefined: it no longer compiles, and then it fails closed). */
export type LoadedRule = LoadedListRule<CommandFacts, CommandRuleOutcome>;

export const loadRules = (rules: CommandRule[]): LoadedRule[] => loadRuleList(COMMAND_RULES, rules);

export type Verdict = RuleListVerdict<CommandRuleOutcome>;

/** The first rule whose condition is true decides (DENY over ASK over ALLOW among the rules that fail); none matching, `fallback` does. */
export const decideCommand = (rules: LoadedRule[], facts: CommandFacts, fallback: CommandRuleOutcome): Verdict =>
  decideByRules(COMMAND_RULES, rules, facts, fallback);
