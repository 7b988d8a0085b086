import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireAdmin, type Access } from '../access.js';
import { appendEvents, stream } from '../audit/module.js';
import { violatedConstraint } from '../db/constraint.js';
import { unstorableReason } from '../db/storable.js';
import type { Config } from '../config.js';
import { badInput, notFound } from '../errors.js';
import { APPROVAL_LIMITS, MCP_GATEWAY_LIMITS, MCP_LIMITS } from '../limits.js';
import { isUuid } from '../lib/untrusted.js';
import { outboundUrl } from '../net/outbound-url.js';
import { checkedCallRules } from './call-rules.js';
import { McpUpstream, type McpUpstreamRow } from './entities.js';
import { notifyRulesChanged } from './rules-cache.js';

// The MCP servers an admin puts behind approval (GraphQL registerMcpServer, mcpServers,
// setMcpServerRules, removeMcpServer). A server is reached over Streamable HTTP at a URL the agent
// network policy allows (judged again on every connection, as for agents).

const NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export function checkedServerName(raw: string): string {
  const name = raw.trim();
  if (!NAME.test(name) || name.length > MCP_LIMITS.serverNameMaxChars) {
    throw badInput(`name must be 1..${MCP_LIMITS.serverNameMaxChars} of a-z, 0-9 and "-" (not first or last): it is the path /mcp/servers/<name>`, {
      field: 'name',
    });
  }
  return name;
}

export interface RegisterMcpServerInput {
  name: string;
  /** Streamable HTTP; or: */
  url?: string | null;
  /** A command Taskbay runs (stdio), with its arguments: only with TASKBAY_MCP_STDIO=1. */
  command?: string | null;
  args?: readonly string[] | null;
  rules?: unknown;
  holdSeconds?: number | null;
}

/** Where the server is: a URL, or a command and its arguments (refused unless the setting allows it). */
function checkedWhere(input: RegisterMcpServerInput, config: Pick<Config, 'mcpStdio'>) {
  const { urlMaxChars, commandMaxChars, argsMax } = MCP_GATEWAY_LIMITS;
  if ((input.url == null) === (input.command == null)) throw badInput('give the server a url (Streamable HTTP) or a command (stdio), one of them');
  if (input.url != null) {
    if (input.url.length > urlMaxChars) throw badInput(`url is longer than ${urlMaxChars} characters`, { field: 'url' });
    return { transport: 'HTTP' as const, url: outboundUrl(input.url, 'url').toString(), command: null, args: null };
  }
  if (!config.mcpStdio) {
    throw badInput('MCP servers run as a command (stdio) are off on this Taskbay: TASKBAY_MCP_STDIO=1 turns them on (they run on its host)', {
      field: 'command',
    });
  }
  const command = input.command!.trim();
  const args = [...(input.args ?? [])];
  if (!command || command.length > commandMaxChars) throw badInput(`command must be 1..${commandMaxChars} characters`, { field: 'command' });
  if (args.length > argsMax || args.some((a) => a.length > commandMaxChars)) {
    throw badInput(`args are at most ${argsMax} of at most ${commandMaxChars} characters each`, { field: 'args' });
  }
  return { transport: 'STDIO' as const, url: null, command, args };
}

export async function registerMcpServer(
  em: EntityManager,
  access: Access,
  config: Pick<Config, 'mcpStdio'>,
  input: RegisterMcpServerInput,
): Promise<McpUpstreamRow> {
  requireAdmin(access, 'registers MCP servers');
  const name = checkedServerName(input.name);
  const where = checkedWhere(input, config);
  const rules = checkedCallRules(input.rules ?? []);
  const hold = input.holdSeconds ?? null;
  const { expiresMinSeconds: min, expiresMaxSeconds: max } = APPROVAL_LIMITS;
  if (hold !== null && (!Number.isInteger(hold) || hold < min || hold > max))
    throw badInput(`holdSeconds must be a whole number ${min}..${max}`, { field: 'holdSeconds' });
  const unstorable = unstorableReason(rules);
  if (unstorable) throw badInput(`the rules cannot be stored: ${unstorable}`, { field: 'rules' });
  const { tenantId, userId } = access.viewer;
  try {
    return await em.transactional(async (tem) => {
      if ((await tem.count(McpUpstream, { tenantId, removedAt: null })) >= MCP_GATEWAY_LIMITS.serversPerTenantMax) {
        throw badInput(`a tenant has at most ${MCP_GATEWAY_LIMITS.serversPerTenantMax} MCP servers`);
      }
      const row = tem.create(McpUpstream, {
        id: randomUUID(),
        tenantId,
        name,
        ...where,
        rules,
        holdSeconds: hold,
        createdById: userId,
        createdAt: new Date(),
      });
      await tem.flush();
      await appendEvents(tem, [
        {
          tenantId,
          stream: stream.tenant(tenantId),
          type: 'mcp.server_registered',
          actor: { type: 'user', id: userId },
          data: { serverId: row.id, name, transport: where.transport, url: where.url, command: where.command, rules },
        },
      ]);
      return row;
    });
  } catch (e) {
    if (violatedConstraint(e) === 'mcp_upstream_tenant_name') throw badInput(`an MCP server named ${name} is already registered`, { field: 'name' });
    throw e;
  }
}

