import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../agents/entities.js';
import { appendEvents, stream } from '../audit/module.js';
import type { Viewer } from '../access.js';
import { sql } from '../db/sql.js';
import { sha256Hex } from '../lib/hashing.js';
import { MCP_LIMITS } from '../limits.js';
import { McpClient } from './entities.js';

// Which agent an MCP host is (entities.ts): made on its first request, one per API token and
// client name, and found again afterwards.

/** The token as mcp_client keeps it: a hash, never the token. */
export const tokenKeyOf = (token: string) => sha256Hex(`mcp-client:${token}`);

/**
 * The client's name as its initialize gave it (clientInfo.name), made storable and short:
 * control characters become spaces, at most MCP_LIMITS.clientNameMaxChars code points, and a
 * client that gave none is "MCP client".
 */
export function clientNameOf(raw: unknown): string {
  const text = typeof raw === 'string' ? raw.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}]/gu, ' ').trim() : '';
  const name = [...text].slice(0, MCP_LIMITS.clientNameMaxChars).join('').trim();
  return name || 'MCP client';
}

/** The agent id of this client of this person's token, made (with its audit event) when it is new. */
export async function mcpClientAgent(em: EntityManager, viewer: Viewer, tokenKey: string, clientName: string): Promise<string> {
  const found = async (tem: EntityManager) =>
    (
      await sql<{ agent_id: string }>(tem, 'select agent_id from mcp_client where tenant_id = ? and token_key = ? and client_name = ?', [
        viewer.tenantId,
        tokenKey,
        clientName,
      ])
    )[0]?.agent_id ?? null;
  const known = await found(em);
  if (known) return known;
  return em.transactional(async (tem) => {
    // Two first requests of one client at once make one agent.
    await sql(tem, 'select pg_advisory_xact_lock(hashtextextended(?, 7))', [`mcp-client:${viewer.tenantId}:${tokenKey}:${clientName}`]);
    const again = await found(tem);
    if (again) return again;
    const agentId = randomUUID();
    const name = `${clientName} (MCP) of ${viewer.email}`;
    tem.create(Agent, { id: agentId, tenantId: viewer.tenantId, kind: 'MCP_CLIENT', cardUrl: null, endpointUrl: null, hookUserId: null, name });
    tem.create(McpClient, { agentId, tenantId: viewer.tenantId, userId: viewer.userId, tokenKey, clientName, createdAt: new Date() });
    await tem.flush();
    await appendEvents(tem, [
      {
        tenantId: viewer.tenantId,
        stream: stream.tenant(viewer.tenantId),
        type: 'agent.mcp_client_created',
        actor: { type: 'user', id: viewer.userId },
        data: { agentId, userId: viewer.userId, clientName, name },
      },
    ]);
    return agentId;
  });
}
