import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import type { PolicyRisk } from './snapshot.js';

// A policy's condition: a CEL expression (https://cel.dev, @marcbachmann/cel-js) over the
// request being opened, checked and compiled when the policy is saved and again when an instance
// loads it. The variables are typed, so `risk > 2` or a misspelt field is refused when saved, not
// when a request opens. docs/POLICIES.md lists them with examples (policies/condition-examples.ts).
//
// Bounded cost, because a condition runs inside the transaction that opens a request and sees
// agent-written text (up to 20,000 characters):
// - a condition is at most CONDITION_MAX_CHARS long, and the parser's structural limits below
//   bound its size, depth, list literals and arguments;
// - `matches` (regular expressions) is refused: a backtracking pattern over agent text could run
//   for seconds (ReDoS); contains / startsWith / endsWith / in cover the cases we know of;
// - a comprehension (all, exists, exists_one, map, filter) may not contain another, so its work
//   is at most one pass over a list literal of at most 32 elements.
// CEL itself has no loops or recursion, so with these bounds an evaluation is a few thousand
// steps over the request's strings.

export const CONDITION_MAX_CHARS = 2000;

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

const LIMITS = { maxAstNodes: 300, maxDepth: 32, maxListElements: 32, maxMapEntries: 32, maxCallArguments: 8 };

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const REFUSED_FUNCTIONS: Record<string, string> = {
  matches: 'regular expressions (matches) are not allowed in policy conditions: use contains, startsWith, endsWith or in',
};

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

const env = new Environment({ limits: LIMITS })
  .registerVariable('agent', { schema: { id: 'string', name: 'string' } })
  .registerVariable('skill', 'string')
  .registerVariable('risk', 'string')
  .registerVariable('riskLevel', 'int')
  .registerVariable('kind', 'string')
  .registerVariable('source', 'string')
  .registerVariable('title', 'string')
  .registerVariable('text', 'string')
  .registerVariable('task', { schema: { id: 'string' } });

/** A checked, compiled condition; null stands for the empty condition (matches everything). */
export type CompiledCondition = ((context: ConditionContext) => boolean) | null;

export class ConditionError extends Error {}

/**
 * Checks and compiles a condition: syntax, types (the result must be a bool) and the cost
 * bounds above. Throws ConditionError with the parser's message.
 */
export function compileCondition(source: string): CompiledCondition {
  if (source.length > CONDITION_MAX_CHARS) throw new ConditionError(`the condition is longer than ${CONDITION_MAX_CHARS} characters`);
  if (!source.trim()) return null;
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = env.parse(source);
  } catch (e) {
    throw new ConditionError((e as Error).message);
  }
  const checked = parsed.check();
  if (!checked.valid) throw new ConditionError(checked.error?.message ?? 'the condition does not type-check');
  if (checked.type !== 'bool') throw new ConditionError(`the condition must be true or false, but it gives a ${checked.type}`);
  walk(parsed.ast, false);
  return (context) => parsed(context) === true;
}

function walk(node: ASTNode, insideComprehension: boolean): void {
  let inside = insideComprehension;
  if (node.op === 'call' || node.op === 'rcall') {
    const name = node.args[0];
    if (REFUSED_FUNCTIONS[name]) throw new ConditionError(REFUSED_FUNCTIONS[name]);
    if (node.op === 'rcall' && COMPREHENSIONS.has(name)) {
      if (inside) throw new ConditionError(`${name}() inside another list macro is not allowed in policy conditions (it bounds the work of one request)`);
      inside = true;
    }
  }
  for (const child of children(node)) walk(child, inside);
}

function children(node: ASTNode): ASTNode[] {
  const out: ASTNode[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v && typeof v === 'object' && 'op' in v && 'args' in v) out.push(v as ASTNode);
  };
  if (node.op !== 'value' && node.op !== 'id') visit(node.args);
  return out;
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
