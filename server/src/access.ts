import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from './db/sql.js';
import { DomainError } from './errors.js';
import type { Permission } from './auth/entities.js';

// Who may see and decide what. Admins hold OPERATE on every agent of their tenant; members
// need a grant, optionally limited to one skill (which then reaches only tasks of that skill).

export interface Viewer {
  userId: string;
  tenantId: string;
  role: 'ADMIN' | 'MEMBER';
  email: string;
}

/** Who is an admin: the one rule every admin-only path asks, through Access or, without one, here. */
export function isAdminViewer(viewer: Viewer): boolean {
  return viewer.role === 'ADMIN';
}

/** Throws FORBIDDEN ("only an admin <does>") unless the viewer is an admin: what only admins manage. */
export function requireAdmin(access: Access, does: string): void {
  if (!access.isAdmin) throw new DomainError('FORBIDDEN', `only an admin ${does}`);
}

export interface GrantScope {
  agentId: string;
  skillId: string | null;
  permission: Permission;
}

/**
 * The viewer's grants in their tenant, as scopes (one query; also batched for subscribers,
 * approvals/event-view.ts, thousands of users at once). Plain rows, not entities: nothing here
 * is changed, and hydrating thousands of entities per event was most of the batch's cost.
 */
export async function findGrants(em: EntityManager, tenantId: string, userIds: readonly string[]): Promise<Map<string, GrantScope[]>> {
  const rows = await sql<{ user_id: string; agent_id: string; skill_id: string | null; permission: Permission }>(
    em,
    'select user_id, agent_id, skill_id, permission from agent_grant where tenant_id = ? and user_id = any(?::uuid[])',
    [tenantId, `{${userIds.join(',')}}`],
  );
  const byUser = new Map<string, GrantScope[]>(userIds.map((u) => [u, []]));
  for (const g of rows) byUser.get(g.user_id)?.push({ agentId: g.agent_id, skillId: g.skill_id, permission: g.permission });
  return byUser;
}

/** Whether `grants` give `permission` on the agent (and skill): a grant on the whole agent or on that skill; OPERATE includes VIEW. */
function holds(grants: GrantScope[], permission: Permission, agentId: string, skillId: string | null): boolean {
  for (const g of grants) {
    if (g.agentId === agentId && (g.skillId === null || g.skillId === skillId) && (permission === 'VIEW' || g.permission === 'OPERATE')) return true;
  }
  return false;
}

/** A check answered at once when what it reads is loaded, else once it is (callers await either). */
export type Check = boolean | Promise<boolean>;

export class Access {
  private grants: Promise<GrantScope[]> | null = null;
  /** The grants once loaded: checks made after that answer synchronously (subscription fan-out). */
  private loaded: GrantScope[] | null = null;
  /** `grantSource`: where the grants come from when asked (default: one query through em). */
  constructor(
    private readonly em: EntityManager,
    readonly viewer: Viewer,
    private readonly grantSource?: () => Promise<GrantScope[]>,
  ) {}

  get isAdmin(): boolean {
    return isAdminViewer(this.viewer);
  }

  /**
   * Whether `userId` is the viewer. Asked as a question, not by reading the viewer's id, so a
   * shared subscription result depends on the answer only (graphql/viewer-facts.ts).
   */
  isViewer(userId: string | null | undefined): boolean {
    return !!userId && userId === this.viewer.userId;
  }

  /** Grants loaded elsewhere for this viewer, with many others' (approvals/event-view.ts): checks answer from them at once. */
  useGrants(grants: GrantScope[]): void {
    this.loaded = grants;
    this.grants ??= Promise.resolve(grants);
  }

  /** The viewer's grants, loaded once per request. */
  loadGrants(): Promise<GrantScope[]> {
    this.grants ??= (
      this.grantSource ? this.grantSource() : findGrants(this.em, this.viewer.tenantId, [this.viewer.userId]).then((m) => m.get(this.viewer.userId)!)
    ).then((g) => (this.loaded = g));
    return this.grants;
  }

  has(permission: Permission, agentId: string, skillId: string | null): Check {
    if (this.isAdmin) return true;
    if (this.loaded) return holds(this.loaded, permission, agentId, skillId);
    return this.loadGrants().then((grants) => holds(grants, permission, agentId, skillId));
  }

  /**
   * Whether the viewer sees the agent itself: admins always, members with any grant on it (a
   * grant limited to one skill still shows the agent, so it can be used with that skill).
   * Callers check the agent's tenant.
   */
  seesAgent(agentId: string): Check {
    if (this.isAdmin) return true;
    if (this.loaded) return this.loaded.some((g) => g.agentId === agentId);
    return this.loadGrants().then((grants) => grants.some((g) => g.agentId === agentId));
  }

  /** Agents the viewer can see anything of (null: all of the tenant). */
  async visibleAgentIds(): Promise<string[] | null> {
    if (this.isAdmin) return null;
    return [...new Set((await this.loadGrants()).map((g) => g.agentId))];
  }
}
