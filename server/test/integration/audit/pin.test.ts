import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint } from '../../../src/audit/chain.js';
import { stream } from '../../../src/audit/log.js';
import { runVerification } from '../../../src/audit/verification.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { auditCli, exportToFile as exportFile, publicKeyToFile } from '../../support/audit-cli.js';
import { auditAttacker, dropAuditSnapshot } from '../../support/audit-tamper.js';
import { acknowledgeAuditFailure, createMember, OPS, startTestInstance, type TestInstance, ok, rawId } from '../../support/harness.js';

// Issue 22, finding 1, as it was found: a database superuser sets every event signature of the
// tenant to NULL, deletes its checkpoints and its stored verification, turns a REJECT into an
// APPROVE and re-hashes. Before the audit pin (audit/pin.ts) auditChain, verifyAuditChain,
// Approval.chain and `taskbay audit verify --public-key` all said ok ("0 signed, N legacy
// unsigned"), and the worker then signed a new checkpoint over the forged log. What the pin keeps
// outside the database (which events may be unsigned, the newest checkpoint, the stored
// verification's version) and the failure that stays until an admin acknowledges it are what
// find it now, online and offline.

let t: TestInstance;
let agent: FixtureAgent;
let tenantId: string;
let dir: string;
let publicKeyFile: string;
let attacker: ReturnType<typeof auditAttacker>;
const rejected = { gid: '', stream: '', decidedSeq: 0 };

const CHAIN = `{ auditChain { ok events reason firstBrokenSeq firstBrokenStream signedEvents legacyUnsignedEvents signedCheckpoints failure { id reason } } }`;
const chain = async () => ok(await t.gql(CHAIN)).auditChain;
const approvalChain = async () =>
  ok(await t.gql(`query($id: ID!) { approval(id: $id) { chain { ok reason signedEvents legacyUnsignedEvents } } }`, { id: rejected.gid })).approval.chain;
const tenantCheckpoints = async () => (await t.sql(`select count(*)::int as n from audit_checkpoint where tenant_id = $1`, [tenantId]))[0].n as number;

const cli = (args: string[], env: Record<string, string> = {}) => auditCli(t, dir, args, env);
const exportToFile = (name: string) => exportFile(t, dir, name);

beforeAll(async () => {
  agent = await startFixtureAgent();
  // No worker: the tests run each verification and checkpoint themselves, in the order they say.
  t = await startTestInstance({ worker: false });
  dir = mkdtempSync(join(tmpdir(), 'taskbay-audit-pin-'));
  tenantId = (await t.sql(`select tenant_id from app_user where email = 'admin@localhost'`))[0].tenant_id;
  attacker = auditAttacker(t.databaseUrl, tenantId);

  const agentGid = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  const task = ok(await t.gql(OPS.startTask, { agentId: agentGid, text: 'approve' })).startTask;
  const a = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges[0].node;
  expect(ok(await t.gql(OPS.reject, { id: a.id, revision: a.revision, digest: a.digest })).reject.outcome).toBe('REJECT');
  await createMember(t);
  expect(await writeCheckpoint(t.instance.orm.em.fork())).toHaveLength(1);
  expect((await runVerification(t.instance.orm.em.fork(), tenantId))?.ok).toBe(true);

  rejected.gid = a.id;
  rejected.stream = stream.approval(rawId(a.id));
  rejected.decidedSeq = Number((await t.sql(`select seq from audit_event where stream = $1 and type = 'approval.decided'`, [rejected.stream]))[0].seq);
  publicKeyFile = await publicKeyToFile(t, dir);
  expect(await chain()).toMatchObject({ ok: true, legacyUnsignedEvents: 0, signedCheckpoints: 1, failure: null });
  await attacker.snapshot();
});

