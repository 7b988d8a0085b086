import type { Access } from './access.js';

// What a viewer sees, as query filters and as checks on loaded rows: always their tenant; for
// members only the agents (and skills) they hold a grant for. Rows without an agent (a person's
// own request without a task) are visible to the whole tenant.

type Scoped = { tenantId: string; agentId?: string | null; skillId?: string | null };

export async function canView(access: Access, row: Scoped | null | undefined): Promise<boolean> {
  if (!row || row.tenantId !== access.viewer.tenantId) return false;
  if (!row.agentId) return true;
  return access.has('VIEW', row.agentId, row.skillId ?? null);
}

export async function canOperate(access: Access, row: Scoped): Promise<boolean> {
  if (row.tenantId !== access.viewer.tenantId) return false;
  if (!row.agentId) return true;
  return access.has('OPERATE', row.agentId, row.skillId ?? null);
}

/** The agent itself (catalog entry, card): visible with any grant on it, as `agents` lists it. */
export async function canViewAgent(access: Access, agent: { id: string; tenantId: string } | null | undefined): Promise<boolean> {
  if (!agent || agent.tenantId !== access.viewer.tenantId) return false;
  return access.seesAgent(agent.id);
}

/** A MikroORM filter for rows carrying tenantId, agentId and skillId. */
export async function visibleFilter(access: Access, opts: { allowAgentless: boolean }): Promise<Record<string, unknown>> {
  const base = { tenantId: access.viewer.tenantId };
  if (access.isAdmin) return base;
  const grants = await access.loadGrants();
  const or: Record<string, unknown>[] = grants.map((g) => (g.skillId ? { agentId: g.agentId, skillId: g.skillId } : { agentId: g.agentId }));
  if (opts.allowAgentless) or.push({ agentId: null });
  if (!or.length) return { ...base, id: null };
  return { ...base, $or: or };
}
