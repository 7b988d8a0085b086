import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, OPS, startTestInstance, type TestInstance } from '../../support/harness.js';
import { rest, sealedPayload } from '../../support/command-approvals.js';

// The trigger approval_grant_final (Migration20261203000200_grant_row_final): a command grant that
// has left PENDING is final as a whole row. Checked as the app role, the login Taskbay runs as,
// which holds UPDATE on approval_grant: the trigger, not a missing privilege, refuses.

let t: TestInstance;
let hook: { id: string; email: string; token: string };
let app: pg.Client;

beforeAll(async () => {
  t = await startTestInstance();
  hook = await createMember(t);
  app = new pg.Client({ connectionString: t.appUrl });
  await app.connect();
});

afterAll(async () => {
  await app?.end();
  await t?.stop();
});

const api = (method: string, path: string, token: string, body?: unknown) => rest(t, token, method, path, body);

/** The hook asks for one command; an admin approves it: the grant is PENDING. */
async function approvedCommand() {
  const command = `rm -rf build-${randomBytes(4).toString('hex')}`;
  const payload = sealedPayload(command, { rationale: 'r', verification: 'v' });
  const asked = await api('POST', '/api/command-approvals', hook.token, { agent_id: 'a1b2c3d4', payload });
  expect(asked.status, JSON.stringify(asked.json)).toBe(201);
  const a = asked.json;
  const decided = await t.gql(OPS.approve, { id: a.id, revision: a.revision, digest: a.digest });
  expect(decided.errors, JSON.stringify(decided.errors)).toBeUndefined();
  return a as { approval_id: string; approval_uuid: string };
}

const grantRow = async (commandApprovalId: string) =>
  (await app.query(`select id, status, consumed_at, closed_at, expires_at from approval_grant where command_approval_id = $1`, [commandApprovalId])).rows[0];

/** What the app role's UPDATE of one grant fails with: its SQLSTATE and message, or null when it succeeds (rolled back either way). */
async function appUpdate(set: string, grantId: string): Promise<{ code: string; message: string } | null> {
  await app.query('begin');
  try {
    await app.query(`update approval_grant set ${set} where id = $1`, [grantId]);
    return null;
  } catch (e) {
    const err = e as { code?: string; message: string };
    return { code: err.code ?? '', message: err.message };
  } finally {
    await app.query('rollback');
  }
}

describe('a consumed grant is final as a whole row', () => {
  it('the consume path sets CONSUMED, consumed_at and closed_at; afterwards the app role can rewrite none of them', async () => {
    const a = await approvedCommand();
    const pending = await grantRow(a.approval_uuid);
    expect(pending).toMatchObject({ status: 'PENDING', consumed_at: null, closed_at: null });

    const consumed = await api('POST', `/api/command-approvals/${a.approval_id}/consume`, hook.token);
    expect(consumed.status, JSON.stringify(consumed.json)).toBe(200);
    const row = await grantRow(a.approval_uuid);
    expect(row.status).toBe('CONSUMED');
    expect(row.consumed_at).toBeInstanceOf(Date);
    expect(consumed.json.grant).toMatchObject({ status: 'CONSUMED', consumed_at: row.consumed_at.toISOString() });

    for (const set of [
      `consumed_at = consumed_at + interval '1 hour'`,
      `consumed_at = null`,
      `closed_at = closed_at - interval '1 hour'`,
      `expires_at = expires_at + interval '1 day'`,
      `status = 'PENDING', consumed_at = null, closed_at = null`,
    ]) {
      expect({ set, refused: await appUpdate(set, row.id) }).toEqual({
        set,
        refused: { code: 'P0001', message: `grant ${row.id} is CONSUMED and final` },
      });
    }
    expect(await grantRow(a.approval_uuid)).toEqual(row);
    // The row as it was: the outcome is still recorded against the consume.
    expect((await api('POST', `/api/command-approvals/${a.approval_id}/outcome`, hook.token, { exit_code: 0 })).json.event).toBe('EXECUTED');
  });

  it('a revoked grant is final too; a PENDING grant may still have its expiry moved; what a grant is never changes', async () => {
    const revoked = await approvedCommand();
    expect((await api('POST', `/api/command-approvals/${revoked.approval_id}/revoke`, t.adminToken)).status).toBe(200);
    const r = await grantRow(revoked.approval_uuid);
    expect(r.status).toBe('REVOKED');
    expect(await appUpdate(`closed_at = now() + interval '1 hour'`, r.id)).toEqual({ code: 'P0001', message: `grant ${r.id} is REVOKED and final` });

    const open = await approvedCommand();
    const p = await grantRow(open.approval_uuid);
    expect(await appUpdate(`expires_at = expires_at + interval '1 minute'`, p.id)).toBeNull();
    for (const set of [`created_at = created_at - interval '1 day'`, `tenant_id = gen_random_uuid()`]) {
      expect(await appUpdate(set, p.id)).toMatchObject({ code: 'P0001', message: `grant ${p.id} is immutable` });
    }
  });
});
