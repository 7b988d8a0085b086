import type { Access, Check } from './access.js';

// What a viewer sees and decides, as query filters and as checks on loaded rows; the one place
// of these rules. Always the viewer's tenant only. Every approval has an approver scope: its
// agent (the task's agent, the hook agent of a command request, or the agent a person named
// when asking without a task), optionally limited to a skill. VIEW on the scope sees, OPERATE
// decides; admins hold both on every agent of their tenant. A request without a scope (a
// person's request naming neither task nor agent) is seen by admins and its requester and
// decided by admins only. A requester always sees their own request (a hook follows the
// command it asked for) and never decides it (separation of duties, decisions/service.ts).

type Scoped = { tenantId: string; agentId?: string | null; skillId?: string | null; requesterId?: string | null };

const isRequester = (access: Access, row: Scoped) => access.isViewer(row.requesterId);

// The checks answer synchronously once the viewer's grants are loaded (auth/access.ts Check):
// the subscription fan-out checks thousands of subscribers per event that way.

export function canView(access: Access, row: Scoped | null | undefined): Check {
  if (!row || row.tenantId !== access.viewer.tenantId) return false;
  if (isRequester(access, row)) return true;
  if (!row.agentId) return access.isAdmin;
  return access.has('VIEW', row.agentId, row.skillId ?? null);
}

/** Whether the viewer may decide (or be delegated) the row: OPERATE on its scope. The requester check is separate. */
export function canOperate(access: Access, row: Scoped): Check {
  if (row.tenantId !== access.viewer.tenantId) return false;
  if (!row.agentId) return access.isAdmin;
  return access.has('OPERATE', row.agentId, row.skillId ?? null);
}

/** The agent itself (catalog entry, card): visible with any grant on it, as `agents` lists it. */
export function canViewAgent(access: Access, agent: { id: string; tenantId: string } | null | undefined): Check {
  if (!agent || agent.tenantId !== access.viewer.tenantId) return false;
  return access.seesAgent(agent.id);
}

/**
 * A MikroORM filter for rows carrying tenantId, agentId and skillId, matching canView.
 * `ownRequests`: the rows also carry requesterId (approvals), and the viewer's own are visible.
 */
export async function visibleFilter(access: Access, opts: { ownRequests: boolean }): Promise<Record<string, unknown>> {
  const base = { tenantId: access.viewer.tenantId };
  if (access.isAdmin) return base;
  const grants = await access.loadGrants();
  const or: Record<string, unknown>[] = grants.map((g) => (g.skillId ? { agentId: g.agentId, skillId: g.skillId } : { agentId: g.agentId }));
  if (opts.ownRequests) or.push({ requesterId: access.viewer.userId });
  if (!or.length) return { ...base, id: null };
  return { ...base, $or: or };
}