afterAll(async () => {
  await dropAuditSnapshot(t);
  await t?.stop();
  await agent?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a stripped log never verifies (finding 1)', () => {
  it('signatures stripped, checkpoints and stored verification deleted, REJECT turned APPROVE and re-hashed: auditChain, verifyAuditChain, Approval.chain and `taskbay audit verify` refuse it, and no checkpoint is signed over it', async () => {
    const earlier = await exportToFile('before.json');
    const [{ before }] = await t.sql(`select count(*)::int as before from audit_event where tenant_id = $1`, [tenantId]);
    await attacker.asSuperuser(async (c) => {
      await c.query('update audit_event set sig = null, key_id = null where tenant_id = $1', [tenantId]);
      await c.query('delete from audit_checkpoint where tenant_id = $1', [tenantId]);
      await c.query('delete from audit_verification where tenant_id = $1', [tenantId]);
      const { rowCount } = await c.query(
        `update audit_event set data = data || '{"outcome":"APPROVE","status":"APPROVED"}'::jsonb where seq = $1 and data->>'outcome' = 'REJECT'`,
        [rejected.decidedSeq],
      );
      expect(rowCount).toBe(1);
      await attacker.rehashStream(c, rejected.stream);
    });
    // Every link and hash holds: without signatures, or with them gone, this is what verified.
    expect(await attacker.linksAndHashesHold()).toBe(true);

    // Online: every event above the pinned legacy horizon (none here: the database began signed) must be signed.
    const online = await chain();
    expect(online).toMatchObject({ ok: false, signedEvents: 0, legacyUnsignedEvents: 0 });
    expect(online.reason).toMatch(/^event \d+ of \S+ is not signed, but every event since 1 must be$/);
    expect(online.failure.reason).toBe(online.reason);

    // verifyAuditChain: the worker's full verification says the same, and names the deleted verification and checkpoint.
    expect(ok(await t.gql(`mutation { verifyAuditChain { ok } }`)).verifyAuditChain.ok).toBe(false);
    const full = await runVerification(t.instance.orm.em.fork(), tenantId, { full: true });
    expect(full?.ok).toBe(false);
    const all = ok(await t.gql(`{ auditChain { ok fullVerification { state } } }`)).auditChain;
    expect(all.ok).toBe(false);

    // The approval's own page.
    const page = await approvalChain();
    expect(page).toMatchObject({ ok: false, signedEvents: 0, legacyUnsignedEvents: 0 });
    expect(page.reason).toMatch(/is not signed, but every event since 1 must be/);

    // The worker signs no checkpoint over it.
    expect(await writeCheckpoint(t.instance.orm.em.fork())).toEqual([]);
    expect(await tenantCheckpoints()).toBe(0);

    // Offline: the export the server makes now carries its pin; with it the deleted checkpoint is named.
    const now = await exportToFile('stripped.json');
    const offline = await cli(['verify', now, '--public-key', publicKeyFile]);
    expect(offline.code, offline.stdout + offline.stderr).toBe(1);
    expect(offline.stdout).toMatch(/^first bad: stream \S+ seq \d+: event \d+ of \S+ is not signed, but every event since 1 must be/);
    expect(offline.stdout).toMatch(/also: checkpoint \d+: the export's pin: checkpoint \d+, pinned outside the database .*, is missing/);
    // Its pin stripped from the file (a @2 export without one), or the file passed off as an @1 export: still refused.
    const doc = JSON.parse(readFileSync(now, 'utf8'));
    writeFileSync(join(dir, 'no-pin.json'), JSON.stringify({ ...doc, pin: undefined }));
    expect((await cli(['verify', join(dir, 'no-pin.json'), '--public-key', publicKeyFile])).code).toBe(64);
    writeFileSync(join(dir, 'as-v1.json'), JSON.stringify({ ...doc, format: 'taskbay.audit-export@1', pin: undefined }));
    const v1 = await cli(['verify', join(dir, 'as-v1.json'), '--public-key', publicKeyFile]);
    expect(v1.code, v1.stdout).toBe(1);
    expect(v1.stdout).toMatch(/is not signed, but every event since 1 must be/);
    expect(v1.stdout).toMatch(/no pin: every event must be signed; .*--allow-unsigned/);
    // ... and against an earlier export kept elsewhere (--pin), the checkpoint it pinned is missing.
    const pinned = await cli(['verify', join(dir, 'as-v1.json'), '--public-key', publicKeyFile, '--pin', earlier, '--allow-unsigned']);
    expect(pinned.code, pinned.stdout).toBe(1);
    expect(pinned.stdout).toMatch(
      new RegExp(`checkpoint \\d+: ${earlier.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: checkpoint \\d+, pinned outside the database .*, is missing`),
    );
    expect(JSON.parse(readFileSync(earlier, 'utf8')).events).toHaveLength(before);

    await attacker.restore();
    // The rows are back, but the verification record was deleted: a full verification stores a new one, numbered past the pin.
    expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });
    expect(await writeCheckpoint(t.instance.orm.em.fork())).toHaveLength(1);
  });
});

