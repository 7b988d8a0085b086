import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// Ed25519 private keys that live outside the database: given in a setting (PEM, or a base64
// seed), or a 0600 PEM file in the data directory created on first start. The audit signing key
// (audit/signing.ts) and the approval signing key (approval-signing/keys.ts) are both kept so.

/** PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows it (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A PEM PKCS#8 Ed25519 private key, or the base64 of a 32-byte seed. Throws a message naming
 * `source` (the setting or file) when it is neither.
 */
export function parseEd25519PrivateKey(raw: string, source: string): KeyObject {
  const text = raw.trim();
  let key: KeyObject;
  try {
    if (text.startsWith('-----BEGIN')) key = createPrivateKey({ key: text, format: 'pem' });
    else {
      const seed = Buffer.from(text, 'base64');
      if (seed.length !== 32 || seed.toString('base64').replace(/=+$/, '') !== text.replace(/=+$/, '')) throw new Error('not 32 bytes of base64');
      key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    }
  } catch (e) {
    throw new Error(`${source} must be a PEM PKCS#8 Ed25519 private key or the base64 of a 32-byte seed (${(e as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`${source} must be an Ed25519 private key, got ${key.asymmetricKeyType ?? 'an unknown key type'}`);
  }
  return key;
}

/** Reads a key file; null when there is none. Refuses a file others can read; `what` names the key in that message. */
export function readPrivateKeyFile(path: string, what: string): KeyObject | null {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new Error(`${what} ${path} is readable by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`);
  }
  return parseEd25519PrivateKey(readFileSync(path, 'utf8'), path);
}

/** The key file at `path`, created (mode 0600, its folder 0700) when there is none; `created` says which. */
export function loadOrCreatePrivateKeyFile(path: string, what: string): { key: KeyObject; created: boolean } {
  const existing = readPrivateKeyFile(path, what);
  if (existing) return { key: existing, created: false };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  // Written aside, then linked into place: link() fails if the file exists, so of two instances
  // starting on one data directory one key wins, and nobody reads a half-written file.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, pem, { mode: 0o600 });
  try {
    linkSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return { key: readPrivateKeyFile(path, what)!, created: false };
  } finally {
    unlinkSync(tmp);
  }
  return { key: parseEd25519PrivateKey(pem, path), created: true };
}
