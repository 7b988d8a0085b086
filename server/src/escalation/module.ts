import { defineModule } from '../module-kit.js';
import './graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { ESCALATION_CHANNEL, type EscalationSweeper, startEscalationSweeper } from './sweeper.js';

// Escalation: a request unanswered past its policy's window goes to the next group.

export const escalationModule = defineModule({
  name: 'escalation',
});