describe('what the pin finds', () => {
  it('a cut tail (the newest checkpoint and the events after it deleted) is found against the pinned checkpoint, online and in the export', async () => {
    await createMember(t);
    const [cp] = await writeCheckpoint(t.instance.orm.em.fork());
    expect(cp).toBeDefined();
    const pinnedSeq = cp!.seq;
    expect((await runVerification(t.instance.orm.em.fork(), tenantId))?.ok).toBe(true);
    const [{ since }] = await t.sql(
      `select coalesce(max((h.value->>'seq')::bigint), 0)::int as since from audit_checkpoint c, jsonb_each(c.heads) h where c.seq < $1 and c.tenant_id = $2`,
      [pinnedSeq, tenantId],
    );
    await attacker.snapshot();
    await attacker.asSuperuser(async (c) => {
      await c.query('delete from audit_checkpoint where seq >= $1 and tenant_id = $2', [pinnedSeq, tenantId]);
      await c.query('delete from audit_event where seq > $1 and tenant_id = $2', [since, tenantId]);
      // The stored verification put back to what it was before the cut would be found too; here it is left.
    });
    const online = await chain();
    expect(online.ok).toBe(false);
    expect(online.reason).toMatch(new RegExp(`checkpoint ${pinnedSeq}, pinned outside the database .*, is missing`));
    const offline = await cli(['verify', await exportToFile('cut.json'), '--public-key', publicKeyFile]);
    expect(offline.code, offline.stdout).toBe(1);
    expect(offline.stdout).toMatch(new RegExp(`the export's pin: checkpoint ${pinnedSeq}, pinned outside the database .*, is missing`));
    await attacker.restore();
    expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });
  });

  it('a deleted stored verification, or an older signed one put back, is found', async () => {
    await createMember(t);
    expect((await runVerification(t.instance.orm.em.fork(), tenantId))?.ok).toBe(true);
    const [older] = await t.sql(`select * from audit_verification where tenant_id = $1`, [tenantId]);
    await createMember(t);
    expect((await runVerification(t.instance.orm.em.fork(), tenantId))?.ok).toBe(true);

    // The older row, genuinely signed, put back.
    await t.sql(
      `update audit_verification set version = $2, verified_seq = $3, verified_checkpoint_seq = $4, state = $5::jsonb, checked_at = $6, sig = $7 where tenant_id = $1`,
      [tenantId, older.version, older.verified_seq, older.verified_checkpoint_seq, JSON.stringify(older.state), older.checked_at, older.sig],
    );
    const rolledBack = await chain();
    expect(rolledBack.ok).toBe(false);
    expect(rolledBack.reason).toMatch(new RegExp(`the stored verification of the log was replaced by an older one \\(version ${older.version}\\)`));
    expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });

    await t.sql(`delete from audit_verification where tenant_id = $1`, [tenantId]);
    const deleted = await chain();
    expect(deleted.ok).toBe(false);
    expect(deleted.reason).toMatch(/the stored verification of the log was deleted; the pin outside the database names version \d+/);
    expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });
  });
});

describe('the pin file', () => {
  it('a pin edited on disk (an older checkpoint written in) does not hold, and says so', async () => {
    const file = join(t.config.auditPinDir, `tenant-${tenantId}.json`);
    const original = readFileSync(file, 'utf8');
    const doc = JSON.parse(original);
    expect(doc.pin.checkpoint.seq).toBeGreaterThan(1);
    writeFileSync(file, JSON.stringify({ ...doc, pin: { ...doc.pin, checkpoint: { ...doc.pin.checkpoint, seq: 1 } } }));
    try {
      const r = await chain();
      expect(r.ok).toBe(false);
      expect(r.reason).toMatch(/^the audit pin .* does not hold: the audit pin has a signature that does not verify$/);
    } finally {
      writeFileSync(file, original);
    }
    expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });
  });
});

