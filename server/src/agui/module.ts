import { registerAgentKind } from '../agents/module.js';
import { registerExpiryHook } from '../approvals/module.js';
import { registerDecisionHook } from '../decisions/module.js';
import { registerDeliveryCarrier } from '../delivery/module.js';
import { registerTaskTransport } from '../tasks/module.js';
import { aguiDecisionHook, answerExpiredInterrupts } from './decision.js';
import { AgUiInterrupt, AgUiRun } from './entities.js';
import { aguiCarrier, aguiResumeJob } from './resume.js';
import { aguiTransport } from './tasks.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import { configureAgUiExpiry } from './decision.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { registerAgUiAgent } from './agent-registration.js';
export { AgUiError } from './protocol/client.js';

// AG-UI agents (docs/AG-UI.md): registered by endpoint, their runs and interrupts, the requests an
// interrupt opens, and the one resume that answers them all. It adds itself to the earlier steps:
// a task transport, a decision hook, an expiry hook and a delivery carrier.

declare module '../agents/module.js' {
  interface AgentKinds {
    AG_UI: true;
  }
}
registerAgentKind({
  kind: 'AG_UI',
  noun: 'an AG-UI agent',
  description: 'an AG-UI agent registered by its endpoint (registerAgUiAgent; no card).',
  shape: 'endpoint_url is not null and card_url is null and hook_user_id is null',
  noSkills: null,
});
registerTaskTransport('AG_UI', aguiTransport);
registerDecisionHook('AG_UI', aguiDecisionHook);
registerExpiryHook('agui', answerExpiredInterrupts);
registerDeliveryCarrier('agui', aguiCarrier);

export const aguiModule = defineModule({
  name: 'agui',
  entities: [AgUiRun, AgUiInterrupt],
  jobs: [aguiResumeJob],
  start({ config }) {
    return { startBackground: () => configureAgUiExpiry(config) };
  },
});
