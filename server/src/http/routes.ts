import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Deps } from '../deps.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { sendJson } from './json.js';
import { errorForLog, log } from '../log.js';
import { contractRoute } from '../contract/routes.js';
import { commandRoutes } from '../grants/routes.js';
import { pushRoute } from '../a2a/push.js';
import { auditRoutes } from '../audit/routes.js';
import { agentsCatalogRoute } from '../agents/routes.js';
import type { Observability } from '../observability/index.js';
import { observabilityRoutes } from '../observability/routes.js';
import { noteRoute } from '../observability/http.js';

// Plain HTTP endpoints next to /graphql (health, REST surfaces, callbacks). Each feature
// exports its routes from its own folder and is listed once in ROUTES below.

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

const healthz: Route = {
  method: 'GET',
  path: /^\/healthz$/,
  handler: (_req, res) => sendJson(res, 200, { ok: true }),
};

export const ROUTES: Route[] = [healthz, ...observabilityRoutes, contractRoute, ...commandRoutes, pushRoute, ...auditRoutes, agentsCatalogRoute];

export async function dispatch(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<boolean> {
  const path = (req.url ?? '/').split('?')[0]!;
  for (const route of ROUTES) {
    if (route.method !== req.method) continue;
    const m = route.path.exec(path);
    if (!m) continue;
    noteRoute(route.path);
    try {
      await route.handler(req, res, ctx, m.slice(1));
    } catch (e) {
      log.error({ err: errorForLog(e) }, `[http] ${req.method} ${path} failed`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
    }
    return true;
  }
  return false;
}
