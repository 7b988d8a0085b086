import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint } from '../../../src/audit/chain.js';
import { appendEvents, stream } from '../../../src/audit/log.js';
import { auditSigner } from '../../../src/audit/signing.js';
import { runVerification } from '../../../src/audit/verification.js';
import { startFixtureAgent, type FixtureAgent } from '../../../src/fixture-agent/server.js';
import { auditCli, exportToFile as exportFile, publicKeyToFile } from '../../support/audit-cli.js';
import { tenantEventIn } from '../../support/audit-events.js';
import { auditAttacker, dropAuditSnapshot } from '../../support/audit-tamper.js';
import { acknowledgeAuditFailure, createMember, OPS, startTestInstance, TEST_AUDIT_KEY, type TestInstance, ok, rawId } from '../../support/harness.js';

// The finding: "The app's login is a superuser that owns the audit tables; with DISABLE TRIGGER
// and re-hashing of one event and six checkpoints, auditChain reported ok: true over a REJECT
// turned into APPROVE." Here the same attacker (full database access, triggers off, the
// product's own hash functions) rewrites events and checkpoints so that every link and hash
// holds again; the signatures, made by a key outside the database, still name what changed:
// online (auditChain) and offline (`taskbay audit verify` on an export, the real CLI).

let t: TestInstance;
let agent: FixtureAgent;
let tenantId: string;
let dir: string;
/** The trust anchor: the PEM from GET /api/audit/public-key?format=pem, kept in a file. */
let publicKeyFile: string;
let agentGid: string;
/** The rejected approval of the finding. */
const rejected = { id: '', stream: '', decidedSeq: 0 };

const CHAIN = `{ auditChain { ok events firstBrokenSeq firstBrokenStream reason signedEvents legacyUnsignedEvents
  signedCheckpoints legacyUnsignedCheckpoints signingKey { algorithm keyId publicKeyPem } } }`;
async function chain() {
  return ok(await t.gql(CHAIN)).auditChain;
}

/**
 * What finds a rewrite of what was verified before (each checkpoint verified the log up to it,
 * and auditChain continues from there): a full verification, then auditChain.
 */
async function verifiedNow() {
  await runVerification(t.instance.orm.em.fork(), tenantId, { full: true });
  return chain();
}

async function checkpoint() {
  const written = await writeCheckpoint(t.instance.orm.em.fork());
  expect(written.length).toBeGreaterThan(0);
}

const cli = (args: string[], env: Record<string, string> = {}) => auditCli(t, dir, args, env);
const exportToFile = (name: string) => exportFile(t, dir, name);

// The attacker (test/support/audit-tamper.ts), bound in beforeAll.
let attacker: ReturnType<typeof auditAttacker>;

/**
 * Puts both audit tables back as they were before a tampering test: the log verifies again, and
 * once an admin acknowledges the failure found meanwhile, auditChain says ok.
 */
async function restore() {
  await attacker.restore();
  expect(await acknowledgeAuditFailure(t, tenantId)).toEqual({ ok: true, reason: null });
  expect(await chain()).toMatchObject({ ok: true, firstBrokenSeq: null, reason: null });
}

/** The finding's rewrite: the decision says APPROVE, and everything after it re-hashed. */
async function rejectBecomesApprove(c: pg.Client, opts: { stripSignatures?: boolean } = {}) {
  const { rowCount } = await c.query(
    `update audit_event set data = data || '{"outcome":"APPROVE","status":"APPROVED"}'::jsonb where seq = $1 and data->>'outcome' = 'REJECT'`,
    [rejected.decidedSeq],
  );
  expect(rowCount).toBe(1);
  await attacker.rehashStream(c, rejected.stream, opts);
  await attacker.rehashCheckpoints(c, opts.stripSignatures ? () => ({ sig: null, keyId: null }) : undefined);
}

