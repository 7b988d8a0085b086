import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentGrant, type Permission } from './entities.js';

// Who may see and decide what. Admins hold OPERATE on every agent of their tenant; members
// need a grant, optionally limited to one skill (which then reaches only tasks of that skill).

export interface Viewer {
  userId: string;
  tenantId: string;
  role: 'ADMIN' | 'MEMBER';
  email: string;
}

export interface GrantScope {
  agentId: string;
  skillId: string | null;
  permission: Permission;
}

/** The viewer's grants in their tenant, as scopes (one query; also batched for subscribers, approvals/event-view.ts). */
export async function findGrants(em: EntityManager, tenantId: string, userIds: readonly string[]): Promise<Map<string, GrantScope[]>> {
  const rows = await em.find(AgentGrant, { tenantId, userId: { $in: [...userIds] } });
  const byUser = new Map<string, GrantScope[]>(userIds.map((u) => [u, []]));
  for (const g of rows) byUser.get(g.userId)?.push({ agentId: g.agentId, skillId: g.skillId ?? null, permission: g.permission });
  return byUser;
}

export class Access {
  private grants: Promise<GrantScope[]> | null = null;
  /** `grantSource`: where the grants come from when asked (default: one query through em). */
  constructor(
    private readonly em: EntityManager,
    readonly viewer: Viewer,
    private readonly grantSource?: () => Promise<GrantScope[]>,
  ) {}

  get isAdmin(): boolean {
    return this.viewer.role === 'ADMIN';
  }

  /**
   * Whether `userId` is the viewer. Asked as a question, not by reading the viewer's id, so a
   * shared subscription result depends on the answer only (graphql/viewer-facts.ts).
   */
  isViewer(userId: string | null | undefined): boolean {
    return !!userId && userId === this.viewer.userId;
  }

  /** The viewer's grants, loaded once per request. */
  loadGrants(): Promise<GrantScope[]> {
    this.grants ??= this.grantSource
      ? this.grantSource()
      : findGrants(this.em, this.viewer.tenantId, [this.viewer.userId]).then((m) => m.get(this.viewer.userId)!);
    return this.grants;
  }

  async has(permission: Permission, agentId: string, skillId: string | null): Promise<boolean> {
    if (this.isAdmin) return true;
    const grants = await this.loadGrants();
    return grants.some(
      (g) =>
        g.agentId === agentId &&
        (g.skillId === null || g.skillId === skillId) &&
        (permission === 'VIEW' || g.permission === 'OPERATE'),
    );
  }

  /**
   * Whether the viewer sees the agent itself: admins always, members with any grant on it (a
   * grant limited to one skill still shows the agent, so it can be used with that skill).
   * Callers check the agent's tenant.
   */
  async seesAgent(agentId: string): Promise<boolean> {
    if (this.isAdmin) return true;
    return (await this.loadGrants()).some((g) => g.agentId === agentId);
  }

  /** Agents the viewer can see anything of (null: all of the tenant). */
  async visibleAgentIds(): Promise<string[] | null> {
    if (this.isAdmin) return null;
    return [...new Set((await this.loadGrants()).map((g) => g.agentId))];
  }
}
