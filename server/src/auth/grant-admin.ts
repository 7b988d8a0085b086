import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream } from '../audit/module.js';
import { notFound } from '../errors.js';
import type { Access } from '../access.js';
import { AgentGrant, type AgentGrantRow } from './agent-grant-entity.js';

// Listing and revoking agent grants (People page). Granting is auth/service.ts's
// grantAgentAccess; a revocation is audited like a grant ('grant.revoked' in the tenant stream)
// and takes effect on the member's next request (grants are read per request).

export function listGrants(em: EntityManager, access: Access, userId?: string | null): Promise<AgentGrantRow[]> {
  const where: Record<string, unknown> = { tenantId: access.viewer.tenantId };
  if (userId) where.userId = userId;
  return em.find(AgentGrant, where, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function revokeGrant(em: EntityManager, access: Access, grantId: string): Promise<AgentGrantRow> {
  const tenantId = access.viewer.tenantId;
  return em.transactional(async (tem) => {
    const grant = await tem.findOne(AgentGrant, { id: grantId, tenantId });
    if (!grant) throw notFound('grant');
    tem.remove(grant);
    await tem.flush();
    await appendEvents(tem, [
      {
        tenantId,
        stream: stream.tenant(tenantId),
        type: 'grant.revoked',
        actor: { type: 'user', id: access.viewer.userId },
        data: { grantId: grant.id, userId: grant.userId, agentId: grant.agentId, skillId: grant.skillId ?? null, permission: grant.permission },
      },
    ]);
    return grant;
  });
}
