import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { EscalationRule } from '../../src/policies/snapshot.js';

// Until admins can define policies (the policies work), a test gives a request an escalation
// rule by writing its frozen policy snapshot (approval.policy) as the superuser right after the
// request opened, as if the policy had been chosen when it opened. The database derives the due
// time from it and tells the sweepers (escalation migration), as it does for a policy written
// at insert.

async function withClient<T>(databaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Sets the escalation rule (and the policy's name and version) of a request's frozen policy. */
export async function setEscalationPolicy(
  databaseUrl: string,
  approvalId: string,
  rule: Partial<EscalationRule> & { afterSeconds: number },
  policy: { name?: string; version?: number } = {},
): Promise<void> {
  const escalation: EscalationRule = { toGroupId: null, toUserId: null, raiseRiskTo: null, ...rule };
  const patch = { policyId: randomUUID(), name: policy.name ?? 'escalating', version: policy.version ?? 1, escalation };
  await withClient(databaseUrl, async (c) => {
    const r = await c.query('update approval set policy = policy || $2::jsonb where id = $1', [approvalId, JSON.stringify(patch)]);
    if (r.rowCount !== 1) throw new Error(`no approval ${approvalId}`);
  });
}

/** A reviewer group of the tenant with these members; returns its id. */
export async function createReviewerGroup(databaseUrl: string, tenantId: string, name: string, memberIds: string[]): Promise<string> {
  const id = randomUUID();
  await withClient(databaseUrl, async (c) => {
    await c.query('begin');
    await c.query('insert into reviewer_group (id, tenant_id, name) values ($1, $2, $3)', [id, tenantId, name]);
    for (const userId of memberIds) {
      await c.query('insert into reviewer_group_member (id, group_id, user_id) values ($1, $2, $3)', [randomUUID(), id, userId]);
    }
    await c.query('commit');
  });
  return id;
}
