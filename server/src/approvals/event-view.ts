import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Access, findGrants, type GrantScope, type Viewer } from '../auth/access.js';
import type { ApprovalEventPayload } from '../events/pubsub.js';
import { createLoaders, type Loaders } from '../graphql/loaders.js';
import { ApprovalRequest, type ApprovalRow } from './entities.js';

// One event, loaded once per instance for all its subscribers. The local pub/sub hands every
// subscriber the same payload object, so a WeakMap keyed by it shares one load per event (and
// forgets it with the event). What is shared:
// - the approval (and the one that superseded it): one query;
// - the grants of the subscribers that need them (members; admins need none): one query for
//   every subscriber that asks in the same tick (DataLoader; the pub/sub asks for all of them
//   before it delivers the event, events/pubsub.ts `prepare`), read after the event committed,
//   so a grant withdrawn before the event stops it (exact, however the grant was removed);
// - the loaders the selected fields resolve through (agent, task, user, decisions, ...): they
//   read by id without any viewer's filter, so sharing them among the subscribers of one event
//   changes no answer; what a viewer may see is checked in the resolvers, per subscriber.
// Each subscriber then checks its tenant and grants in memory (auth/visibility.ts canView),
// synchronously once the view and its grants are loaded.

export interface EventView {
  em: EntityManager;
  loaders: Loaders;
  /** The event's approvals (the approval and its successor), by id. */
  approvals: Map<string, ApprovalRow>;
  /** The viewer's access as of this event (its grants batched across subscribers), one per viewer. */
  accessOf(viewer: Viewer): Access;
}

const views = new WeakMap<ApprovalEventPayload, { loading: Promise<EventView>; view?: EventView }>();

/** The event's view: at once when already loaded, else once it is. */
export function eventView(em: EntityManager, e: ApprovalEventPayload): EventView | Promise<EventView> {
  let entry = views.get(e);
  if (!entry) {
    const loading = loadEventView(em.fork(), e);
    const created = { loading } as { loading: Promise<EventView>; view?: EventView };
    views.set(e, (entry = created));
    // A failed load is not kept: the next subscriber tries again.
    loading.then(
      (view) => (created.view = view),
      () => views.delete(e),
    );
  }
  return entry.view ?? entry.loading;
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
  const access = new WeakMap<Viewer, Access>();
  return {
    em,
    loaders,
    approvals: new Map(rows.map((r) => [r.id, r])),
    accessOf: (viewer) => {
      let a = access.get(viewer);
      if (!a) access.set(viewer, (a = new Access(em, viewer, () => grants.load(viewer.userId))));
      return a;
    },
  };
}
