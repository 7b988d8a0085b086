import type { EntityManager } from '@mikro-orm/postgresql';
import { User } from './entities.js';

/** A decider as an agent is told of them: "Name <email>" (the email alone when the name is it), or "a reviewer" when the person is gone. */
export async function reviewerName(em: EntityManager, userId: string): Promise<string> {
  const user = await em.findOne(User, { id: userId });
  return user ? (user.name && user.name !== user.email ? `${user.name} <${user.email}>` : user.email) : 'a reviewer';
}
