import type { ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isAdminViewer } from '../access.js';
import { bearerToken, sendJson } from '../http/json.js';
import type { Route } from '../http/route.js';
import { writeExport } from './export.js';
import { auditSignerOf } from './signing.js';

// GET /api/audit/public-key (no sign-in: a public key is public; `?format=pem` gives the PEM
// alone, to keep apart from the database as the trust anchor of `taskbay audit verify`) and
// GET /api/audit/export (an admin's API token; the admin's tenant only; written a page at a time).

export const publicKeyRoute: Route = {
  method: 'GET',
  path: /^\/api\/audit\/public-key$/,
  handler(req, res, ctx) {
    const signer = auditSignerOf(ctx.orm.em);
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('format') === 'pem') {
      res.writeHead(200, { 'content-type': 'application/x-pem-file', 'cache-control': 'no-store' }).end(signer.publicKeyPem);
      return;
    }
    sendJson(res, 200, { algorithm: 'Ed25519', keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
  },
};

export const exportRoute: Route = {
  method: 'GET',
  path: /^\/api\/audit\/export$/,
  async handler(req, res, ctx) {
    const em = ctx.orm.em.fork() as unknown as EntityManager;
    const token = bearerToken(req);
    const viewer = token ? await ctx.viewerForToken(em, token) : null;
    if (!viewer) return sendJson(res, 401, { error: 'UNAUTHENTICATED', message: 'send Authorization: Bearer <api token of an admin>' });
    if (!isAdminViewer(viewer)) return sendJson(res, 403, { error: 'FORBIDDEN', message: 'only an admin can export the audit log' });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    try {
      await writeExport(em, viewer.tenantId, auditSignerOf(em), (chunk) => written(res, chunk));
      res.end();
    } catch (e) {
      // The status is sent: a cut connection (an incomplete document) is what tells the reader.
      if (!res.destroyed) console.error(`[audit] export of tenant ${viewer.tenantId} failed: ${(e as Error).message}`);
      res.destroy();
    }
  },
};

/** Writes a chunk, waiting while the reader is behind; throws once the connection is gone. */
async function written(res: ServerResponse, chunk: string): Promise<void> {
  if (res.destroyed) throw new Error('the client went away');
  if (res.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      res.off('drain', onDrain).off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(new Error('the client went away'));
    res.on('drain', onDrain).on('close', onClose);
  });
}

export const auditRoutes: Route[] = [publicKeyRoute, exportRoute];
