import type { EntityManager } from '@mikro-orm/postgresql';
import { Access, type GrantScope, type Viewer } from '../auth/access.js';
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
 * An approval event's subscriber reads through the event's shared entity manager and loaders
 * (approvals/event-view.ts), with its own grants as of the event.
 */
export function sharedEventScope(ctx: Context, view: { em: EntityManager; loaders: Loaders; grantsOf(v: Viewer): () => Promise<GrantScope[]> }): void {
  ctx.em = view.em;
  ctx.loaders = view.loaders;
  if (ctx.viewer) ctx.access = new Access(view.em, ctx.viewer, view.grantsOf(ctx.viewer));
}

/** Each subscription event reads through a fresh entity manager and fresh loaders. */
export function freshEventScope(ctx: Context): void {
  ctx.em = ctx.em.fork();
  ctx.loaders = createLoaders(ctx.em);
  if (ctx.viewer) ctx.access = new Access(ctx.em, ctx.viewer);
}
