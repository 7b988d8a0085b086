import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import { CONDITION_LIMITS } from '../limits.js';
import { ConditionBudget, ConditionBudgetExceeded } from './condition-budget.js';
import { conditionCost, ConditionCostError, fmt, variableBounds, type ConditionCost, type VariableSpec, type VariableSpecs } from './condition-cost.js';
import type { PolicyRisk } from './snapshot.js';

// A policy's condition: a CEL expression (https://cel.dev, @marcbachmann/cel-js) over the
// request being opened, checked and compiled when the policy is saved and again when an instance
// loads it. The variables are typed, so `risk > 2` or a misspelt field is refused when saved, not
// when a request opens. docs/POLICIES.md lists them with examples (policies/condition-examples.ts).
//
// Bounded in time and space, because a condition one tenant's admin writes runs over
// agent-written text in the transaction that opens a request, on the event loop every tenant
// shares (CONDITION_LIMITS, docs/POLICIES.md "Cost bounds"):
// - its length and the parser's structural limits bound its syntax;
// - its worst case over the largest inputs is found from the syntax (condition-cost.ts, which
//   also lists what a condition may call) and must fit the budget of one request;
// - every evaluation runs metered (condition-budget.ts) and stops when the request's budget is
//   spent or a value grows too large, so a condition stored behind the API's back stops too.
//   The condition is evaluated wrapped in a macro (METERED) whose evaluation installs the meter.

/** What a policy's condition can see of the request being opened. */
export interface RequestFacts {
  tenantId: string;
  agentId: string | null;
  skillId: string | null;
  taskId: string | null;
  source: 'AGENT' | 'USER' | 'COMMAND';
  risk: PolicyRisk;
  title: string;
  summary: string | null;
  /** The request's action as stored (send_message / send_data, or a command's action). */
  action: unknown;
}

/** The variables a condition sees, with their CEL types (docs/POLICIES.md "Variables"). */
export const CONDITION_VARIABLES = {
  agent: 'the agent the request is about: agent.id and agent.name ("" for a request without an agent)',
  skill: 'the skill id of the request ("" when none)',
  risk: 'the risk as the request states it: "low", "medium", "high" or "critical"',
  riskLevel: 'the risk as a number to compare: 1 low, 2 medium, 3 high, 4 critical',
  kind: 'what the action does: "send_message", "send_data" or "command" (a coding-agent hook)',
  source: 'who opened the request: "AGENT", "USER" (createApproval) or "COMMAND" (a coding-agent hook)',
  title: 'the request title',
  text: "the request summary and the action's text, one per line (a message's text; a form's values as JSON; a command's commands)",
  task: 'task.id: the local task id of the request ("" without a task)',
} as const;

/** The macro every evaluation runs in; its name cannot be called by a condition (condition-cost.ts knows no such function). */
const METERED = 'taskbay_metered';
const WRAP_START = `${METERED}(\n`;
const WRAP_END = '\n)';

/** The meter of the evaluation running now (evaluations are synchronous: no async function is registered). */
let meterOfRun: ConditionBudget | null = null;

interface MeteredMacro {
  inner: ASTNode;
}

/** A checked, compiled condition: true when it matches. */
export interface Condition<C = ConditionContext> {
  /** Evaluates under `budget` (one per request; a fresh one when not given). Throws ConditionBudgetExceeded or the evaluator's error. */
  (context: C, budget?: ConditionBudget): boolean;
  /** Its worst case over the largest inputs (condition-cost.ts). */
  readonly cost: ConditionCost;
}

/** null stands for the empty condition (matches everything). */
export type CompiledCondition<C = ConditionContext> = Condition<C> | null;

export class ConditionError extends Error {}

/**
 * One set of variables a condition is written over, with everything that bounds it: the policy
 * conditions of this module, and the command rules of coding-agent hooks (hooks/rules.ts). Every
 * language shares the syntax limits, the cost walk (condition-cost.ts), the meter
 * (condition-budget.ts) and CONDITION_LIMITS; only the variables and their largest sizes differ.
 */
export interface ConditionLanguage<C> {
  /**
   * Checks and compiles a condition: its length and syntax, its types (the result must be a
   * bool), what it calls and its worst-case cost (condition-cost.ts). Throws ConditionError naming
   * the problem.
   */
  compile(source: string): CompiledCondition<C>;
  /**
   * The evaluation of a condition already checked by compile, without its static bound: what the
   * meter alone stops. compile is the way in; this is its second half.
   */
  metered(source: string, ast?: ASTNode, cost?: ConditionCost): Condition<C>;
}

