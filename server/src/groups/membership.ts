import type { EntityManager } from '@mikro-orm/postgresql';
import { ReviewerGroupMember } from './entities.js';

/** The reviewer groups a person belongs to (ids), read in the caller's transaction. */
export async function groupIdsOf(em: EntityManager, userId: string): Promise<Set<string>> {
  const rows = await em.find(ReviewerGroupMember, { userId }, { fields: ['groupId'] });
  return new Set(rows.map((r) => r.groupId));
}
