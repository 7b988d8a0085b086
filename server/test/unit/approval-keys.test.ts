import { createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { APPROVAL_KEY_FILE, loadApprovalKeys } from '../../src/approval-signing/keys.js';
import { loadAuditSigningKey } from '../../src/audit/signing.js';
import { loadConfig } from '../../src/config.js';

// The approval signing key (TASKBAY_APPROVAL_KEY or a 0600 file in the data directory) and the
// published keys of a rotation (TASKBAY_APPROVAL_PUBLISHED_KEYS), without a database.

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'taskbay-approval-key-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PUBLIC_URL = 'https://taskbay.example';
const keysOf = (env: Record<string, string>, dataDir = tempDir()) =>
  loadApprovalKeys(loadConfig({ TASKBAY_DATA_DIR: dataDir, TASKBAY_PUBLIC_URL: PUBLIC_URL, ...env }));
const xOf = (key: KeyObject | string) => (typeof key !== 'string' && key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }).x!;

describe('the approval signing key', () => {
  it('without TASKBAY_APPROVAL_KEY: its own file in the data directory, mode 0600, the same key after; not the audit key', async () => {
    const dataDir = join(tempDir(), 'nested');
    const first = await keysOf({}, dataDir);
    const file = join(dataDir, APPROVAL_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.jwks.keys[0]!.x).toBe(xOf(readFileSync(file, 'utf8')));
    expect((await keysOf({}, dataDir)).keyId).toBe(first.keyId);
    expect(first.issuer).toBe(PUBLIC_URL);
    const audit = loadAuditSigningKey({ auditSigningKey: null, dataDir });
    expect(xOf(audit.publicKeyPem)).not.toBe(first.jwks.keys[0]!.x);
  });

  it('refuses a key file other users can read', async () => {
    const dataDir = tempDir();
    await keysOf({}, dataDir);
    chmodSync(join(dataDir, APPROVAL_KEY_FILE), 0o640);
    await expect(keysOf({}, dataDir)).rejects.toThrow(/^the approval signing key .* is readable by other users \(mode 640\); run chmod 600 on it$/);
  });

  it('TASKBAY_APPROVAL_KEY takes a PEM PKCS#8 Ed25519 key or a base64 seed (no file written); anything else is refused at start', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const dataDir = tempDir();
    const keys = await keysOf({ TASKBAY_APPROVAL_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() }, dataDir);
    expect(keys.jwks.keys.map((k) => k.x)).toEqual([xOf(privateKey)]);
    expect(() => statSync(join(dataDir, APPROVAL_KEY_FILE))).toThrow(/ENOENT/);
    const seed = randomBytes(32).toString('base64');
    expect((await keysOf({ TASKBAY_APPROVAL_KEY: seed })).keyId).toBe((await keysOf({ TASKBAY_APPROVAL_KEY: seed })).keyId);

    expect(() => loadConfig({ TASKBAY_APPROVAL_KEY: 'not a key' })).toThrow(
      /^TASKBAY_APPROVAL_KEY must be a PEM PKCS#8 Ed25519 private key or the base64 of a 32-byte seed/,
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => loadConfig({ TASKBAY_APPROVAL_KEY: rsa })).toThrow(/^TASKBAY_APPROVAL_KEY must be an Ed25519 private key, got rsa/);
  });

  it('TASKBAY_APPROVAL_PUBLISHED_KEYS: PEM or JWK x, published after the signing key (once each); anything else is refused naming the entry', async () => {
    const signing = randomBytes(32).toString('base64');
    const old1 = generateKeyPairSync('ed25519').publicKey;
    const old2 = generateKeyPairSync('ed25519').publicKey;
    const current = (await keysOf({ TASKBAY_APPROVAL_KEY: signing })).jwks.keys[0]!;
    const published = [old1.export({ format: 'pem', type: 'spki' }).toString(), xOf(old2), current.x!].join(',');
    const keys = await keysOf({ TASKBAY_APPROVAL_KEY: signing, TASKBAY_APPROVAL_PUBLISHED_KEYS: published });
    expect(keys.jwks.keys.map((k) => k.x)).toEqual([current.x, xOf(old1), xOf(old2)]);
    expect(keys.keyId).toBe(current.kid);

    expect(() => loadConfig({ TASKBAY_APPROVAL_PUBLISHED_KEYS: `${xOf(old1)}, not-a-key` })).toThrow(
      /^TASKBAY_APPROVAL_PUBLISHED_KEYS entry 2 must be an Ed25519 public key: PEM, or the base64url of its 32 bytes/,
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(() => loadConfig({ TASKBAY_APPROVAL_PUBLISHED_KEYS: rsa })).toThrow(
      /^TASKBAY_APPROVAL_PUBLISHED_KEYS entry 1 must be an Ed25519 public key, got rsa$/,
    );
  });
});

describe('verify: what Taskbay accepts back as its own signature (approval-signing/signed-approval.ts)', () => {
  const claims = { requestId: 'r', decisionId: 'd', revision: 1, revisionDigest: '0'.repeat(64), taskId: null };

  it("answers the claims of a JWS its current or a published key made for its issuer; nothing for another issuer's, another key's, a changed one or another typ", async () => {
    const old = randomBytes(32).toString('base64');
    const before = await keysOf({ TASKBAY_APPROVAL_KEY: old });
    const signedBefore = await before.sign(claims, new Date(1_800_000_000_000));
    const rotated = await keysOf({ TASKBAY_APPROVAL_KEY: randomBytes(32).toString('base64'), TASKBAY_APPROVAL_PUBLISHED_KEYS: before.jwks.keys[0]!.x! });
    const now = await rotated.sign({ ...claims, externalId: 'call-1' }, new Date(1_800_000_000_000));
    expect(rotated.verify(now)).toEqual({ ...claims, externalId: 'call-1', iss: PUBLIC_URL, iat: 1_800_000_000 });
    expect(rotated.verify(signedBefore)).toMatchObject({ decisionId: 'd' });
    // Not published any more, another issuer, a changed payload, another typ, not a JWS at all.
    expect((await keysOf({ TASKBAY_APPROVAL_KEY: randomBytes(32).toString('base64') })).verify(signedBefore)).toBeNull();
    expect((await keysOf({ TASKBAY_APPROVAL_KEY: old, TASKBAY_PUBLIC_URL: 'https://other.example' })).verify(signedBefore)).toBeNull();
    const [h, , s] = now.split('.');
    expect(
      rotated.verify([h, Buffer.from(JSON.stringify({ ...claims, decisionId: 'e', iss: PUBLIC_URL, iat: 1 })).toString('base64url'), s].join('.')),
    ).toBeNull();
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    expect(rotated.verify([Buffer.from(JSON.stringify({ ...header, typ: 'JWT' })).toString('base64url'), now.split('.')[1], s].join('.'))).toBeNull();
    for (const junk of ['', 'a.b', 'a.b.c', `${now}.x`, 'x'.repeat(5000)]) expect(rotated.verify(junk)).toBeNull();
  });
});
