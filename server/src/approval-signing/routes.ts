import { sendJson } from '../http/json.js';
import type { Route } from '../http/route.js';
import { JWKS_PATH } from '../verify-approval/index.js';

// GET /.well-known/jwks.json: the public keys that sign approvals (the current one first, then
// the published earlier ones), for agents. Public, no token: it holds no private material.
// Cached for five minutes; an agent refetches when a signature names a kid it has not seen.

export const jwksRoute: Route = {
  method: 'GET',
  path: new RegExp(`^${JWKS_PATH.replace(/[./]/g, '\\$&')}$`),
  handler: (_req, res, ctx) => sendJson(res, 200, ctx.deps.approvalKeys.jwks, { 'cache-control': 'public, max-age=300' }),
};
