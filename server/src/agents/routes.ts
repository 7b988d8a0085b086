import type { EntityManager } from '@mikro-orm/postgresql';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { advertisedExtensionUris } from '../a2a/card.js';
import { Access } from '../access.js';
import { viewerForToken } from '../auth/module.js';
import { bearerToken, sendJson } from '../http/json.js';
import type { Route } from '../http/route.js';
import { latestSnapshots, listVisibleAgents } from './service.js';

// GET /api/agents: the agent catalog (seed 000: "load the catalog (GET /api/agents) after
// registering the agent"), the GraphQL `agents` list over HTTP: Bearer token, the viewer's
// tenant, the agents the viewer sees, each with its latest stored card snapshot (what extension
// negotiation reads), the extensions it advertises and its skills. Loading the catalog reads what
// is stored and fetches no card: registering stores snapshot 1, refreshAgentCard adds the next.

export const agentsCatalogRoute: Route = {
  method: 'GET',
  path: /^\/api\/agents$/,
  async handler(req, res, ctx) {
    const em = ctx.orm.em.fork() as unknown as EntityManager;
    const token = bearerToken(req);
    const viewer = token ? await viewerForToken(em, token) : null;
    if (!viewer) return sendJson(res, 401, { error: 'UNAUTHENTICATED', message: 'send Authorization: Bearer <api token>' });
    const agents = await listVisibleAgents(em, new Access(em, viewer));
    const snapshots = await latestSnapshots(
      em,
      agents.map((a) => a.id),
    );
    sendJson(res, 200, {
      agents: agents.map((a) => {
        const snapshot = snapshots.get(a.id) ?? null;
        return {
          id: encodeGlobalID('Agent', a.id),
          uuid: a.id,
          name: a.name,
          kind: a.kind,
          cardUrl: a.cardUrl ?? null,
          snapshot: snapshot ? { number: snapshot.number, fetchedAt: snapshot.fetchedAt.toISOString() } : null,
          extensions: snapshot ? advertisedExtensionUris(snapshot.card) : [],
          skills: (snapshot?.card.skills ?? []).map((s) => ({ id: s.id, name: s.name, description: s.description ?? null })),
        };
      }),
    });
  },
};