export function conditionLanguage<C extends object>(specs: VariableSpecs): ConditionLanguage<C> {
  let base = new Environment({
    limits: {
      maxAstNodes: CONDITION_LIMITS.astNodesMax,
      maxDepth: CONDITION_LIMITS.depthMax,
      maxListElements: CONDITION_LIMITS.listElementsMax,
      maxMapEntries: CONDITION_LIMITS.mapEntriesMax,
      maxCallArguments: CONDITION_LIMITS.callArgumentsMax,
    },
  });
  for (const [name, spec] of Object.entries(specs)) {
    base =
      spec.type === 'map'
        ? base.registerVariable(name, { schema: Object.fromEntries(Object.keys(spec.fields).map((f) => [f, 'string'])) })
        : base.registerVariable(name, spec.type);
  }
  const env = base.registerFunction(`${METERED}(ast): bool`, ({ args }: { args: ASTNode[] }) => ({
    inner: args[0]!,
    typeCheck: (checker: { check(node: ASTNode, ctx: unknown): unknown }, macro: MeteredMacro, ctx: unknown) => checker.check(macro.inner, ctx),
    evaluate: (evaluator: { run(node: ASTNode, ctx: unknown): unknown }, macro: MeteredMacro, ctx: unknown) =>
      meterOfRun!.meter(evaluator as never, () => evaluator.run(macro.inner, ctx)),
  }));
  /** The wrapped condition: one more syntax node and one more level than the condition itself. */
  const meteredEnv = env.clone({ limits: { maxAstNodes: CONDITION_LIMITS.astNodesMax + 1, maxDepth: CONDITION_LIMITS.depthMax + 1 } });
  const bounds = variableBounds(specs);

  const metered = (source: string, ast: ASTNode = checked(env, source), cost: ConditionCost = { work: Infinity, largestValue: Infinity }): Condition<C> => {
    const parsed = meteredEnv.parse(`${WRAP_START}${source}${WRAP_END}`);
    const typed = parsed.check();
    if (!typed.valid) throw new ConditionError(typed.error?.message ?? 'the condition does not type-check');
    const inputs = variablesRead(ast, specs);
    const condition = (context: C, budget = new ConditionBudget()) => {
      checkInputs(context as Record<string, unknown>, inputs, specs);
      const outer = meterOfRun;
      meterOfRun = budget;
      try {
        return parsed(context as Record<string, unknown>) === true;
      } finally {
        meterOfRun = outer;
      }
    };
    return Object.assign(condition, { cost });
  };

  const compile = (source: string): CompiledCondition<C> => {
    if (source.length > CONDITION_LIMITS.sourceMaxChars) throw new ConditionError(`the condition is longer than ${CONDITION_LIMITS.sourceMaxChars} characters`);
    if (!source.trim()) return null;
    const ast = checked(env, source);
    let cost: ConditionCost;
    try {
      cost = conditionCost(ast, source, bounds);
    } catch (e) {
      if (e instanceof ConditionCostError) throw new ConditionError(e.message);
      throw e;
    }
    if (cost.work > CONDITION_LIMITS.workMax) {
      throw new ConditionError(
        `on a large request it could cost up to ${fmt(cost.work)} units of work, and a request's conditions may spend ${fmt(CONDITION_LIMITS.workMax)} (docs/POLICIES.md "Cost bounds"): ` +
          'iterate over list literals rather than over split text, and compare with contains, startsWith or ==',
      );
    }
    return metered(source, ast, cost);
  };

  return { compile, metered };
}

/** The variables of a policy condition and the largest value of each that a condition is evaluated on. */
const POLICY_VARIABLES: VariableSpecs = {
  agent: { type: 'map', fields: { id: CONDITION_LIMITS.fieldMaxChars, name: CONDITION_LIMITS.fieldMaxChars } },
  skill: { type: 'string', maxChars: CONDITION_LIMITS.fieldMaxChars },
  risk: { type: 'string', maxChars: CONDITION_LIMITS.fieldMaxChars },
  riskLevel: { type: 'int' },
  kind: { type: 'string', maxChars: CONDITION_LIMITS.fieldMaxChars },
  source: { type: 'string', maxChars: CONDITION_LIMITS.fieldMaxChars },
  title: { type: 'string', maxChars: CONDITION_LIMITS.fieldMaxChars },
  text: { type: 'string', maxChars: CONDITION_LIMITS.textMaxChars },
  task: { type: 'map', fields: { id: CONDITION_LIMITS.fieldMaxChars } },
} satisfies Record<keyof typeof CONDITION_VARIABLES, VariableSpec>;

const policyConditions = conditionLanguage<ConditionContext>(POLICY_VARIABLES);

