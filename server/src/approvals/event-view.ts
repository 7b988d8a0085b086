import type { EntityManager } from '@mikro-orm/postgresql';
import { Access, findGrants, type GrantScope, type Viewer } from '../access.js';
import type { ApprovalEventPayload } from '../events/pubsub.js';
import { createLoaders, type Loaders } from '../graphql/loaders.js';
import { ApprovalRequest, type ApprovalRow } from './entities.js';

// One event, loaded once per instance for all its subscribers. The local pub/sub hands every
// subscriber the same payload object, so a WeakMap keyed by it shares one view per event (and
// forgets it with the event). What is shared:
// - the approval (and the one that superseded it): one query;
// - the grants of the subscribers that need them (members; admins need none): one query for
//   every subscriber that asks in the same tick (the pub/sub asks for all of them before it
//   delivers the event, events/pubsub.ts `prepare`), read after the event committed, so a
//   grant withdrawn before the event stops it (exact, however the grant was removed);
// - the loaders the selected fields resolve through (agent, task, user, decisions, ...): they
//   read by id without any viewer's filter, so sharing them among the subscribers of one event
//   changes no answer; what a viewer may see is checked in the resolvers, per subscriber.
// Each subscriber then checks its tenant and grants in memory (auth/visibility.ts canView),
// synchronously once the view and its grants are loaded. What a subscriber waits for is one
// promise per event (and one per batch of grants), whatever the number of subscribers.

export interface EventView {
  em: EntityManager;
  loaders: Loaders;
  /** Settles once `approvals` is there. */
  loaded: Promise<void>;
  /** The event's approvals (the approval and its successor) by id, once loaded. */
  approvals: Map<string, ApprovalRow> | null;
  /** The viewer's access as of this event, one per viewer. */
  accessOf(viewer: Viewer): Access;
  /** Loads the viewer's grants with everyone's asked in the same tick; nothing when there is nothing to load. */
  grantsReady(viewer: Viewer): Promise<void> | undefined;
}

const views = new WeakMap<ApprovalEventPayload, EventView>();

/** The event's view (its loads start on the first call). */
export function eventView(em: EntityManager, e: ApprovalEventPayload): EventView {
  let view = views.get(e);
  if (!view) {
    view = createEventView(em.fork(), e);
    views.set(e, view);
    // A failed load is not kept: the next subscriber tries again.
    view.loaded.catch(() => views.delete(e));
  }
  return view;
}

function createEventView(em: EntityManager, e: ApprovalEventPayload): EventView {
  const loaders = createLoaders(em);
  const access = new WeakMap<Viewer, Access>();
  const grantsOf = new Map<string, GrantScope[]>();
  const waiting = new WeakMap<Access, Promise<void>>();
  let batch: { members: Set<Access>; done: Promise<void> } | null = null;

  const view: EventView = {
    em,
    loaders,
    approvals: null,
    loaded: Promise.resolve(),
    accessOf(viewer) {
      let a = access.get(viewer);
      if (!a) {
        // Asked outside a preparation (say, by a subscriber that joined late): the same batch.
        const source = async () => {
          await (view.grantsReady(viewer) ?? waiting.get(a!));
          return grantsOf.get(viewer.userId) ?? [];
        };
        a = new Access(em, viewer, source);
        access.set(viewer, a);
      }
      return a;
    },
    grantsReady(viewer) {
      const a = view.accessOf(viewer);
      if (a.isAdmin) return undefined;
      const pending = waiting.get(a);
      if (pending) return pending;
      if (!batch) {
        const members = new Set<Access>();
        // After everything asked in this tick (as DataLoader schedules its batches).
        const done = Promise.resolve()
          .then(() => new Promise<void>((r) => process.nextTick(r)))
          .then(async () => {
            batch = null;
            const byUser = await findGrants(em, e.tenantId, [...new Set([...members].map((m) => m.viewer.userId))]);
            for (const [userId, grants] of byUser) grantsOf.set(userId, grants);
            for (const m of members) m.useGrants(grantsOf.get(m.viewer.userId) ?? []);
            // Ready means ready to check: the approvals too (their failure is met by the check).
            await view.loaded.catch(() => {});
          });
        batch = { members, done };
      }
      batch.members.add(a);
      waiting.set(a, batch.done);
      return batch.done;
    },
  };
  view.loaded = (async () => {
    const ids = [e.approvalId, ...(e.supersededById ? [e.supersededById] : [])];
    const rows = (await em.find(ApprovalRequest, { id: { $in: ids } })) as ApprovalRow[];
    for (const r of rows) loaders.approval.prime(r.id, r);
    view.approvals = new Map(rows.map((r) => [r.id, r]));
  })();
  return view;
}
