import { HOOK_ENTITIES } from './entities.js';
import { hookRoutes } from './routes.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// Coding-agent hooks: Claude Code's and Codex's own hook contracts, answered from command rules and
// command approvals.

export const hooksModule = defineModule({
  name: 'hooks',
  entities: HOOK_ENTITIES,
  routes: hookRoutes,
});
