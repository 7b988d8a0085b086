import { registerObservationHook } from '../tasks/module.js';
import { ExecutionEvidence } from './entities.js';
import { recordExecutionEvidence } from './record.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// Execution evidence: what an agent reports executing for a decision, checked against what was approved.

registerObservationHook('evidence', { messagesStored: recordExecutionEvidence });

export const evidenceModule = defineModule({
  name: 'evidence',
  entities: [ExecutionEvidence],
});
