import { createPublicKey, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint } from '../../../src/audit/chain.js';
import { parseExport } from '../../../src/audit/export.js';
import { eventHash, stream } from '../../../src/audit/log.js';
import { runVerification } from '../../../src/audit/verification.js';
import { trustedKey } from '../../../src/audit/signing.js';
import { checkpointHash, verifyAudit } from '../../../src/audit/verify.js';
import { auditAttacker } from '../../support/audit-tamper.js';
import { acknowledgeAuditFailure, createMember, createTestDatabase, startTestInstance, type TestInstance } from '../../support/harness.js';

// A database from before signed audit: unsigned events and a global unsigned checkpoint (naming
// two tenants' streams). After the upgrade they still verify and are counted as legacy; new
// events are signed and chain onto them; the first per-tenant checkpoint signs every head, the
// legacy ones included; and nothing new can pass as legacy.

let t: TestInstance;
const tenantId = randomUUID();
const otherTenant = randomUUID();
const tenantStream = stream.tenant(tenantId);
const legacySeqs: number[] = [];
let attacker: ReturnType<typeof auditAttacker>;

const CHAIN = `{ auditChain { ok events firstBrokenSeq firstBrokenStream reason signedEvents legacyUnsignedEvents
  signedCheckpoints legacyUnsignedCheckpoints signingKey { keyId publicKeyPem } } }`;
/** A full verification first: the checkpoint verified the log up to it, and auditChain continues from there. */
async function verifiedNow() {
  await runVerification(t.instance.orm.em.fork(), tenantId, { full: true });
  return chain();
}

async function chain() {
  const r = await t.gql(CHAIN);
  expect(r.errors).toBeUndefined();
  return r.data.auditChain;
}

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    // What an older Taskbay left: the default tenant and its admin, and unsigned events written as it wrote them.
    const adminId = randomUUID();
    await c.query(`insert into tenant (id, name) values ($1, 'default')`, [tenantId]);
    await c.query(`insert into app_user (id, tenant_id, email, name, role) values ($1, $2, 'admin@localhost', 'Administrator', 'ADMIN')`, [adminId, tenantId]);
    const heads: Record<string, string> = {};
    const legacy = async (tenant: string, name: string, type: string, data: Record<string, unknown>) => {
      const base = {
        id: randomUUID(),
        tenantId: tenant,
        stream: name,
        type,
        actorType: 'system' as const,
        actorId: null,
        at: new Date(Date.now() - 3_600_000),
        data,
        prevHash: heads[`${tenant}/${name}`] ?? null,
      };
      const hash = eventHash(base);
      const { rows } = await c.query(
        `insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash)
         values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10) returning seq`,
        [base.id, tenant, name, type, base.actorType, null, base.at, JSON.stringify(data), base.prevHash, hash],
      );
      heads[`${tenant}/${name}`] = hash;
      return Number(rows[0].seq);
    };
    legacySeqs.push(await legacy(tenantId, tenantStream, 'user.created', { userId: adminId, email: 'admin@localhost', role: 'ADMIN', bootstrap: true }));
    legacySeqs.push(await legacy(tenantId, tenantStream, 'legacy.note', { n: 1 }));
    await legacy(otherTenant, stream.tenant(otherTenant), 'user.created', { n: 2 });
    const at = new Date(Date.now() - 1_800_000);
    const hash = checkpointHash({ tenantId: null, at, heads, prevHash: null, firstSignedEventSeq: null });
    await c.query(`insert into audit_checkpoint (at, heads, prev_hash, hash) values ($1, $2::jsonb, null, $3)`, [at, JSON.stringify(heads), hash]);
  } finally {
    await c.end();
  }
  // The harness's admin token is added to the existing admin (no new event).
  t = await startTestInstance({ databaseUrl, worker: false });
  attacker = auditAttacker(databaseUrl, tenantId);
});

afterAll(async () => {
  await t?.stop();
});

