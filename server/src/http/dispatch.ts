import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorForLog, log } from '../log.js';
import { noteRoute } from '../observability/http.js';
import { sendJson } from './json.js';
import type { Route, RouteContext } from './route.js';

// Plain HTTP endpoints next to /graphql (health, REST surfaces, callbacks): app.ts lists them.

export const healthzRoute: Route = {
  method: 'GET',
  path: /^\/healthz$/,
  handler: (_req, res) => sendJson(res, 200, { ok: true }),
};

/**
 * Path prefixes that belong to machines, never to the console: a path under them that no route
 * serves is a 404 in JSON (an integrator's typo must not get the console's HTML with 200).
 */
export const API_PREFIXES = ['/api/', '/mcp', '/.well-known/'] as const;

/** True when `path` is /api/…, /mcp or /mcp/…, or /.well-known/…. */
export function isApiPath(path: string): boolean {
  return API_PREFIXES.some((p) => (p.endsWith('/') ? path.startsWith(p) || path === p.slice(0, -1) : path === p || path.startsWith(`${p}/`)));
}

/** The answer for a path under API_PREFIXES that no route serves (any method). */
export function sendApiNotFound(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0]!;
  sendJson(res, 404, { error: 'NOT_FOUND', message: `no ${req.method ?? 'GET'} route at ${path.slice(0, 200)}` });
}

/** Serves the first route of `routes` that matches; false when none does. */
export async function dispatch(routes: readonly Route[], req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<boolean> {
  const path = (req.url ?? '/').split('?')[0]!;
  for (const route of routes) {
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
