import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Deps } from '../deps.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import type { Observability } from '../observability/index.js';

// Types only: what a plain HTTP endpoint is. Each feature exports its routes from its own folder;
// app.ts lists them and http/dispatch.ts serves them, so no route module imports that list.

export interface RouteContext {
  orm: MikroORM;
  deps: Deps;
  pubsub: TaskbayPubSub;
  observability: Observability;
}

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Matched against the path (no query string); groups are passed to the handler. */
  path: RegExp;
  handler(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, params: string[]): Promise<void> | void;
}
