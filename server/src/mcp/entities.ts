import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Agent } from '../agents/entities.js';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId, sharedPrimaryKey } from '../db/relations.js';

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

export type McpClientRow = InferEntity<typeof McpClient>;

export const MCP_ENTITIES = [McpClient];
