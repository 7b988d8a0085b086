import { ApprovalRef } from '../approvals/module.js';
import { builder } from '../graphql/builder.js';
import { MCP_GATEWAY_LIMITS } from '../limits.js';
import { type MCP_CALL_OUTCOMES, MCP_CALL_VARIABLES, type McpCallRule } from './call-rules.js';
import type { McpUpstreamRow } from './entities.js';
import { listServerTools, type McpRecentCall, type McpToolsListing, type McpToolView, recentHeldCalls } from './server-tools.js';
import { listMcpServers, mcpServerById, registerMcpServer, removeMcpServer, setMcpServerRules } from './upstreams.js';

// The MCP gateway in the API, for admins (docs/MCP.md "The gateway"): the MCP servers put behind
// approval and the call rules that pass, hold or refuse each tools/call.

const McpCallOutcomeEnum = builder.enumType('McpCallOutcome', {
  description: 'What a matching call rule does with a tools/call through the gateway.',
  values: {
    PASS: { description: 'Forwarded to the MCP server at once.' },
    HOLD: { description: 'A person approves the exact call (server, tool, arguments) first; then it is forwarded once.' },
    REFUSE: { description: "Answered with a tool error carrying the rule's reason; nothing is forwarded." },
  } satisfies Record<(typeof MCP_CALL_OUTCOMES)[number], unknown>,
});

const McpCallRuleRef = builder.objectRef<McpCallRule>('McpCallRule').implement({
  description: 'One call rule: the first whose condition is true decides; none matching, the call is held.',
  fields: (t) => ({
    condition: t.exposeString('condition', {
      description: `CEL over the call: ${Object.keys(MCP_CALL_VARIABLES)
        .map((k) => `mcp.${k}`)
        .join(', ')}; empty matches every call.`,
    }),
    outcome: t.field({ type: McpCallOutcomeEnum, resolve: (r) => r.outcome }),
    reason: t.exposeString('reason', { nullable: true }),
  }),
});

const McpCallRuleInput = builder.inputType('McpCallRuleInput', {
  fields: (t) => ({
    condition: t.string({ required: true, description: 'CEL over the call (mcp.server, mcp.tool, mcp.arguments, the annotations); empty matches every call.' }),
    outcome: t.field({ type: McpCallOutcomeEnum, required: true }),
    reason: t.string({ description: "Shown with the outcome; a REFUSE's reason is what the client reads." }),
  }),
});

const McpToolRef = builder.objectRef<McpToolView>('McpTool').implement({
  description: 'A tool the MCP server lists now, with the call rule that decides a call of it (text as the server sent it, clipped).',
  fields: (t) => ({
    name: t.exposeString('name'),
    title: t.exposeString('title', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    readOnlyHint: t.exposeBoolean('readOnlyHint', { nullable: true, description: "The server's annotation; a hint, not a guarantee." }),
    destructiveHint: t.exposeBoolean('destructiveHint', { nullable: true, description: "The server's annotation; a hint, not a guarantee." }),
    outcome: t.field({
      type: McpCallOutcomeEnum,
      resolve: (x) => x.outcome,
      description: 'What the call rules do with a call of this tool without arguments.',
    }),
    rule: t.exposeInt('rule', { nullable: true, description: 'The deciding rule (1-based); null: no rule matched, the call is held.' }),
    argumentsMatter: t.exposeBoolean('argumentsMatter', {
      description: 'A rule up to the deciding one reads the arguments, so a call with arguments may be decided otherwise.',
    }),
  }),
});

const McpToolsListingRef = builder.objectRef<McpToolsListing>('McpToolsListing').implement({
  description: "The server's tools as it lists them now, read over a connection of Taskbay's own.",
  fields: (t) => ({
    tools: t.field({ type: [McpToolRef], resolve: (x) => x.tools }),
    error: t.exposeString('error', { nullable: true, description: 'Why the server could not be listed; null when it was.' }),
  }),
});

const McpRecentCallRef = builder.objectRef<McpRecentCall>('McpRecentCall').implement({
  description: 'A tools/call the call rules held: the request a person decided (or is deciding).',
  fields: (t) => ({
    tool: t.exposeString('tool'),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.createdAt }),
    forwardedAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.forwardedAt, description: 'When the approved call was forwarded (once).' }),
    resultIsError: t.exposeBoolean('resultIsError', { nullable: true }),
    approval: t.field({ type: ApprovalRef, nullable: true, resolve: (c, _a, ctx) => ctx.loaders.approval.load(c.approvalId) }),
  }),
});

