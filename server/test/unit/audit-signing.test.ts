import { createPublicKey, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { eventHash, type AuditEventRow } from '../../src/audit/log.js';
import { auditSigner, keyFilePath, loadAuditSigningKey, parseAuditSigningKey, trustedKey } from '../../src/audit/signing.js';
import { checkpointHash, verifyAudit, type CheckpointRecord } from '../../src/audit/verify.js';

// The audit signing key (TASKBAY_AUDIT_KEY or a 0600 file in the data directory) and the
// legacy rules of verification, without a database.

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'taskbay-audit-key-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the audit signing key', () => {
  it('without TASKBAY_AUDIT_KEY: created in the data directory with mode 0600 on first start, the same key after', () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const config = { auditSigningKey: null, dataDir };
    const first = loadAuditSigningKey(config);
    const file = keyFilePath(dataDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const again = loadAuditSigningKey(config);
    expect(again.keyId).toBe(first.keyId);
    expect(again.publicKeyPem).toBe(first.publicKeyPem);
    // The key id is the first 16 hex of SHA-256 of the raw public key.
    expect(first.keyId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('refuses a key file other users can read', () => {
    const dataDir = tempDir();
    loadAuditSigningKey({ auditSigningKey: null, dataDir });
    chmodSync(keyFilePath(dataDir), 0o644);
    expect(() => loadAuditSigningKey({ auditSigningKey: null, dataDir })).toThrow(/readable by other users \(mode 644\); run chmod 600/);
  });

  it('TASKBAY_AUDIT_KEY takes a PEM PKCS#8 Ed25519 key or a base64 seed, and nothing else (clear message at start)', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const fromPem = loadConfig({ TASKBAY_AUDIT_KEY: pem }).auditSigningKey!;
    expect(createPublicKey(fromPem).equals(createPublicKey(privateKey))).toBe(true);

    const seed = randomBytes(32).toString('base64');
    expect(auditSigner(parseAuditSigningKey(seed)).keyId).toBe(auditSigner(parseAuditSigningKey(seed)).keyId);

    // A key given in the environment wins over the data directory, and no file is written.
    const dataDir = tempDir();
    expect(loadAuditSigningKey({ auditSigningKey: fromPem, dataDir }).keyId).toBe(auditSigner(privateKey).keyId);
    expect(() => statSync(keyFilePath(dataDir))).toThrow(/ENOENT/);

    expect(() => loadConfig({ TASKBAY_AUDIT_KEY: 'not a key' })).toThrow(
      /TASKBAY_AUDIT_KEY must be a PEM PKCS#8 Ed25519 private key or the base64 of a 32-byte seed/,
    );
    expect(() => loadConfig({ TASKBAY_AUDIT_KEY: randomBytes(31).toString('base64') })).toThrow(/TASKBAY_AUDIT_KEY must be/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => loadConfig({ TASKBAY_AUDIT_KEY: rsa })).toThrow(/TASKBAY_AUDIT_KEY must be an Ed25519 private key, got rsa/);
  });

  it('an event signature never passes for a checkpoint one (domain-tagged)', () => {
    const signer = auditSigner(generateKeyPairSync('ed25519').privateKey);
    const tenantId = randomUUID();
    const at = new Date();
    const heads = {};
    const chash = checkpointHash({ tenantId, at, heads, prevHash: null, firstSignedEventSeq: null });
    const cp: CheckpointRecord = {
      seq: 1,
      tenantId,
      at,
      heads,
      prevHash: null,
      hash: chash,
      sig: signer.sign('event', chash),
      keyId: signer.keyId,
      firstSignedEventSeq: null,
    };
    const r = verifyAudit({ tenantId, events: [], checkpoints: [cp], trusted: [trustedKey(signer.publicKey)] });
    expect(r.reason).toMatch(/checkpoint 1 has a signature that does not verify/);
    expect(verifyAudit({ tenantId, events: [], checkpoints: [{ ...cp, sig: signer.sign('checkpoint', chash) }], trusted: [signer] }).ok).toBe(true);
  });
});

describe('verification of legacy (unsigned) items', () => {
  const signer = auditSigner(generateKeyPairSync('ed25519').privateKey);
  const tenantId = randomUUID();
  /** A stream of n events, linked and hashed; signed from index signedFrom on. */
  function streamOf(name: string, seqs: number[], signedFrom: number): AuditEventRow[] {
    let prev: string | null = null;
    return seqs.map((seq, i) => {
      const base = {
        id: randomUUID(),
        tenantId,
        stream: name,
        type: 't',
        actorType: 'system' as const,
        actorId: null,
        at: new Date(1e12 + seq),
        data: { i },
        prevHash: prev,
      };
      const hash = eventHash(base);
      prev = hash;
      const signed = i >= signedFrom;
      return { ...base, seq, hash, sig: signed ? signer.sign('event', hash) : null, keyId: signed ? signer.keyId : null };
    });
  }

  it('accepts and counts unsigned events before the first signed one; an unsigned event after it fails, in any stream of the tenant', () => {
    const a = streamOf('a', [1, 2, 5], 2);
    const b = streamOf('b', [3, 4], 2);
    expect(verifyAudit({ tenantId, events: [...a, ...b], checkpoints: [], trusted: [signer] })).toMatchObject({
      ok: true,
      legacyUnsignedEvents: 4,
      signedEvents: 1,
    });
    // Stream c has no signed event at all, but starts after a signed event of stream a.
    const c = streamOf('c', [6, 7], 9);
    const r = verifyAudit({ tenantId, events: [...a, ...b, ...c], checkpoints: [], trusted: [signer] });
    expect(r).toMatchObject({ ok: false, firstBrokenStream: 'c', firstBrokenSeq: 6 });
    expect(r.reason).toBe('event 6 of c is not signed, but every event since 5 must be');
  });

  it('a signed checkpoint that recorded the first signed event keeps stripped events from passing as legacy', () => {
    const a = streamOf('a', [1, 2, 3], 1);
    const stripped = a.map((e) => ({ ...e, sig: null, keyId: null }));
    expect(verifyAudit({ tenantId, events: stripped, checkpoints: [], trusted: [signer] })).toMatchObject({ ok: true, legacyUnsignedEvents: 3 });
    const at = new Date();
    const heads = { a: { seq: 3, hash: a[2]!.hash } };
    const hash = checkpointHash({ tenantId, at, heads, prevHash: null, firstSignedEventSeq: 2 });
    const cp: CheckpointRecord = {
      seq: 1,
      tenantId,
      at,
      heads,
      prevHash: null,
      hash,
      sig: signer.sign('checkpoint', hash),
      keyId: signer.keyId,
      firstSignedEventSeq: 2,
    };
    expect(verifyAudit({ tenantId, events: a, checkpoints: [cp], trusted: [signer] })).toMatchObject({
      ok: true,
      legacyUnsignedEvents: 1,
      signedCheckpoints: 1,
    });
    const r = verifyAudit({ tenantId, events: stripped, checkpoints: [cp], trusted: [signer] });
    expect(r).toMatchObject({ ok: false, firstBrokenStream: 'a', firstBrokenSeq: 2 });
    expect(r.reason).toMatch(/not signed, but every event since 2 must be/);
  });

  it('legacy global checkpoints verify as before and only before the first per-tenant one', () => {
    const a = streamOf('a', [1, 2], 2);
    const at = new Date();
    const legacyHeads = { [`${tenantId}/a`]: a[1]!.hash, [`${randomUUID()}/elsewhere`]: 'ff'.repeat(32) };
    const legacy: CheckpointRecord = {
      seq: 1,
      tenantId: null,
      at,
      heads: legacyHeads,
      prevHash: null,
      hash: checkpointHash({ tenantId: null, at, heads: legacyHeads, prevHash: null, firstSignedEventSeq: null }),
      sig: null,
      keyId: null,
      firstSignedEventSeq: null,
    };
    expect(verifyAudit({ tenantId, events: a, checkpoints: [legacy], trusted: [signer] })).toMatchObject({ ok: true, legacyUnsignedCheckpoints: 1 });
    expect(verifyAudit({ tenantId, events: a.slice(0, 1), checkpoints: [legacy], trusted: [signer] }).reason).toBe(
      'stream a lost events recorded by checkpoint 1',
    );

    const heads = { a: { seq: 2, hash: a[1]!.hash } };
    const hash = checkpointHash({ tenantId, at, heads, prevHash: null, firstSignedEventSeq: null });
    const own: CheckpointRecord = {
      seq: 2,
      tenantId,
      at,
      heads,
      prevHash: null,
      hash,
      sig: signer.sign('checkpoint', hash),
      keyId: signer.keyId,
      firstSignedEventSeq: null,
    };
    expect(verifyAudit({ tenantId, events: a, checkpoints: [legacy, own], trusted: [signer] }).ok).toBe(true);
    const late = { ...legacy, seq: 3 };
    expect(verifyAudit({ tenantId, events: a, checkpoints: [legacy, own, late], trusted: [signer] }).reason).toBe(
      'checkpoint 3 is an unsigned global checkpoint after signed ones',
    );
    // An unsigned per-tenant checkpoint is never legacy.
    expect(verifyAudit({ tenantId, events: a, checkpoints: [{ ...own, sig: null, keyId: null }], trusted: [signer] }).reason).toBe(
      'checkpoint 2 is not signed',
    );
  });
});