beforeAll(async () => {
  agent = await startFixtureAgent();
  t = await startTestInstance({ worker: false });
  dir = mkdtempSync(join(tmpdir(), 'taskbay-audit-'));
  const [admin] = await t.sql(`select tenant_id from app_user where email = 'admin@localhost'`);
  tenantId = admin.tenant_id;

  // Six checkpoints over a REJECT, as in the finding.
  agentGid = ok(await t.gql(OPS.register, { url: agent.cardUrl('showcase') })).registerAgent.id;
  await checkpoint();
  const task = ok(await t.gql(OPS.startTask, { agentId: agentGid, text: 'approve' })).startTask;
  await checkpoint();
  await createMember(t);
  await checkpoint();
  const a = ok(await t.gql(`query($t: ID!) { approvals(taskId: $t) { edges { node { id revision digest } } } }`, { t: task.id })).approvals.edges[0].node;
  expect(ok(await t.gql(OPS.reject, { id: a.id, revision: a.revision, digest: a.digest })).reject.outcome).toBe('REJECT');
  await checkpoint();
  ok(await t.gql(OPS.startTask, { agentId: agentGid, text: 'approve' }));
  await checkpoint();
  await createMember(t);
  await checkpoint();

  rejected.id = rawId(a.id);
  rejected.stream = stream.approval(rejected.id);
  const [decided] = await t.sql(`select seq from audit_event where stream = $1 and type = 'approval.decided'`, [rejected.stream]);
  rejected.decidedSeq = Number(decided.seq);

  publicKeyFile = await publicKeyToFile(t, dir);
  attacker = auditAttacker(t.databaseUrl, tenantId);
  await attacker.snapshot();
});

afterAll(async () => {
  await dropAuditSnapshot(t);
  await t?.stop();
  await agent?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('signed audit log: untampered', () => {
  it('publishes the public key of the configured signing key, without sign-in, and auditChain names it', async () => {
    // The key derived here from TASKBAY_AUDIT_KEY (a base64 Ed25519 seed, RFC 8410 PKCS#8 wrapping) with node:crypto alone.
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(TEST_AUDIT_KEY, 'base64')]);
    const expected = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }));
    const res = await fetch(`${t.instance.url}/api/audit/public-key`);
    expect(res.status).toBe(200);
    const published = (await res.json()) as { algorithm: string; keyId: string; publicKeyPem: string };
    expect(published.algorithm).toBe('Ed25519');
    expect(createPublicKey(published.publicKeyPem).equals(expected)).toBe(true);
    expect(readFileSync(publicKeyFile, 'utf8')).toBe(published.publicKeyPem);
    const raw = Buffer.from(expected.export({ format: 'jwk' }).x!, 'base64url');
    expect(published.keyId).toBe(createHash('sha256').update(raw).digest('hex').slice(0, 16));

    const status = await chain();
    expect(status.signingKey).toEqual({ algorithm: 'Ed25519', keyId: published.keyId, publicKeyPem: published.publicKeyPem });
    // Every event and all six checkpoints are signed; nothing is legacy on a database that began signed.
    const [{ events }] = await t.sql(`select count(*)::int as events from audit_event where tenant_id = $1 and sig is not null`, [tenantId]);
    expect(status).toMatchObject({
      ok: true,
      events,
      signedEvents: events,
      legacyUnsignedEvents: 0,
      signedCheckpoints: 6,
      legacyUnsignedCheckpoints: 0,
      firstBrokenSeq: null,
      firstBrokenStream: null,
      reason: null,
    });
  });

  it('`taskbay audit export` writes the signed log and `taskbay audit verify` accepts it offline (exit 0)', async () => {
    const file = join(dir, 'clean.json');
    const exported = await cli(['export', '--out', file]);
    expect(exported.code, exported.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    expect(doc).toMatchObject({ format: 'taskbay.audit-export@2', tenant: { id: tenantId, name: 'default' }, pin: { pin: { tenantId } } });
    const [{ n }] = await t.sql(`select count(*)::int as n from audit_event where tenant_id = $1`, [tenantId]);
    expect(doc.events).toHaveLength(n);
    expect(doc.checkpoints).toHaveLength(6);
    expect(doc.events.every((e: any) => typeof e.sig === 'string' && e.tenantId === tenantId)).toBe(true);

    const verified = await cli(['verify', file, '--public-key', publicKeyFile]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(
      new RegExp(`^ok: tenant default \\(${tenantId}\\): ${n} events in \\d+ streams \\(${n} signed, 0 legacy unsigned\\), 6 signed checkpoints`),
    );
    expect(verified.stdout).toContain((await chain()).signingKey.keyId);
  });
});

