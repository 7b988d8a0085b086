import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { findGrants, type GrantScope, type Viewer } from '../auth/access.js';
import type { ApprovalEventPayload } from '../events/pubsub.js';
import { createLoaders, type Loaders } from '../graphql/loaders.js';
import { ApprovalRequest, type ApprovalRow } from './entities.js';

// One event, loaded once per instance for all its subscribers. The local pub/sub hands every
// subscriber the same payload object, so a WeakMap keyed by it shares one load per event (and
// forgets it with the event). What is shared:
// - the approval (and the one that superseded it): one query;
// - the grants of the subscribers that need them (members; admins need none): one query for
//   every subscriber that asks in the same tick (DataLoader), read after the event committed,
//   so a grant withdrawn before the event stops it (exact, however the grant was removed);
// - the loaders the selected fields resolve through (agent, task, user, decisions, ...): they
//   read by id without any viewer's filter, so sharing them among the subscribers of one event
//   changes no answer; what a viewer may see is checked in the resolvers, per subscriber.
// Each subscriber then checks its tenant and grants in memory (auth/visibility.ts canView).

export interface EventView {
  em: EntityManager;
  loaders: Loaders;
  /** The viewer's grants as of this event (batched across subscribers). */
  grantsOf(viewer: Viewer): () => Promise<GrantScope[]>;
}

const views = new WeakMap<ApprovalEventPayload, Promise<EventView>>();

export function eventView(em: EntityManager, e: ApprovalEventPayload): Promise<EventView> {
  let view = views.get(e);
  if (!view) {
    view = loadEventView(em.fork(), e);
    views.set(e, view);
    // A failed load is not kept: the next subscriber tries again.
    view.catch(() => views.delete(e));
  }
  return view;
}

async function loadEventView(em: EntityManager, e: ApprovalEventPayload): Promise<EventView> {
  const ids = [e.approvalId, ...(e.supersededById ? [e.supersededById] : [])];
  const rows = (await em.find(ApprovalRequest, { id: { $in: ids } })) as ApprovalRow[];
  const loaders = createLoaders(em);
  for (const r of rows) loaders.approval.prime(r.id, r);
  const grants = new DataLoader<string, GrantScope[]>(async (userIds) => {
    const byUser = await findGrants(em, e.tenantId, userIds);
    return userIds.map((u) => byUser.get(u) ?? []);
  });
  return {
    em,
    loaders,
    grantsOf: (viewer) => () => grants.load(viewer.userId),
  };
}
