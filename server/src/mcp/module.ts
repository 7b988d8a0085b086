import { registerAgentKind } from '../agents/module.js';
import { MCP_ENTITIES } from './entities.js';
import { mcpRoutes } from './routes.js';
import { closeSessionsOf, sessionsOf } from './sessions.js';
import { MCP_UPSTREAMS_CHANNEL, startRulesCache } from './rules-cache.js';
import { startLocalWakes } from './local-wake.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './approval-graphql.js';

// The Model Context Protocol (docs/MCP.md): Taskbay as an MCP server at /mcp, where any MCP host
// asks a person (request_approval) and learns the answer (get_approval), as an agent of its own.

// An MCP host is an agent record of its own: one per API token and client name (client-agent.ts).
declare module '../agents/module.js' {
  interface AgentKinds {
    MCP_CLIENT: true;
  }
}
registerAgentKind({
  kind: 'MCP_CLIENT',
  noun: 'an MCP client',
  description:
    "an MCP host that asks through Taskbay's MCP server (/mcp) with a person's API token, one per token and client name; its requests belong to it. It has no card and takes no tasks.",
  shape: 'card_url is null and hook_user_id is null and endpoint_url is null',
  noSkills: 'an MCP client has no skills: grant on the whole agent',
});

export const mcpModule = defineModule({
  name: 'mcp',
  entities: MCP_ENTITIES,
  routes: mcpRoutes,
  start: ({ orm, barrier }) => {
    const rules = startRulesCache(orm, barrier);
    const wakes = startLocalWakes(orm);
    return {
      channels: { [MCP_UPSTREAMS_CHANNEL]: (upstreamId) => rules.invalidate(upstreamId) },
      // A decision committed here wakes the held calls that wait on it here (local-wake.ts).
      appendedEvents: async (tem, rows) => wakes.appended(tem, rows),
      // A removed server's sessions end on every instance, which all hear the event.
      onEvent: (event) => {
        if (event.type !== 'mcp.server_removed') return;
        const name = (event.data as { name?: unknown }).name;
        if (typeof name === 'string') void sessionsOf(orm).closeOn(event.tenantId, `/mcp/servers/${name}`);
      },
      stop: () => closeSessionsOf(orm),
    };
  },
});
