import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint } from '../../../src/audit/chain.js';
import { stream } from '../../../src/audit/log.js';
import { auditAttacker } from '../../support/audit-tamper.js';
import { acknowledgeAuditFailure, OPS, startTestInstance, type TestInstance, rawId } from '../../support/harness.js';

// Issue 11: the approval page verifies only its approval's stream (Approval.chain), with the
// rules of the tenant-wide auditChain (audit/verify.ts): its events' links, hashes and
// signatures, and the signed checkpoints that record its head. A problem in another stream
// does not show on it; one in its own stream does, as auditChain reports it.

let t: TestInstance;
let attacker: ReturnType<typeof auditAttacker>;
let tenantId: string;

const CREATE = `mutation($title: String!) { createApproval(input: { title: $title, action: { kind: "send_message", text: "x" } }) { id } }`;
const CHAIN = `query($id: ID!) { approval(id: $id) { chain { ok events firstBrokenSeq firstBrokenStream reason signedEvents signedCheckpoints } } }`;

beforeAll(async () => {
  t = await startTestInstance({ worker: false, env: { TASKBAY_CHECKPOINT_INTERVAL: '86400' } });
  const [{ tenant_id }] = await t.sql(`select tenant_id from app_user limit 1`);
  tenantId = tenant_id;
  attacker = auditAttacker(t.databaseUrl, tenant_id);
});

afterAll(async () => {
  await t?.stop();
});

async function create(title: string): Promise<{ id: string; stream: string; seq: number; data: unknown }> {
  const r = await t.gql(CREATE, { title });
  expect(r.errors).toBeUndefined();
  const id = r.data.createApproval.id as string;
  const name = stream.approval(rawId(id));
  const [row] = await t.sql(`select seq, data from audit_event where stream = $1`, [name]);
  return { id, stream: name, seq: Number(row.seq), data: row.data };
}

async function chainOf(id: string) {
  const r = await t.gql(CHAIN, { id });
  expect(r.errors).toBeUndefined();
  return r.data.approval.chain;
}

async function tenantChain() {
  const r = await t.gql(OPS.auditChain);
  expect(r.errors).toBeUndefined();
  return r.data.auditChain;
}

describe('Approval.chain', () => {
  it("verifies the approval's own stream and the checkpoint recording it, and nothing else of the tenant's log", async () => {
    const a = await create('a');
    const b = await create('b');
    expect(await writeCheckpoint(t.instance.orm.em.fork())).toHaveLength(1);
    expect(await chainOf(a.id)).toMatchObject({ ok: true, events: 1, signedEvents: 1, signedCheckpoints: 1, firstBrokenSeq: null });

    // Another stream's event changed (data rewritten, re-hashed, its signature left as it was).
    await attacker.asSuperuser(async (c) => {
      await c.query(`update audit_event set data = data || '{"title":"forged"}' where seq = $1`, [b.seq]);
      await attacker.rehashStream(c, b.stream);
    });
    expect((await chainOf(a.id)).ok).toBe(true);
    expect(await chainOf(b.id)).toMatchObject({ ok: false, firstBrokenSeq: b.seq, firstBrokenStream: b.stream });
    expect(await tenantChain()).toMatchObject({ ok: false, firstBrokenSeq: b.seq });

    // While the tenant's log does not verify, no checkpoint is signed over it (b's head changed).
    expect(await writeCheckpoint(t.instance.orm.em.fork())).toEqual([]);
    // b put back as it was: the log verifies again once the failure is acknowledged, and checkpoints resume.
    await attacker.asSuperuser(async (c) => {
      await c.query(`update audit_event set data = $2::jsonb where seq = $1`, [b.seq, JSON.stringify(b.data)]);
      await attacker.rehashStream(c, b.stream);
    });
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });

  it('a cut stream is found through the checkpoint that recorded its head', async () => {
    const c = await create('c');
    await writeCheckpoint(t.instance.orm.em.fork());
    await attacker.asSuperuser((db) => db.query(`delete from audit_event where stream = $1`, [c.stream]));
    const chain = await chainOf(c.id);
    expect(chain).toMatchObject({ ok: false, events: 0, firstBrokenStream: c.stream });
    expect(chain.reason).toMatch(/lost events recorded by checkpoint/);
  });

  it("an unsigned event after the tenant's first signed one is refused, though its stream holds no signed event", async () => {
    await writeCheckpoint(t.instance.orm.em.fork()); // records the tenant's first signed event
    const d = await create('d');
    await attacker.asSuperuser((db) => db.query(`update audit_event set sig = null, key_id = null where seq = $1`, [d.seq]));
    const chain = await chainOf(d.id);
    expect(chain).toMatchObject({ ok: false, firstBrokenSeq: d.seq });
    expect(chain.reason).toMatch(/is not signed/);
  });
});