describe('audit log from before signing', () => {
  it('verifies as before, reporting what it accepted unsigned', async () => {
    expect(await chain()).toMatchObject({
      ok: true,
      events: 2,
      signedEvents: 0,
      legacyUnsignedEvents: 2,
      signedCheckpoints: 0,
      legacyUnsignedCheckpoints: 1,
      reason: null,
    });
  });

  it('new events are signed and chain onto the legacy ones; the first per-tenant checkpoint signs every head', async () => {
    await createMember(t); // user.created + token.created, signed, in the tenant stream
    const rows = await t.sql(`select seq, prev_hash, hash, sig from audit_event where stream = $1 order by seq`, [tenantStream]);
    expect(rows.map((r) => r.sig === null)).toEqual([true, true, false, false]);
    expect(rows[2].prev_hash).toBe(rows[1].hash);

    const written = await writeCheckpoint(t.instance.orm.em.fork());
    expect(written.map((w) => w.tenantId).sort()).toEqual([tenantId, otherTenant].sort());
    const [cp] = await t.sql(`select heads, first_signed_event_seq from audit_checkpoint where tenant_id = $1`, [tenantId]);
    expect(cp.heads).toEqual({ [tenantStream]: { seq: Number(rows[3].seq), hash: rows[3].hash } });
    expect(Number(cp.first_signed_event_seq)).toBe(Number(rows[2].seq));

    expect(await chain()).toMatchObject({ ok: true, events: 4, signedEvents: 2, legacyUnsignedEvents: 2, signedCheckpoints: 1, legacyUnsignedCheckpoints: 1 });
    await attacker.snapshot();
  });

  it('the export leaves out the global legacy checkpoint (it names another tenant) and verifies offline', async () => {
    const res = await fetch(`${t.instance.url}/api/audit/export`, { headers: { authorization: `Bearer ${t.adminToken}` } });
    const text = await res.text();
    expect(text).not.toContain(otherTenant);
    const doc = parseExport(JSON.parse(text));
    expect(JSON.parse(text).legacyCheckpointsOmitted).toBe(1);
    const signing = (await chain()).signingKey;
    const r = verifyAudit({ tenantId, events: doc.events, checkpoints: doc.checkpoints, trusted: [trustedKey(createPublicKey(signing.publicKeyPem))] });
    expect(r).toMatchObject({ ok: true, events: 4, legacyUnsignedEvents: 2, signedEvents: 2, signedCheckpoints: 1 });
  });

  it('stripping every signature does not turn new events into legacy ones: the signed checkpoint recorded where signing began', async () => {
    const [first] = await t.sql(`select min(seq)::int as seq from audit_event where tenant_id = $1 and sig is not null`, [tenantId]);
    await attacker.asSuperuser((c) => c.query('update audit_event set sig = null, key_id = null where tenant_id = $1', [tenantId]));
    try {
      expect(await attacker.linksAndHashesHold()).toBe(true);
      const r = await verifiedNow();
      expect(r).toMatchObject({ ok: false, firstBrokenStream: tenantStream, firstBrokenSeq: first.seq });
      expect(r.reason).toMatch(/is not signed, but every event since \d+ must be/);
    } finally {
      await attacker.restore();
    }
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });

  it('a rewritten legacy event is found: the signed event after it no longer verifies, and both checkpoints lost its head', async () => {
    await attacker.asSuperuser(async (c) => {
      await c.query(`update audit_event set data = '{"n": 99}'::jsonb where seq = $1`, [legacySeqs[1]]);
      await attacker.rehashStream(c, tenantStream);
    });
    try {
      const r = await verifiedNow();
      const [firstSigned] = await t.sql(`select min(seq)::int as seq from audit_event where tenant_id = $1 and sig is not null`, [tenantId]);
      expect(r).toMatchObject({ ok: false, firstBrokenStream: tenantStream, firstBrokenSeq: firstSigned.seq });
      expect(r.reason).toMatch(/has a signature that does not verify/);
    } finally {
      await attacker.restore();
    }
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });

  it('an unsigned global checkpoint written after signed ones is refused', async () => {
    const at = new Date();
    const [last] = await t.sql(`select hash from audit_checkpoint where tenant_id is null order by seq desc limit 1`);
    const heads = {};
    await t.sql(`insert into audit_checkpoint (at, heads, prev_hash, hash) values ($1, $2::jsonb, $3, $4)`, [
      at,
      JSON.stringify(heads),
      last.hash,
      checkpointHash({ tenantId: null, at, heads, prevHash: last.hash, firstSignedEventSeq: null }),
    ]);
    try {
      expect((await chain()).reason).toMatch(/^checkpoint \d+ is an unsigned global checkpoint after signed ones$/);
    } finally {
      await attacker.restore();
    }
    expect((await acknowledgeAuditFailure(t, tenantId)).ok).toBe(true);
  });
});
