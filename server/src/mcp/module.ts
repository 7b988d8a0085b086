import { MCP_ENTITIES } from './entities.js';
import { mcpRoutes } from './routes.js';
import { closeSessionsOf } from './sessions.js';
import { MCP_UPSTREAMS_CHANNEL, startRulesCache } from './rules-cache.js';
import { startLocalWakes } from './local-wake.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './approval-graphql.js';

// The Model Context Protocol (docs/MCP.md): Taskbay as an MCP server at /mcp, where any MCP host
// asks a person (request_approval) and learns the answer (get_approval), as an agent of its own.

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
      stop: () => closeSessionsOf(orm),
    };
  },
});
