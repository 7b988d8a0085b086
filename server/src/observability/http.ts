import type { RequestListener } from 'node:http';
import { performance } from 'node:perf_hooks';
import { inRequestScope, log, requestIdFrom, requestScope, type RequestScope } from '../log.js';
import type { Tracing } from './tracing.js';

// Every HTTP request: a request id (the caller's X-Request-Id when it is a short safe token, else
// a new one), echoed in the response and carried by every log line written while it is handled;
// one line when it ends (method, path without the query, route, status, duration, GraphQL
// operation); with tracing on, a span.

/** Probes and scrapes come every few seconds: their successful requests are logged at debug. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export const REQUEST_ID_HEADER = 'x-request-id';

export function observeRequests(handler: RequestListener, tracing: Tracing | null): RequestListener {
  return (req, res) => {
    const started = performance.now();
    const scope: RequestScope = { reqId: requestIdFrom(req.headers[REQUEST_ID_HEADER]), freshness: new Map() };
    res.setHeader(REQUEST_ID_HEADER, scope.reqId);
    const path = (req.url ?? '/').split('?')[0]!;
    const span = tracing?.startHttpSpan(req, path);
    res.once('close', () =>
      inRequestScope(scope, () => {
        const status = res.statusCode;
        const line = {
          method: req.method,
          path,
          route: scope.route,
          status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          operation: scope.operation,
          // The client went away before the whole response was sent.
          ...(res.writableFinished ? {} : { aborted: true }),
        };
        if (status >= 500) log.warn(line, 'request');
        else if (QUIET_PATHS.has(path) && status < 400) log.debug(line, 'request');
        else log.info(line, 'request');
        span?.end({
          name: scope.route ? `${req.method} ${scope.route}` : undefined,
          attributes: { 'http.response.status_code': status, ...(scope.route ? { 'http.route': scope.route } : {}) },
          error: status >= 500 ? `HTTP ${status}` : undefined,
        });
      }),
    );
    inRequestScope(scope, () => (span ? span.run(() => handler(req, res)) : handler(req, res)));
  };
}

/** Names the route answering the current request (http/routes.ts), for its log line and span. */
export function noteRoute(path: RegExp) {
  const scope = requestScope();
  if (scope) scope.route = routeTemplate(path);
}

/** /api/agents/{}/card for /^\/api\/agents\/([^/]+)\/card$/. */
function routeTemplate(path: RegExp): string {
  return path.source
    .replace(/^\^|\$$/g, '')
    .replace(/\((?:[^()\\]|\\.)*\)/g, '{}')
    .replace(/\\(.)/g, '$1');
}