const McpServerRef = builder.objectRef<McpUpstreamRow>('McpServer').implement({
  description: 'An MCP server behind approval, served to MCP clients at /mcp/servers/<name>.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    transport: t.string({ resolve: (s) => s.transport, description: 'HTTP (Streamable HTTP) or STDIO (a command Taskbay runs).' }),
    url: t.exposeString('url', { nullable: true, description: 'Its Streamable HTTP URL (shown as text).' }),
    command: t.string({ nullable: true, resolve: (s) => s.command ?? null, description: 'The command of a stdio server (admins only, as the whole type).' }),
    args: t.stringList({ nullable: true, resolve: (s) => s.args ?? null }),
    gatewayPath: t.string({ resolve: (s) => `/mcp/servers/${s.name}`, description: 'Where MCP clients reach it through Taskbay.' }),
    rules: t.field({ type: [McpCallRuleRef], resolve: (s) => s.rules }),
    holdSeconds: t.int({
      nullable: true,
      resolve: (s) => s.holdSeconds ?? null,
      description: "How long a held call waits for a decision; null: the server's default expiry.",
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
    removedAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.removedAt ?? null }),
    tools: t.withAuth({ admin: true }).field({
      type: McpToolsListingRef,
      description: 'Its tools as it lists them now (Taskbay connects to it to ask), each with the rule that decides a call of it.',
      resolve: (s, _a, ctx) => listServerTools(ctx.em, ctx.access, ctx.deps, s),
    }),
    recentCalls: t.withAuth({ admin: true }).field({
      type: [McpRecentCallRef],
      args: { first: t.arg.int({ defaultValue: 20, description: `At most ${MCP_GATEWAY_LIMITS.recentCallsMax}.` }) },
      description: 'The calls its rules held, newest first. A passed call is not kept: it never was a request.',
      resolve: (s, a, ctx) => recentHeldCalls(ctx.em, ctx.access, s, Math.max(1, Math.min(a.first ?? 20, MCP_GATEWAY_LIMITS.recentCallsMax))),
    }),
  }),
});

const rulesOf = (rules: readonly { condition: string; outcome: McpCallRule['outcome']; reason?: string | null }[] | null | undefined) =>
  (rules ?? []).map((r) => ({ condition: r.condition, outcome: r.outcome, reason: r.reason ?? null }));

builder.queryFields((t) => ({
  mcpServers: t.withAuth({ admin: true }).field({
    type: [McpServerRef],
    description: 'The MCP servers behind approval (admins).',
    resolve: (_r, _a, ctx) => listMcpServers(ctx.em, ctx.access),
  }),
  mcpServer: t.withAuth({ admin: true }).field({
    type: McpServerRef,
    nullable: true,
    description: 'One MCP server behind approval (admins); null when there is none of this id, or it was removed.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => mcpServerById(ctx.em, ctx.access, String(a.id)),
  }),
}));

builder.mutationFields((t) => ({
  registerMcpServer: t.withAuth({ admin: true }).field({
    type: McpServerRef,
    description: 'Puts an MCP server (Streamable HTTP, through the agent network policy) behind approval at /mcp/servers/<name>.',
    args: {
      name: t.arg.string({ required: true }),
      url: t.arg.string({ description: 'Its Streamable HTTP URL (through the agent network policy); or command.' }),
      command: t.arg.string({ description: 'A command Taskbay runs (stdio, on its host): only with TASKBAY_MCP_STDIO=1.' }),
      args: t.arg.stringList({ description: "The command's arguments." }),
      rules: t.arg({ type: [McpCallRuleInput] }),
      holdSeconds: t.arg.int({ description: "How long a held call waits for a decision (its request's expiry); default: the server's." }),
    },
    resolve: (_r, a, ctx) =>
      registerMcpServer(ctx.em, ctx.access, ctx.deps.config, {
        name: a.name,
        url: a.url ?? null,
        command: a.command ?? null,
        args: a.args ?? null,
        rules: rulesOf(a.rules),
        holdSeconds: a.holdSeconds ?? null,
      }),
  }),
  setMcpServerRules: t.withAuth({ admin: true }).field({
    type: McpServerRef,
    description: "Replaces an MCP server's call rules (checked whole; nothing is saved on a problem).",
    args: { id: t.arg.id({ required: true }), rules: t.arg({ type: [McpCallRuleInput], required: true }) },
    resolve: (_r, a, ctx) => setMcpServerRules(ctx.em, ctx.access, String(a.id), rulesOf(a.rules)),
  }),
  removeMcpServer: t.withAuth({ admin: true }).field({
    type: McpServerRef,
    description:
      'Stops serving an MCP server: the next request of every open session to it is refused, and no new call is forwarded. The requests its calls held stay readable; its name is free again.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => removeMcpServer(ctx.em, ctx.access, String(a.id)),
  }),
}));
