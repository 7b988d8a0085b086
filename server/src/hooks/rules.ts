import {
  ConditionBudget,
  fmt,
  type VariableSpecs,
  type CompiledCondition,
  ConditionError,
  conditionErrorMessage,
  conditionLanguage,
} from '../policies/module.js';
import { badInput } from '../errors.js';
import { codePointLength, COMMAND_LIMITS, COMMAND_RULE_LIMITS, CONDITION_LIMITS, HOOK_LIMITS } from '../limits.js';
import { isPlainObject } from '../lib/untrusted.js';

// A tenant's command rules (docs/COMMAND-APPROVALS.md "Which commands wait"): an ordered list,
// each a CEL condition over the tool call a coding agent's hook reports and an outcome. The
// first rule whose condition is true decides; the conditions are policy conditions in another
// language (policies/condition.ts conditionLanguage): the same syntax limits, cost walk, meter
// and CONDITION_LIMITS, over the variables below. A rule that cannot be evaluated fails closed
// as a policy condition does: the rules after it are still tried and the strictest outcome of
// all it could have been applies (DENY over ASK over ALLOW).

export const COMMAND_RULE_OUTCOMES = ['ASK', 'ALLOW', 'DENY'] as const;
export type CommandRuleOutcome = (typeof COMMAND_RULE_OUTCOMES)[number];

export interface CommandRule {
  /** CEL over the tool call; empty matches every call. */
  condition: string;
  outcome: CommandRuleOutcome;
  /** Shown with the outcome (a DENY's reason is what the agent reads). */
  reason: string | null;
}

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

/** Compiled conditions by source: compiling is a pure function of the text (bounded, oldest dropped first). */
const compiled = new Map<string, CompiledCondition<CommandFacts>>();
const COMPILED_MAX = 1000;

/** Throws ConditionError (the parser's message, or a cost bound). */
export function compileCommandCondition(source: string): CompiledCondition<CommandFacts> {
  const hit = compiled.get(source);
  if (hit !== undefined) return hit;
  const condition = language.compile(source);
  if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
  compiled.set(source, condition);
  return condition;
}

/** The tenant's rules as they are checked when saved: every problem is BAD_USER_INPUT naming the rule and its field, and nothing is saved. */
export function checkedCommandRules(input: unknown): CommandRule[] {
  if (!Array.isArray(input)) throw badInput('rules must be a list', { field: 'rules' });
  if (input.length > COMMAND_RULE_LIMITS.rulesMax) throw badInput(`at most ${COMMAND_RULE_LIMITS.rulesMax} command rules`, { field: 'rules' });
  let work = 0;
  const rules = input.map((raw, i): CommandRule => {
    const at = `rules[${i}]`;
    if (!isPlainObject(raw)) throw badInput(`${at} must be an object {condition, outcome, reason?}`, { field: at });
    const extra = Object.keys(raw).filter((k) => !['condition', 'outcome', 'reason'].includes(k));
    if (extra.length) throw badInput(`${at} has fields a command rule does not have: ${extra.join(', ')}`, { field: at });
    const { condition, outcome, reason } = raw;
    if (typeof condition !== 'string') throw badInput(`${at}.condition must be a string (empty matches every call)`, { field: `${at}.condition` });
    if (!(COMMAND_RULE_OUTCOMES as readonly unknown[]).includes(outcome)) {
      throw badInput(`${at}.outcome must be one of ${COMMAND_RULE_OUTCOMES.join(', ')}`, { field: `${at}.outcome` });
    }
    if (reason != null && typeof reason !== 'string') throw badInput(`${at}.reason must be a string`, { field: `${at}.reason` });
    const text = typeof reason === 'string' && reason.trim() ? reason.trim() : null;
    if (text !== null && codePointLength(text, COMMAND_RULE_LIMITS.reasonMaxChars) > COMMAND_RULE_LIMITS.reasonMaxChars) {
      throw badInput(`${at}.reason is longer than ${COMMAND_RULE_LIMITS.reasonMaxChars} characters`, { field: `${at}.reason` });
    }
    const source = condition.trim();
    try {
      work += compileCommandCondition(source)?.cost.work ?? 0;
    } catch (e) {
      if (e instanceof ConditionError) throw badInput(`${at}.condition: ${e.message}`, { field: `${at}.condition` });
      throw e;
    }
    return { condition: source, outcome: outcome as CommandRuleOutcome, reason: text };
  });
  // All the rules are tried for one tool call under one budget: together, at worst, they must fit it.
  if (work > CONDITION_LIMITS.workMax) {
    throw badInput(
      `the rules together could cost up to ${fmt(work)} units of work on one tool call, and one call's rules may spend ${fmt(CONDITION_LIMITS.workMax)} (docs/POLICIES.md "Cost bounds"): simplify a condition or remove a rule`,
      { field: 'rules' },
    );
  }
  return rules;
}

/** A stored rule, compiled (undefined: it no longer compiles, and then it fails closed). */
export interface LoadedRule {
  rule: CommandRule;
  condition: CompiledCondition<CommandFacts> | undefined;
  compileError: string | null;
}

export function loadRules(rules: CommandRule[]): LoadedRule[] {
  return rules.map((rule) => {
    try {
      return { rule, condition: compileCommandCondition(rule.condition), compileError: null };
    } catch (e) {
      return { rule, condition: undefined, compileError: e instanceof ConditionError ? e.message : String(e) };
    }
  });
}

export interface Verdict {
  outcome: CommandRuleOutcome;
  /** 1-based position of the rule that decided; null when none matched (the fallback decided). */
  rule: number | null;
  reason: string | null;
  /** Rules that could not be evaluated (1-based), with why. */
  failed: { rule: number; error: string }[];
}

const STRICTNESS: Record<CommandRuleOutcome, number> = { ALLOW: 0, ASK: 1, DENY: 2 };

/**
 * The first rule whose condition is true decides; none matching, `fallback` does. A rule that
 * fails (an evaluation error, a spent budget, a stored condition that no longer compiles) does
 * not stop the search, and the strictest outcome of the failed rules and the one that decided
 * applies.
 */
export function decideCommand(rules: LoadedRule[], facts: CommandFacts, fallback: CommandRuleOutcome): Verdict {
  const budget = new ConditionBudget();
  const failed: Verdict['failed'] = [];
  const failedOutcomes: { rule: number; outcome: CommandRuleOutcome; reason: string | null }[] = [];
  let decided: Omit<Verdict, 'failed'> = { outcome: fallback, rule: null, reason: null };
  for (const [i, r] of rules.entries()) {
    let error: string | null = null;
    let matched = false;
    if (r.condition === null) matched = true;
    else if (r.condition === undefined) error = `it does not compile: ${r.compileError ?? 'unknown error'}`;
    else {
      try {
        matched = r.condition(facts, budget);
      } catch (e) {
        error = conditionErrorMessage(e);
      }
    }
    if (error !== null) {
      failed.push({ rule: i + 1, error: error.slice(0, 500) });
      failedOutcomes.push({ rule: i + 1, outcome: r.rule.outcome, reason: r.rule.reason });
    } else if (matched) {
      decided = { outcome: r.rule.outcome, rule: i + 1, reason: r.rule.reason };
      break;
    }
  }
  for (const f of failedOutcomes) {
    if (STRICTNESS[f.outcome] > STRICTNESS[decided.outcome]) decided = { outcome: f.outcome, rule: f.rule, reason: f.reason };
  }
  return { ...decided, failed };
}
