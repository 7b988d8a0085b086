import { defineModule } from '../module-kit.js';
import './graphql.js';
import { ESCALATION_CHANNEL, startEscalationSweeper, type EscalationSweeper } from './sweeper.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.

// Escalation: a request unanswered past its policy's window goes to the next group.

export const escalationModule = defineModule({
  name: 'escalation',
  // With the job worker: the sweeper, told of new due times on its own channel.
  start({ orm }) {
    let sweeper: EscalationSweeper | null = null;
    return {
      channels: { [ESCALATION_CHANNEL]: (at) => sweeper?.noteDue(at) },
      startBackground: () => {
        sweeper = startEscalationSweeper(orm);
      },
      stop: async () => {
        await sweeper?.stop();
      },
    };
  },
});
