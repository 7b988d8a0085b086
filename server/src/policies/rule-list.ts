import { badInput } from '../errors.js';
import { codePointLength, CONDITION_LIMITS } from '../limits.js';
import { isPlainObject } from '../lib/untrusted.js';
import { ConditionBudget } from './condition-budget.js';
import { fmt } from './condition-cost.js';
import { type CompiledCondition, ConditionError, conditionErrorMessage } from './condition.js';

// An ordered list of rules, each a CEL condition (a policy condition in another language,
// condition.ts conditionLanguage) and an outcome: the first rule whose condition is true
// decides. The coding-agent hooks' command rules and the MCP gateway's call rules are such lists.
// A rule that cannot be evaluated fails closed as a policy condition does: the rules after it
// are still tried and the strictest outcome of all it could have been applies.

export interface ListedRule<O extends string> {
  /** CEL over the facts; empty matches every one. */
  condition: string;
  outcome: O;
  /** Shown with the outcome (a refusal's reason is what the agent reads). */
  reason: string | null;
}

export interface RuleListKind<F, O extends string> {
  /** "command rule": said in messages. */
  readonly noun: string;
  /** What the rules of one list decide over, for the budget message: "one tool call". */
  readonly per: string;
  readonly outcomes: readonly O[];
  /** Higher is stricter. */
  readonly strictness: Readonly<Record<O, number>>;
  readonly rulesMax: number;
  readonly reasonMaxChars: number;
  /** Throws ConditionError (the parser's message, or a cost bound). */
  compile(source: string): CompiledCondition<F>;
}

/** A kind's compile with a cache: compiling is a pure function of the text (bounded, oldest dropped first). */
export function cachedCompile<F>(compile: (source: string) => CompiledCondition<F>, max = 1000): (source: string) => CompiledCondition<F> {
  const compiled = new Map<string, CompiledCondition<F>>();
  return (source) => {
    const hit = compiled.get(source);
    if (hit !== undefined) return hit;
    const condition = compile(source);
    if (compiled.size >= max) compiled.delete(compiled.keys().next().value!);
    compiled.set(source, condition);
    return condition;
  };
}

/** The list as it is checked when saved: every problem is BAD_USER_INPUT naming the rule and its field, and nothing is saved. */
export function checkedRuleList<F, O extends string>(kind: RuleListKind<F, O>, input: unknown): ListedRule<O>[] {
  if (!Array.isArray(input)) throw badInput('rules must be a list', { field: 'rules' });
  if (input.length > kind.rulesMax) throw badInput(`at most ${kind.rulesMax} ${kind.noun}s`, { field: 'rules' });
  let work = 0;
  const rules = input.map((raw, i): ListedRule<O> => {
    const at = `rules[${i}]`;
    if (!isPlainObject(raw)) throw badInput(`${at} must be an object {condition, outcome, reason?}`, { field: at });
    const extra = Object.keys(raw).filter((k) => !['condition', 'outcome', 'reason'].includes(k));
    if (extra.length) throw badInput(`${at} has fields a ${kind.noun} does not have: ${extra.join(', ')}`, { field: at });
    const { condition, outcome, reason } = raw;
    if (typeof condition !== 'string') throw badInput(`${at}.condition must be a string (empty matches every call)`, { field: `${at}.condition` });
    if (!(kind.outcomes as readonly unknown[]).includes(outcome)) {
      throw badInput(`${at}.outcome must be one of ${kind.outcomes.join(', ')}`, { field: `${at}.outcome` });
    }
    if (reason != null && typeof reason !== 'string') throw badInput(`${at}.reason must be a string`, { field: `${at}.reason` });
    const text = typeof reason === 'string' && reason.trim() ? reason.trim() : null;
    if (text !== null && codePointLength(text, kind.reasonMaxChars) > kind.reasonMaxChars) {
      throw badInput(`${at}.reason is longer than ${kind.reasonMaxChars} characters`, { field: `${at}.reason` });
    }
    const source = condition.trim();
    try {
      work += kind.compile(source)?.cost.work ?? 0;
    } catch (e) {
      if (e instanceof ConditionError) throw badInput(`${at}.condition: ${e.message}`, { field: `${at}.condition` });
      throw e;
    }
    return { condition: source, outcome: outcome as O, reason: text };
  });
  // All the rules are tried for one call under one budget: together, at worst, they must fit it.
  if (work > CONDITION_LIMITS.workMax) {
    throw badInput(
      `the rules together could cost up to ${fmt(work)} units of work on ${kind.per}, and ${kind.per}'s rules may spend ${fmt(CONDITION_LIMITS.workMax)} (docs/POLICIES.md "Cost bounds"): simplify a condition or remove a rule`,
      { field: 'rules' },
    );
  }
  return rules;
}

/** A stored rule, compiled (undefined: it no longer compiles, and then it fails closed). */
export interface LoadedListRule<F, O extends string> {
  rule: ListedRule<O>;
  condition: CompiledCondition<F> | undefined;
  compileError: string | null;
}

export function loadRuleList<F, O extends string>(kind: RuleListKind<F, O>, rules: readonly ListedRule<O>[]): LoadedListRule<F, O>[] {
  return rules.map((rule) => {
    try {
      return { rule, condition: kind.compile(rule.condition), compileError: null };
    } catch (e) {
      return { rule, condition: undefined, compileError: e instanceof ConditionError ? e.message : String(e) };
    }
  });
}

export interface RuleListVerdict<O extends string> {
  outcome: O;
  /** 1-based position of the rule that decided; null when none matched (the fallback decided). */
  rule: number | null;
  reason: string | null;
  /** Rules that could not be evaluated (1-based), with why. */
  failed: { rule: number; error: string }[];
}

/**
 * The first rule whose condition is true decides; none matching, `fallback` does. A rule that
 * fails (an evaluation error, a spent budget, a stored condition that no longer compiles) does
 * not stop the search, and the strictest outcome of the failed rules and the one that decided
 * applies.
 */
export function decideByRules<F, O extends string>(
  kind: RuleListKind<F, O>,
  rules: readonly LoadedListRule<F, O>[],
  facts: F,
  fallback: O,
): RuleListVerdict<O> {
  const budget = new ConditionBudget();
  const failed: RuleListVerdict<O>['failed'] = [];
  const failedOutcomes: { rule: number; outcome: O; reason: string | null }[] = [];
  let decided: Omit<RuleListVerdict<O>, 'failed'> = { outcome: fallback, rule: null, reason: null };
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
    if (kind.strictness[f.outcome] > kind.strictness[decided.outcome]) decided = { outcome: f.outcome, rule: f.rule, reason: f.reason };
  }
  return { ...decided, failed };
}
