import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { loadOrCreatePrivateKeyFile, parseEd25519PrivateKey, readPrivateKeyFile } from '../lib/ed25519-keys.js';
import { log } from '../log.js';

// The audit signing key. A database administrator can rewrite rows and recompute hashes, but
// cannot sign: every event and checkpoint carries an Ed25519 signature by a key that lives
// outside the database (TASKBAY_AUDIT_KEY, or a 0600 file in the data directory), and the
// verifier trusts public keys it got elsewhere, never the key a database or an export names.

export const AUDIT_KEY_FILE = 'audit-signing-key.pem';

/** What is signed: a domain tag and the item's hash, so an event signature never passes for a checkpoint one
 *  (nor for the worker's stored verification state, audit/verification.ts). */
const DOMAIN = {
  event: 'taskbay.audit.event:',
  checkpoint: 'taskbay.audit.checkpoint:',
  verification: 'taskbay.audit.verification:',
  pin: 'taskbay.audit.pin:',
  failure: 'taskbay.audit.failure:',
} as const;
export type SignedKind = keyof typeof DOMAIN;

/**
 * TASKBAY_AUDIT_KEY: a PEM PKCS#8 Ed25519 private key, or the base64 of a 32-byte seed.
 * Throws a message naming the setting when it is neither.
 */
export function parseAuditSigningKey(raw: string, source = 'TASKBAY_AUDIT_KEY'): KeyObject {
  return parseEd25519PrivateKey(raw, source);
}

/** A public key from PEM (SPKI, or a private key, whose public half is taken). */
export function parsePublicKey(pem: string, source: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem.trim(), format: 'pem' });
  } catch (e) {
    throw new Error(`${source} is not a PEM public key (${(e as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${source} is not an Ed25519 key`);
  return key;
}

/** The short name of a public key: the first 16 hex of SHA-256 of its raw 32 bytes. */
export function keyIdOf(publicKey: KeyObject): string {
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return createHash('sha256').update(raw).digest('hex').slice(0, 16);
}

export interface TrustedKey {
  keyId: string;
  publicKey: KeyObject;
  publicKeyPem: string;
}

export function trustedKey(publicKey: KeyObject): TrustedKey {
  return { keyId: keyIdOf(publicKey), publicKey, publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

export interface AuditSigner extends TrustedKey {
  /** base64 Ed25519 signature of the domain-tagged hash. */
  sign(kind: SignedKind, hash: string): string;
}

export function auditSigner(privateKey: KeyObject): AuditSigner {
  const pub = trustedKey(createPublicKey(privateKey));
  return { ...pub, sign: (kind, hash) => sign(null, Buffer.from(DOMAIN[kind] + hash), privateKey).toString('base64') };
}

// Verification is ~0.1 ms per signature; auditChain re-reads every event of a tenant, so a good
// signature is remembered (per trusted key object) and checked once per process.
const VERIFIED_MAX = 200_000;
const verified = new WeakMap<KeyObject, Set<string>>();

export function verifySignature(publicKey: KeyObject, kind: SignedKind, hash: string, sig: string): boolean {
  const memo = `${kind}:${hash}:${sig}`;
  let seen = verified.get(publicKey);
  if (seen?.has(memo)) return true;
  let ok = false;
  try {
    ok = verify(null, Buffer.from(DOMAIN[kind] + hash), publicKey, Buffer.from(sig, 'base64'));
  } catch {
    ok = false;
  }
  if (ok) {
    if (!seen) {
      seen = new Set();
      verified.set(publicKey, seen);
    }
    if (seen.size >= VERIFIED_MAX) seen.delete(seen.values().next().value!);
    seen.add(memo);
  }
  return ok;
}

export function keyFilePath(dataDir: string): string {
  return join(dataDir, AUDIT_KEY_FILE);
}

const WHAT = 'the audit signing key';

/** Reads the data directory's key file; null when there is none. Refuses a file others can read. */
export function readKeyFile(dataDir: string): KeyObject | null {
  return readPrivateKeyFile(keyFilePath(dataDir), WHAT);
}

/**
 * The instance's signing key: TASKBAY_AUDIT_KEY when set, else the data directory's key file,
 * created (mode 0600) on first start. Instances that share one database must share the key.
 */
export function loadAuditSigningKey(config: { auditSigningKey: KeyObject | null; dataDir: string }): AuditSigner {
  if (config.auditSigningKey) return auditSigner(config.auditSigningKey);
  const path = keyFilePath(config.dataDir);
  const { key, created } = loadOrCreatePrivateKeyFile(path, WHAT);
  const signer = auditSigner(key);
  if (created) log.info(`Created the audit signing key ${path} (key id ${signer.keyId}). Back it up: audit verification needs its public key.`);
  return signer;
}

// The signer travels with the ORM (every fork shares its configuration), so appendEvents, the
// one writer, signs without every caller passing a key.
const EXTENSION = 'taskbay:audit-signer';

export function registerAuditSigner(orm: { config: { registerExtension(name: string, cb: () => unknown): void } }, signer: AuditSigner) {
  orm.config.registerExtension(EXTENSION, () => signer);
}

export function auditSignerOf(em: { config: { getExtension<T>(name: string): T | undefined } }): AuditSigner {
  const signer = em.config.getExtension<AuditSigner>(EXTENSION);
  if (!signer) throw new Error('no audit signing key registered on this ORM (startInstance registers it)');
  return signer;
}