describe('a failed verification stays failed until an admin acknowledges it', () => {
  it('cutting the rewritten events after the failure was found does not make the log look sound; only the acknowledgement does, and it is a signed event', async () => {
    const member = await createMember(t);
    const [{ seq }] = await t.sql(`select max(seq)::int as seq from audit_event where tenant_id = $1`, [tenantId]);
    await attacker.asSuperuser((c) => c.query(`update audit_event set data = data || '{"role":"ADMIN"}'::jsonb where seq = $1`, [seq]));
    const found = await chain();
    expect(found).toMatchObject({ ok: false, firstBrokenSeq: seq });
    const failureId = found.failure.id;

    // The rewritten event removed: what remains verifies, and the failure still stands.
    await attacker.asSuperuser((c) => c.query(`delete from audit_event where seq = $1`, [seq]));
    await runVerification(t.instance.orm.em.fork(), tenantId, { full: true });
    const after = await chain();
    expect(after.ok).toBe(false);
    expect(after.failure.id).toBe(failureId);
    expect(after.reason).toMatch(/stays failed until an admin acknowledges it/);
    // The failure row is append-only for the app role too (refused by the privileges, not only the trigger).
    const app = await import('pg').then(({ default: pg }) => new pg.Client({ connectionString: t.appUrl }));
    await app.connect();
    try {
      await expect(app.query('delete from audit_failure')).rejects.toThrow(/permission denied/);
    } finally {
      await app.end();
    }
    // Deleting it as the superuser does not erase it either: the pin outside the database holds it.
    await attacker.asSuperuser(async (c) => {
      await c.query('alter table audit_failure disable trigger all');
      await c.query('delete from audit_failure where tenant_id = $1', [tenantId]);
      await c.query('alter table audit_failure enable trigger all');
    });
    expect((await chain()).failure).toMatchObject({ id: failureId });

    // A member cannot acknowledge; an admin must name the standing failure.
    const refused = await t.gql(`mutation($id: ID!) { acknowledgeAuditFailure(failureId: $id, note: "x") { ok } }`, { id: failureId }, member.token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const wrong = await t.gql(`mutation { acknowledgeAuditFailure(failureId: "00000000-0000-4000-8000-000000000000", note: "x") { ok } }`);
    expect(wrong.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const done = ok(
      await t.gql(`mutation($id: ID!) { acknowledgeAuditFailure(failureId: $id, note: "the row was restored from the backup") { ok failure { id } } }`, {
        id: failureId,
      }),
    ).acknowledgeAuditFailure;
    expect(done).toEqual({ ok: true, failure: null });
    const [ack] = await t.sql(`select actor_type, data, sig from audit_event where type = 'audit.failure_acknowledged' and data->>'failureId' = $1`, [
      failureId,
    ]);
    expect(ack).toMatchObject({ actor_type: 'user', data: { failureId, note: 'the row was restored from the backup' } });
    expect(ack.sig).not.toBeNull();
  });

  it("an acknowledgement written behind Taskbay's back (unsigned) acknowledges nothing", async () => {
    const [{ seq }] = await t.sql(`select max(seq)::int as seq from audit_event where tenant_id = $1`, [tenantId]);
    await attacker.snapshot();
    await attacker.asSuperuser((c) => c.query(`update audit_event set data = data || '{"forged":true}'::jsonb where seq = $1`, [seq]));
    const found = await chain();
    expect(found.ok).toBe(false);
    const failureId = found.failure.id;
    await attacker.restore();
    await t.sql(
      `insert into audit_event (id, tenant_id, stream, type, actor_type, actor_id, at, data, prev_hash, hash)
       select gen_random_uuid(), $1, 'forged:' || gen_random_uuid(), 'audit.failure_acknowledged', 'user', null, now(), jsonb_build_object('failureId', $2::text), null, md5(random()::text)`,
      [tenantId, failureId],
    );
    const still = await chain();
    expect(still.failure).toMatchObject({ id: failureId });
  });
});
