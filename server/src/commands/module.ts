import { registerDecisionHook } from '../decisions/module.js';
import { commandDecisionHook } from './decision.js';
import { COMMAND_ENTITIES } from './entities.js';
import { reconcileOutcomeJob } from './reconcile.js';
import { commandRoutes } from './routes.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { consumeGrant, reportOutcome } from './grant-use.js';
export { approvalRequestEnvelope, scopeOf, t3BlockedDenial } from './rules.js';
export { type CommandView, effectiveGrantStatus, findCommand, loadView, requestCommandApproval } from './service.js';

// Command approvals (seed 002): a coding agent's shell command put to a person, the single-use grant
// an approval makes, and its outcome.

registerDecisionHook('COMMAND', commandDecisionHook);

export const commandsModule = defineModule({
  name: 'commands',
  entities: COMMAND_ENTITIES,
  routes: commandRoutes,
  jobs: [reconcileOutcomeJob],
});
