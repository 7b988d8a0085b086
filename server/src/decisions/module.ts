import type { EntityManager } from '@mikro-orm/postgresql';
import { manyBy } from '../graphql/loaders.js';
import { Decision, type DecisionRow } from './entities.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './quorum-graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { type DecisionHook, RecordedRefusal, registerDecisionHook } from './hooks.js';

// Decisions: approve, edit then approve, reject, request changes, delegate; quorum votes; the
// hooks a kind of approval adds to the one decision path (decisions/hooks.ts).

const loaders = (em: EntityManager) => ({ decisions: manyBy<DecisionRow>(em, Decision, 'approvalId', { decidedAt: 'asc' }) });
type DecisionsLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends DecisionsLoaders {}
}

export const decisionsModule = defineModule({
  name: 'decisions',
  entities: [Decision],
  loaders,
});
