import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PolicySnapshot, QuorumRule } from '../../src/policies/snapshot.js';

// Test support for quorum tests until approval policies can be defined (the "policies" helper's
// work: policy admin + CEL choosing, which fills approval.policy when a request opens). Until
// then a test gives a request its policy by writing its frozen snapshot (approval.policy) as
// the superuser right after opening it, and creates reviewer groups with SQL. Once policies are
// merged, swap these for a real policy (and group admin) created through GraphQL before opening.

export type PolicyPatch = Partial<Omit<PolicySnapshot, 'quorum'>> & { quorum?: Partial<QuorumRule> };

async function withClient<T>(databaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Merges `patch` into the policy snapshot of a PENDING request (approvalId: the row's uuid). */
export async function setPolicySnapshot(databaseUrl: string, approvalId: string, patch: PolicyPatch): Promise<PolicySnapshot> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ policy: PolicySnapshot }>(`select policy from approval where id = $1 and status = 'PENDING'`, [approvalId]);
    if (!rows[0]) throw new Error(`no PENDING approval ${approvalId}`);
    const current = rows[0].policy;
    const next: PolicySnapshot = { ...current, ...patch, quorum: { ...current.quorum, ...patch.quorum } } as PolicySnapshot;
    await c.query('update approval set policy = $2::jsonb where id = $1', [approvalId, JSON.stringify(next)]);
    return next;
  });
}

/** A reviewer group of the users' tenant with these members (user ids: raw uuids); returns its id. */
export async function createReviewerGroup(databaseUrl: string, name: string, userIds: string[]): Promise<string> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ tenant_id: string }>('select tenant_id from app_user where id = $1', [userIds[0]]);
    if (!rows[0]) throw new Error(`no user ${userIds[0]}`);
    const id = randomUUID();
    await c.query('insert into reviewer_group (id, tenant_id, name) values ($1, $2, $3)', [id, rows[0].tenant_id, name]);
    for (const u of userIds) await c.query('insert into reviewer_group_member (id, group_id, user_id) values ($1, $2, $3)', [randomUUID(), id, u]);
    return id;
  });
}

/** Removes a user from a reviewer group. */
export async function removeFromGroup(databaseUrl: string, groupId: string, userId: string): Promise<void> {
  await withClient(databaseUrl, (c) => c.query('delete from reviewer_group_member where group_id = $1 and user_id = $2', [groupId, userId]));
}
