import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Route } from '../http/route.js';
import type { Observability } from './index.js';
import { hostNamesThisMachine } from '../http/host.js';
import { bearerToken, sendJson } from '../http/json.js';
import { parseAddress } from '../net/policy.js';

// GET /readyz (can this instance do its work: database, job worker, LISTEN connection) and
// GET /metrics (Prometheus). /healthz, liveness, stays in http/routes.ts.

export type ScrapeVerdict = { ok: true } | { ok: false; status: 401 | 403; error: string };

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Who may read /metrics: with TASKBAY_METRICS_TOKEN, whoever sends it as a bearer token (loopback
 * too: a reverse proxy on the same host makes every client look local); without, loopback clients
 * whose Host names this machine (http/host.ts: a DNS-rebinding page's requests name its own host).
 */
export function mayScrape(
  token: string | null,
  req: Pick<IncomingMessage, 'headers'> & { socket: { remoteAddress?: string } },
  publicUrl: string,
): ScrapeVerdict {
  if (token) {
    const offered = bearerToken(req as IncomingMessage);
    if (offered && timingSafeEqual(digest(offered), digest(token))) return { ok: true };
    return { ok: false, status: 401, error: 'send Authorization: Bearer <TASKBAY_METRICS_TOKEN>' };
  }
  const from = parseAddress(req.socket.remoteAddress ?? '');
  if (from?.range() !== 'loopback') {
    return { ok: false, status: 403, error: 'metrics are served to loopback clients only; set TASKBAY_METRICS_TOKEN to scrape from elsewhere' };
  }
  if (!hostNamesThisMachine(req.headers.host, publicUrl)) {
    return {
      ok: false,
      status: 403,
      error:
        "metrics are served to loopback clients whose Host is localhost, a loopback address or TASKBAY_PUBLIC_URL's host; set TASKBAY_METRICS_TOKEN to scrape by another name",
    };
  }
  return { ok: true };
}

const readyz = (observability: Observability): Route => ({
  method: 'GET',
  path: /^\/readyz$/,
  async handler(_req, res, ctx) {
    const report = await observability.readiness();
    sendJson(res, report.ready ? 200 : 503, report);
  },
});

const metrics = (observability: Observability): Route => ({
  method: 'GET',
  path: /^\/metrics$/,
  async handler(req, res, ctx) {
    const verdict = mayScrape(ctx.deps.config.metricsToken, req, ctx.deps.config.publicUrl);
    if (!verdict.ok) {
      sendJson(res, verdict.status, { error: verdict.error }, verdict.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
      return;
    }
    const { registry } = observability.metrics;
    const body = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(body);
  },
});

/** The routes of this instance's observability (app.ts). */
export const observabilityRoutes = (observability: Observability): Route[] => [readyz(observability), metrics(observability)];
