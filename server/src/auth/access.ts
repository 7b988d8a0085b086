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

export class Access {
  private grants: Promise<GrantScope[]> | null = null;
  constructor(
    private readonly em: EntityManager,
    readonly viewer: Viewer,
  ) {}

  get isAdmin(): boolean {
    return this.viewer.role === 'ADMIN';
  }

  /** The viewer's grants, loaded once per request. */
  loadGrants(): Promise<GrantScope[]> {
    this.grants ??= this.em
      .find(AgentGrant, { userId: this.viewer.userId, tenantId: this.viewer.tenantId })
      .then((gs) => gs.map((g) => ({ agentId: g.agentId, skillId: g.skillId ?? null, permission: g.permission })));
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
