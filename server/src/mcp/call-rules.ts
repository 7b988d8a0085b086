import {
  cachedCompile,
  checkedRuleList,
  conditionLanguage,
  decideByRules,
  type ListedRule,
  loadRuleList,
  type RuleListKind,
  type RuleListVerdict,
  type VariableSpecs,
} from '../policies/module.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../lib/hashing.js';
import { APPROVAL_LIMITS, CONDITION_LIMITS, MCP_GATEWAY_LIMITS } from '../limits.js';

// The gateway's call rules (docs/MCP.md "Which calls wait"): an ordered list per MCP server, each
// a CEL condition over one tools/call and an outcome: PASS (forwarded at once), HOLD (a person
// approves the exact call first) or REFUSE (a tool error with the reason; nothing forwarded).
// The first rule whose condition is true decides; none matching, the call is held. A rule that
// cannot be evaluated fails closed (REFUSE over HOLD over PASS), as a command rule does.

export const MCP_CALL_OUTCOMES = ['PASS', 'HOLD', 'REFUSE'] as const;
export type McpCallOutcome = (typeof MCP_CALL_OUTCOMES)[number];
export type McpCallRule = ListedRule<McpCallOutcome>;

/**
 * What a rule sees of one call: `mcp`, a map of strings. The tool's annotations are what the
 * server says of it ("true", "false", or "" when it says nothing); they are hints of that server.
 */
export interface McpCallFacts {
  mcp: {
    server: string;
    tool: string;
    /** The arguments as canonical JSON (RFC 8785): `mcp.arguments.contains('"force":true')`. */
    arguments: string;
    title: string;
    readOnlyHint: string;
    destructiveHint: string;
    idempotentHint: string;
    openWorldHint: string;
  };
}

export const MCP_CALL_VARIABLES: Readonly<Record<keyof McpCallFacts['mcp'], string>> = {
  server: "the MCP server's name in Taskbay (the path segment of /mcp/servers/<name>)",
  tool: "the tool's name",
  arguments: "the call's arguments as canonical JSON (RFC 8785), for contains() and matches()",
  title: 'the tool\'s title as the server gives it ("" when none)',
  readOnlyHint: 'the tool\'s readOnlyHint annotation: "true", "false", or "" when the server says nothing',
  destructiveHint: 'the tool\'s destructiveHint annotation: "true", "false", or ""',
  idempotentHint: 'the tool\'s idempotentHint annotation: "true", "false", or ""',
  openWorldHint: 'the tool\'s openWorldHint annotation: "true", "false", or ""',
};

const FIELD = CONDITION_LIMITS.fieldMaxChars;
const SPECS: VariableSpecs = {
  mcp: {
    type: 'map',
    fields: {
      server: FIELD,
      tool: FIELD,
      arguments: APPROVAL_LIMITS.dataMaxBytes,
      title: FIELD,
      readOnlyHint: 5,
      destructiveHint: 5,
      idempotentHint: 5,
      openWorldHint: 5,
    },
  },
};

const language = conditionLanguage<McpCallFacts>(SPECS);

const KIND: RuleListKind<McpCallFacts, McpCallOutcome> = {
  noun: 'call rule',
  per: 'one tool call',
  outcomes: MCP_CALL_OUTCOMES,
  strictness: { PASS: 0, HOLD: 1, REFUSE: 2 },
  rulesMax: MCP_GATEWAY_LIMITS.callRulesMax,
  reasonMaxChars: MCP_GATEWAY_LIMITS.callRuleReasonMaxChars,
  compile: cachedCompile((source) => language.compile(source)),
};

export const checkedCallRules = (input: unknown): McpCallRule[] => checkedRuleList(KIND, input);

const hint = (v: unknown) => (v === true ? 'true' : v === false ? 'false' : '');
const clip = (s: unknown, max: number) => (typeof s === 'string' ? [...s].slice(0, max).join('') : '');

export function callFacts(server: string, tool: Tool | null, name: string, args: Record<string, unknown>): McpCallFacts {
  const a = tool?.annotations;
  return {
    mcp: {
      server,
      tool: clip(name, FIELD),
      arguments: canonicalJson(args),
      title: clip(tool?.title ?? a?.title, FIELD),
      readOnlyHint: hint(a?.readOnlyHint),
      destructiveHint: hint(a?.destructiveHint),
      idempotentHint: hint(a?.idempotentHint),
      openWorldHint: hint(a?.openWorldHint),
    },
  };
}

/** The outcome for one call: the first rule that matches, else HOLD. */
export function decideCall(rules: readonly McpCallRule[], facts: McpCallFacts): RuleListVerdict<McpCallOutcome> {
  return decideByRules(KIND, loadRuleList(KIND, rules), facts, 'HOLD');
}
