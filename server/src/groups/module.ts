import type { EntityManager } from '@mikro-orm/postgresql';
import { byId, manyBy } from '../graphql/loaders.js';
import { GROUP_ENTITIES, ReviewerGroup, ReviewerGroupMember, type ReviewerGroupMemberRow, type ReviewerGroupRow } from './entities.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { ReviewerGroupRef } from './graphql.js';
export { groupIdsOf } from './membership.js';

// Reviewer groups: named sets of people a policy, an escalation or a delegation can name.

const loaders = (em: EntityManager) => ({
  reviewerGroup: byId<ReviewerGroupRow>(em, ReviewerGroup),
  /** A person's reviewer group memberships (by user id). */
  memberships: manyBy<ReviewerGroupMemberRow>(em, ReviewerGroupMember, 'userId', { addedAt: 'asc' }),
});
type GroupsLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends GroupsLoaders {}
}

export const groupsModule = defineModule({
  name: 'groups',
  entities: GROUP_ENTITIES,
  loaders,
});
