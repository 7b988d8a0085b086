import { DomainError, notFound } from '../errors.js';
import type { Access, Check } from '../access.js';
import type { Permission } from './entities.js';

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

// The checks answer synchronously once the viewer's grants are loaded (access.ts Check):
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

const OPERATE_NEEDED = 'you need OPERATE on this agent';

/**
 * The one access rule, over the visibility and operate answers above: what the viewer does not
 * see is NOT_FOUND ("<what> not found"), as if it did not exist; what they see but need OPERATE
 * on and lack is FORBIDDEN. Returns the target, known to be there.
 */
async function enforce<T>(
  target: T | null | undefined,
  need: Permission,
  what: string,
  sees: (t: T) => Check,
  operates: (t: T) => Check,
  forbidden: string,
): Promise<T> {
  if (target === null || target === undefined || !(await sees(target))) throw notFound(what);
  if (need === 'OPERATE' && !(await operates(target))) throw new DomainError('FORBIDDEN', forbidden);
  return target;
}

/** The rule for a row under an approver scope (approval, task): seen by canView, operated by canOperate. */
export function authorize<T extends Scoped>(access: Access, need: Permission, what: string, row: T | null | undefined, forbidden = OPERATE_NEEDED): Promise<T> {
  return enforce(
    row,
    need,
    what,
    (r) => canView(access, r),
    (r) => canOperate(access, r),
    forbidden,
  );
}

/**
 * The rule for an agent used with a skill (starting a task, naming an approver scope): seen
 * with any grant on it (canViewAgent), used with OPERATE on the agent and that skill. Seeing the
 * agent and being allowed to use the skill are different answers: NOT_FOUND, then FORBIDDEN.
 */
export function authorizeAgent<T extends { id: string; tenantId: string }>(
  access: Access,
  need: Permission,
  agent: T | null | undefined,
  skillId: string | null,
): Promise<T> {
  const scope = (a: T) => ({ tenantId: a.tenantId, agentId: a.id, skillId });
  return enforce(
    agent,
    need,
    'agent',
    (a) => canViewAgent(access, a),
    (a) => canOperate(access, scope(a)),
    OPERATE_NEEDED,
  );
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
