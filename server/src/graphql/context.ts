import type { EntityManager } from '@mikro-orm/postgresql';
import { Access, type Viewer } from '../access.js';
import type { Deps } from '../deps.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { createLoaders, type Loaders } from './loaders.js';

/** Built per HTTP request and per subscription event (fresh entity manager, fresh loaders). */
export interface Context {
  em: EntityManager;
  deps: Deps;
  pubsub: TaskbayPubSub;
  viewer: Viewer | null;
  access: Access | null;
  loaders: Loaders;
  /** Set a response header (session cookie); absent on WebSocket operations. */
  setCookie?: (cookie: string) => void;
  /** The credential the viewer came from, for a subscription over HTTP to check again (credential-watch.ts). */
  credential?: { token: string | null; session: string | null };
}

/**
 * What a field behind `t.withAuth({ authenticated: true })` (or `admin`) resolves with: the
 * scope check (graphql/builder.ts) has answered UNAUTHENTICATED already when no one is signed in.
 */
export interface SignedInContext extends Context {
  viewer: Viewer;
  access: Access;
}

/**
 * What one subscriber reads one event through: the event's shared entity manager and loaders
 * (approvals/event-view.ts), its own access as of the event. Kept beside the subscriber's
 * context, per event, rather than written into it: an event is prepared before the previous
 * one may be done with (events/pubsub.ts `prepare`).
 */
export interface EventScope {
  em: EntityManager;
  loaders: Loaders;
  access: Access | null;
}

/** Per event, per subscriber: the subscriber's context read through its scope for that event. */
const eventScopes = new WeakMap<object, WeakMap<Context, Context>>();

export function setEventScope(ctx: Context, event: object, scope: EventScope): Context {
  let byContext = eventScopes.get(event);
  if (!byContext) {
    byContext = new WeakMap();
    eventScopes.set(event, byContext);
  }
  // The subscriber's context with the scope's three properties over it (not a copy of all).
  const scoped: Context = Object.assign(Object.create(ctx) as Context, scope);
  byContext.set(ctx, scoped);
  return scoped;
}

/** The context an event is executed with: the subscriber's, read through its scope for the event (if any). */
export function inEventScope(ctx: Context, event: unknown): Context {
  if (!event || typeof event !== 'object') return ctx;
  return eventScopes.get(event)?.get(ctx) ?? ctx;
}

/** Each subscription event reads through a fresh entity manager and fresh loaders. */
export function freshEventScope(ctx: Context): void {
  ctx.em = ctx.em.fork();
  ctx.loaders = createLoaders(ctx.em);
  if (ctx.viewer) ctx.access = new Access(ctx.em, ctx.viewer);
}