/**
 * Checks and compiles a policy condition: its length and syntax, its types (the result must be a
 * bool), what it calls and its worst-case cost (condition-cost.ts). Throws ConditionError naming
 * the problem.
 */
export function compileCondition(source: string): CompiledCondition {
  return policyConditions.compile(source);
}

/**
 * The evaluation of a policy condition already checked by compileCondition, without its static
 * bound: what the meter alone stops. compileCondition is the way in; this is its second half.
 */
export function meteredCondition(source: string, ast?: ASTNode, cost?: ConditionCost): Condition {
  return policyConditions.metered(source, ast, cost);
}

function checked(environment: Environment, source: string): ASTNode {
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = environment.parse(source);
  } catch (e) {
    throw new ConditionError((e as Error).message);
  }
  const typed = parsed.check();
  if (!typed.valid) throw new ConditionError(typed.error?.message ?? 'the condition does not type-check');
  if (typed.type !== 'bool') throw new ConditionError(`the condition must be true or false, but it gives a ${typed.type}`);
  return parsed.ast;
}

/** The variables a condition names (a name a macro or cel.bind binds may be counted too). */
function variablesRead(ast: ASTNode, specs: VariableSpecs): Set<string> {
  const found = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v && typeof v === 'object' && 'op' in v && 'args' in v) {
      const node = v as ASTNode;
      if (node.op === 'id') {
        if (Object.hasOwn(specs, node.args)) found.add(node.args as string);
      } else if (node.op !== 'value') visit(node.args);
    }
  };
  visit(ast);
  return found;
}

/** The static bound assumes every variable at most as long as its spec says: a longer one is not evaluated on (it fails closed). */
function checkInputs(context: Record<string, unknown>, inputs: ReadonlySet<string>, specs: VariableSpecs) {
  for (const name of inputs) {
    const spec = specs[name]!;
    const value = context[name];
    if (spec.type === 'string') {
      if (typeof value === 'string' && value.length > spec.maxChars) throw tooLong(name, spec.maxChars);
    } else if (spec.type === 'map' && value && typeof value === 'object') {
      for (const [field, max] of Object.entries(spec.fields)) {
        const s = (value as Record<string, unknown>)[field];
        if (typeof s === 'string' && s.length > max) throw tooLong(name, max);
      }
    }
  }
}

const tooLong = (name: string, max: number) =>
  new ConditionBudgetExceeded(`the request's ${name} is longer than the ${fmt(max)} characters a condition is evaluated on`);

/** An evaluation error as a request records it: the evaluator's message and where in the condition. */
export function conditionErrorMessage(e: unknown): string {
  if (e instanceof ConditionBudgetExceeded) return e.message;
  const err = e as { summary?: unknown; range?: { start: number }; message?: unknown };
  if (typeof err?.summary === 'string') {
    const at = typeof err.range?.start === 'number' ? err.range.start - WRAP_START.length : -1;
    return at >= 0 ? `${err.summary} (at character ${at + 1})` : err.summary;
  }
  return String(err?.message ?? e);
}

export interface ConditionContext {
  agent: { id: string; name: string };
  skill: string;
  risk: string;
  riskLevel: bigint;
  kind: string;
  source: string;
  title: string;
  text: string;
  task: { id: string };
}

const RISK_LEVEL = { LOW: 1n, MEDIUM: 2n, HIGH: 3n, CRITICAL: 4n } as const;

/** What a condition sees of a request (CONDITION_VARIABLES). */
export function conditionContext(facts: RequestFacts, agentName: string): ConditionContext {
  const action = (facts.action ?? {}) as Record<string, unknown>;
  let kind = typeof action.kind === 'string' ? action.kind : '';
  let actionText = '';
  if (facts.source === 'COMMAND' || kind === 'run_command') {
    kind = 'command';
    const commands = action.commands;
    actionText = Array.isArray(commands) ? commands.map((c) => (typeof c === 'string' ? c : JSON.stringify(c))).join('\n') : '';
  } else if (kind === 'send_message') {
    actionText = typeof action.text === 'string' ? action.text : '';
  } else if (kind === 'send_data') {
    actionText = JSON.stringify(action.values ?? {});
  }
  return {
    agent: { id: facts.agentId ?? '', name: agentName },
    skill: facts.skillId ?? '',
    risk: facts.risk.toLowerCase(),
    riskLevel: RISK_LEVEL[facts.risk],
    kind,
    source: facts.source,
    title: facts.title,
    text: [facts.summary, actionText].filter((s) => s).join('\n'),
    task: { id: facts.taskId ?? '' },
  };
}

/** Whether the condition reads the agent's name (the only variable not already in the request's facts). */
export function readsAgent(source: string): boolean {
  return /\bagent\b/.test(source);
}