async function mine(em: EntityManager, access: Access, id: string): Promise<McpUpstreamRow> {
  const row = await em.findOne(McpUpstream, { id, tenantId: access.viewer.tenantId, removedAt: null }, { refresh: true });
  if (!row) throw notFound('MCP server');
  return row;
}

/**
 * One admin change to a server, in one transaction: the row changed, every instance's gateway told
 * to drop the rules it remembers of this server when this commits, and the change's audit event.
 */
async function changeServer(
  em: EntityManager,
  access: Access,
  id: string,
  change: (row: McpUpstreamRow, by: Pick<ServerEvent, 'tenantId' | 'stream' | 'actor'>) => ServerEvent,
): Promise<McpUpstreamRow> {
  return em.transactional(async (tem) => {
    const row = await mine(tem, access, id);
    const { tenantId, userId } = access.viewer;
    const event = change(row, { tenantId, stream: stream.tenant(tenantId), actor: { type: 'user', id: userId } });
    await tem.flush();
    await notifyRulesChanged(tem, row.id);
    await appendEvents(tem, [event]);
    return row;
  });
}
type ServerEvent = Parameters<typeof appendEvents>[1][number];

export async function setMcpServerRules(em: EntityManager, access: Access, id: string, input: unknown): Promise<McpUpstreamRow> {
  requireAdmin(access, 'sets the call rules of MCP servers');
  const rules = checkedCallRules(input);
  const unstorable = unstorableReason(rules);
  if (unstorable) throw badInput(`the rules cannot be stored: ${unstorable}`, { field: 'rules' });
  return changeServer(em, access, id, (row, by) => {
    row.rules = rules;
    return { ...by, type: 'mcp.server_rules_set', data: { serverId: row.id, name: row.name, rules } };
  });
}

/**
 * No longer served: the sessions open to it end on every instance once they hear the event, and
 * a call meanwhile is not forwarded. The row stays (removed_at) so the requests its calls held
 * still name it; its name is free for a new server.
 */
export function removeMcpServer(em: EntityManager, access: Access, id: string): Promise<McpUpstreamRow> {
  requireAdmin(access, 'removes MCP servers');
  return changeServer(em, access, id, (row, by) => {
    row.removedAt = new Date();
    return { ...by, type: 'mcp.server_removed', data: { serverId: row.id, name: row.name } };
  });
}

export async function listMcpServers(em: EntityManager, access: Access): Promise<McpUpstreamRow[]> {
  requireAdmin(access, 'manages MCP servers');
  return em.find(McpUpstream, { tenantId: access.viewer.tenantId, removedAt: null }, { orderBy: { name: 'asc' }, refresh: true });
}

export async function mcpServerById(em: EntityManager, access: Access, id: string): Promise<McpUpstreamRow | null> {
  requireAdmin(access, 'manages MCP servers');
  if (!isUuid(id)) throw badInput('not a valid id', { field: 'id' });
  return em.findOne(McpUpstream, { id, tenantId: access.viewer.tenantId, removedAt: null }, { refresh: true });
}

/** The tenant's server of this name, for the gateway (any person of the tenant may call through it). */
export function upstreamNamed(em: EntityManager, tenantId: string, name: string): Promise<McpUpstreamRow | null> {
  return em.findOne(McpUpstream, { tenantId, name, removedAt: null }, { refresh: true });
}