describe('signed audit log: a rewrite with full database access is found', () => {
  it('the finding: REJECT turned into APPROVE, the stream and all six checkpoints re-hashed: auditChain and `taskbay audit verify` name the stream and seq', async () => {
    await attacker.asSuperuser((c) => rejectBecomesApprove(c));
    try {
      expect(await attacker.linksAndHashesHold()).toBe(true); // without signatures this verified: the finding

      const online = await verifiedNow();
      expect(online).toMatchObject({ ok: false, firstBrokenStream: rejected.stream, firstBrokenSeq: rejected.decidedSeq });
      expect(online.reason).toMatch(/has a signature that does not verify \(changed after it was signed\)/);

      const file = await exportToFile('rewritten.json');
      const offline = await cli(['verify', file, '--public-key', publicKeyFile]);
      expect(offline.code, offline.stdout + offline.stderr).toBe(1);
      expect(offline.stdout).toMatch(
        new RegExp(
          `^first bad: stream ${rejected.stream} seq ${rejected.decidedSeq}: event ${rejected.decidedSeq} of ${rejected.stream} has a signature that does not verify`,
        ),
      );
      // The re-hashed checkpoints are named too.
      expect(offline.stdout).toMatch(/also: checkpoint \d+: checkpoint \d+ has a signature that does not verify/);
    } finally {
      await restore();
    }
  });

  it('stripping the signatures of the rewritten events and checkpoints does not make them legacy', async () => {
    await attacker.asSuperuser((c) => rejectBecomesApprove(c, { stripSignatures: true }));
    try {
      expect(await attacker.linksAndHashesHold()).toBe(true);
      const online = await verifiedNow();
      expect(online).toMatchObject({ ok: false, firstBrokenStream: rejected.stream, firstBrokenSeq: rejected.decidedSeq });
      expect(online.reason).toMatch(/is not signed, but every event since \d+ must be/);
      expect(online.legacyUnsignedEvents).toBe(0);
    } finally {
      await restore();
    }
  });

  it('a whole stream deleted after a checkpoint is found, and so is rewriting the checkpoints to forget it', async () => {
    const victim = await t.sql(`select seq from audit_event where stream = $1 order by seq`, [rejected.stream]);
    await attacker.asSuperuser((c) => c.query('delete from audit_event where stream = $1', [rejected.stream]));
    try {
      // The first checkpoint that recorded the stream names its head then: the first event.
      const online = await verifiedNow();
      expect(online).toMatchObject({ ok: false, firstBrokenStream: rejected.stream, firstBrokenSeq: Number(victim[0]!.seq) });
      expect(online.reason).toMatch(/lost events recorded by checkpoint/);
      const offline = await cli(['verify', await exportToFile('stream-deleted.json'), '--public-key', publicKeyFile]);
      expect(offline.code).toBe(1);
      expect(offline.stdout).toMatch(new RegExp(`^first bad: stream ${rejected.stream} seq ${victim[0]!.seq}: stream ${rejected.stream} lost events`));

      await attacker.asSuperuser((c) => attacker.rehashCheckpoints(c));
      expect(await attacker.linksAndHashesHold()).toBe(true);
      const forgotten = await verifiedNow();
      expect(forgotten.ok).toBe(false);
      expect(forgotten.reason).toMatch(/^checkpoint \d+ has a signature that does not verify/);
    } finally {
      await restore();
    }
  });

  it('a cut tail is found, naming the stream and the seq of the missing head', async () => {
    const rows = await t.sql(`select seq, type from audit_event where stream = $1 order by seq`, [rejected.stream]);
    const tail = rows.at(-1)!;
    expect(Number(tail.seq)).toBe(rejected.decidedSeq); // a rejection is the stream's last event
    await attacker.asSuperuser((c) => c.query('delete from audit_event where seq = $1', [tail.seq]));
    try {
      const online = await verifiedNow();
      expect(online).toMatchObject({ ok: false, firstBrokenStream: rejected.stream, firstBrokenSeq: Number(tail.seq) });
      expect(online.reason).toMatch(/lost events recorded by checkpoint \d+ \(its event \d+ is missing or changed\)/);

      await attacker.asSuperuser((c) => attacker.rehashCheckpoints(c));
      expect(await attacker.linksAndHashesHold()).toBe(true);
      expect((await verifiedNow()).reason).toMatch(/^checkpoint \d+ has a signature that does not verify/);
    } finally {
      await restore();
    }
  });

  it('checkpoints re-signed with another key are refused as signed by an untrusted key, online and offline', async () => {
    const forger = auditSigner(generateKeyPairSync('ed25519').privateKey);
    await attacker.asSuperuser(async (c) => {
      await c.query('delete from audit_event where stream = $1', [rejected.stream]);
      await attacker.rehashCheckpoints(c, (hash) => ({ sig: forger.sign('checkpoint', hash), keyId: forger.keyId }));
    });
    try {
      expect(await attacker.linksAndHashesHold()).toBe(true);
      const online = await verifiedNow();
      expect(online.ok).toBe(false);
      expect(online.reason).toMatch(new RegExp(`^checkpoint \\d+ is signed by key ${forger.keyId}, which is not a trusted key`));

      // The export can be made to name the forger's key too: the verifier does not take it.
      const file = await exportToFile('forged.json');
      const doc = JSON.parse(readFileSync(file, 'utf8'));
      doc.publicKey = { algorithm: 'Ed25519', keyId: forger.keyId, pem: forger.publicKeyPem };
      writeFileSync(file, JSON.stringify(doc));
      const offline = await cli(['verify', file, '--public-key', publicKeyFile]);
      expect(offline.code).toBe(1);
      expect(offline.stdout).toMatch(new RegExp(`^first bad: checkpoint \\d+: checkpoint \\d+ is signed by key ${forger.keyId}, which is not a trusted key`));
    } finally {
      await restore();
    }
  });
});

