import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Deps } from '../deps.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import type { Viewer } from '../access.js';

// Types only: what a plain HTTP endpoint is. Each feature exports its routes from its own folder;
// app.ts lists them and http/dispatch.ts serves them, so no route module imports that list.

export interface RouteContext {
  orm: MikroORM;
  deps: Deps;
  pubsub: TaskbayPubSub;
  /** The viewer of an API token (auth/), for the routes that take a bearer token. */
  viewerForToken(em: EntityManager, token: string): Promise<Viewer | null>;
}

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Matched against the path (no query string); groups are passed to the handler. */
  path: RegExp;
  handler(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, params: string[]): Promise<void> | void;
}
