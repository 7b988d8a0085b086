import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Agent } from '../agents/entities.js';
import { ApprovalRequest } from '../approvals/entities.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId, sharedPrimaryKey } from '../db/relations.js';
import type { McpCallRule } from './call-rules.js';

// Taskbay's MCP server (docs/MCP.md): which agent an MCP host is. A host asking through /mcp is
// an agent of kind MCP_CLIENT, one per API token and client name (the name its initialize gives),
// so VIEW and OPERATE grants on that agent decide who sees and who decides its requests.

/** The agent of one MCP client: the person whose token it uses, the token (by a hash of it), its name. */
export const McpClient = defineEntity({
  name: 'McpClient',
  tableName: 'mcp_client',
  properties: {
    agentId: sharedPrimaryKey(Agent, 'agent_id'),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    userId: manyToOneId(User, 'user_id'),
    /** SHA-256 hex of "mcp-client:" and the API token: the token without keeping it. */
    tokenKey: p.text(),
    clientName: p.text(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  uniques: [{ name: 'mcp_client_one_per_token_and_name', properties: ['tenantId', 'tokenKey', 'clientName'] }],
});

/** How Taskbay reaches an upstream MCP server: Streamable HTTP, or a command it runs (stdio, only where a setting allows it). */
export const MCP_UPSTREAM_TRANSPORTS = ['HTTP', 'STDIO'] as const;
export type McpUpstreamTransport = (typeof MCP_UPSTREAM_TRANSPORTS)[number];

/**
 * An MCP server an admin put behind approval (the gateway, docs/MCP.md): served to MCP clients
 * at /mcp/servers/<name>; its call rules (CEL over the call) pass, hold or refuse each tools/call.
 */
export const McpUpstream = defineEntity({
  name: 'McpUpstream',
  tableName: 'mcp_upstream',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    /** Its path segment: lower-case letters, digits and dashes. */
    name: p.text(),
    transport: p.enum([...MCP_UPSTREAM_TRANSPORTS]),
    url: p.text().nullable(),
    command: p.text().nullable(),
    args: p.json<string[]>().nullable(),
    rules: p.json<McpCallRule[]>(),
    /** How long a held call waits for a decision (its request's expiry); null: the server's default. */
    holdSeconds: p.integer().nullable(),
    createdById: manyToOneId(User, 'created_by_id'),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    /** Set by removeMcpServer: no longer served; kept so the requests its calls held still name it. */
    removedAt: p.datetime().nullable(),
  },
  uniques: [
    {
      name: 'mcp_upstream_tenant_name',
      expression: 'create unique index mcp_upstream_tenant_name on mcp_upstream (tenant_id, name) where removed_at is null',
    },
  ],
  checks: [
    { property: 'rules', expression: `jsonb_typeof(rules) = 'array'` },
    {
      name: 'mcp_upstream_transport_shape',
      expression: `(transport = 'HTTP' and url is not null and command is null) or (transport = 'STDIO' and command is not null and url is null)`,
    },
  ],
});

/**
 * A held tools/call (a request whose action is the call): forwarded at most once, after the
 * approval, by the gateway that holds the client's call; the result's digest is kept.
 */
export const McpHeldCall = defineEntity({
  name: 'McpHeldCall',
  tableName: 'mcp_held_call',
  properties: {
    approvalId: sharedPrimaryKey(ApprovalRequest, 'approval_id'),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    upstreamId: manyToOneId(McpUpstream, 'upstream_id'),
    tool: p.text(),
    /** Set once, in the transaction that claims the forward: a second claim finds it set. */
    forwardedAt: p.datetime().nullable(),
    /** SHA-256 of the canonical JSON of the upstream's result; null until it answered. */
    resultDigest: p.text().nullable(),
    resultIsError: p.boolean().nullable(),
    /** Set while a client's call waits on this request, every MCP_LIMITS.progressSeconds: the console's "the caller is waiting". */
    waitingSeenAt: p.datetime().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  indexes: [
    { name: 'mcp_held_call_upstream_recent', expression: 'create index mcp_held_call_upstream_recent on mcp_held_call (upstream_id, created_at desc)' },
  ],
});

export type McpClientRow = InferEntity<typeof McpClient>;
export type McpUpstreamRow = InferEntity<typeof McpUpstream>;
export type McpHeldCallRow = InferEntity<typeof McpHeldCall>;

export const MCP_ENTITIES = [McpClient, McpUpstream, McpHeldCall];