describe('taskbay audit verify: the trust anchor', () => {
  it('refuses to verify with no trusted key (exit 64), uses the local key when there is one, and fails with a key that did not sign', async () => {
    const file = await exportToFile('anchor.json');

    const none = await cli(['verify', file]);
    expect(none.code).toBe(64);
    expect(none.stderr).toMatch(/no trusted public key/);
    expect(none.stderr).toMatch(/key named inside the export is not\s+trusted/);

    const local = await cli(['verify', file], { TASKBAY_AUDIT_KEY: TEST_AUDIT_KEY });
    expect(local.code, local.stdout + local.stderr).toBe(0);
    expect(local.stdout).toMatch(/^ok: /);

    const otherKey = join(dir, 'other.pub');
    writeFileSync(otherKey, generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }));
    const wrong = await cli(['verify', file, '--public-key', otherKey]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/^first bad: stream \S+ seq \d+: event \d+ of \S+ is signed by key [0-9a-f]{16}, which is not a trusted key/);

    const usage = await cli(['verify']);
    expect(usage.code).toBe(64);
  });
});

describe('audit export: who and what', () => {
  it("needs an admin API token, and names no other tenant's streams", async () => {
    const url = `${t.instance.url}/api/audit/export`;
    expect((await fetch(url)).status).toBe(401);
    const member = await createMember(t);
    const forbidden = await fetch(url, { headers: { authorization: `Bearer ${member.token}` } });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: 'FORBIDDEN' });

    // Another tenant's stream, checkpointed.
    const other = randomUUID();
    const otherStream = stream.tenant(other);
    await t.instance.orm.em.fork().transactional((tem) => appendEvents(tem, [tenantEventIn(other, otherStream)]));
    const written = await writeCheckpoint(t.instance.orm.em.fork());
    expect(written.map((w) => w.tenantId).sort()).toEqual([other, tenantId].sort());

    const text = await (await fetch(url, { headers: { authorization: `Bearer ${t.adminToken}` } })).text();
    expect(text).not.toContain(other);
    const doc = JSON.parse(text);
    expect(doc.checkpoints.every((c: any) => c.tenantId === tenantId)).toBe(true);
    expect((await verifiedNow()).ok).toBe(true);
  });
});
