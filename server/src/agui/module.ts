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
