import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, SignJWT } from 'jose';
import { loadOrCreatePrivateKeyFile } from '../lib/ed25519-keys.js';
import { log } from '../log.js';
import { APPROVAL_TOKEN_TYPE, type ApprovalClaims, type Jwk, type Jwks } from '../verify-approval/index.js';

// The approval signing key (docs/VERIFYING-APPROVALS.md). Its own key, not the audit key: its
// public half is handed to every agent and rotated on the agents' schedule, while the audit key's
// public half is what auditors pin; one key per purpose means rotating or revoking either leaves
// the other's verifiers alone, and a signature made for one can never be offered as the other.
//
// The key lives outside the database: TASKBAY_APPROVAL_KEY, or <dataDir>/approval-signing-key.pem
// (0600, created on first start). Rotation: the new key signs; the public keys that signed
// before stay in the JWKS, listed in TASKBAY_APPROVAL_PUBLISHED_KEYS.

export const APPROVAL_KEY_FILE = 'approval-signing-key.pem';

export interface ApprovalKeys {
  /** Taskbay's public URL: the iss of every signature. */
  issuer: string;
  /** The kid of the signing key: its RFC 7638 JWK thumbprint. */
  keyId: string;
  /** Public keys only: the signing key's and every published one. */
  jwks: Jwks;
  /**
   * The compact JWS of one approval; iat is the decision time, so the same inputs sign the same
   * way. `externalId` is there only when the request has one (approval-signing/signed-approval.ts).
   */
  sign(claims: SignedClaims, decidedAt: Date): Promise<string>;
  /**
   * The claims of a JWS this instance's keys made (the signing key or a published one), with the
   * approval's `typ`, EdDSA and this issuer; null for anything else (never throws).
   */
  verify(token: string): Record<string, unknown> | null;
}

/** What Taskbay signs besides iss and iat: the A2A claims, and the request's externalId when it has one. */
export type SignedClaims = Omit<ApprovalClaims, 'iss' | 'iat'> & { externalId?: string };

/** Far above a real signature (a few hundred characters): longer input is not decoded. */
const MAX_TOKEN_CHARS = 4096;

function decodeSegment(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * TASKBAY_APPROVAL_PUBLISHED_KEYS: comma-separated Ed25519 public keys, each a PEM (SPKI) or the
 * base64url of its 32 raw bytes (a JWK's `x`). Throws a message naming the setting and the entry.
 */
export function parsePublishedKeys(raw: string, source = 'TASKBAY_APPROVAL_PUBLISHED_KEYS'): KeyObject[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry, i) => {
      let key: KeyObject;
      try {
        if (entry.startsWith('-----BEGIN')) key = createPublicKey({ key: entry, format: 'pem' });
        else {
          if (!/^[A-Za-z0-9_-]{43}$/.test(entry)) throw new Error('not the base64url of 32 bytes');
          key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: entry }, format: 'jwk' });
        }
      } catch (e) {
        throw new Error(`${source} entry ${i + 1} must be an Ed25519 public key: PEM, or the base64url of its 32 bytes (${(e as Error).message})`);
      }
      if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${source} entry ${i + 1} must be an Ed25519 public key, got ${key.asymmetricKeyType}`);
      return key;
    });
}

async function publicJwk(key: KeyObject): Promise<Jwk & { kid: string }> {
  const { kty, crv, x } = await exportJWK(key.type === 'public' ? key : createPublicKey(key));
  const kid = await calculateJwkThumbprint({ kty, crv, x });
  // Named members only: nothing of a private key can reach the JWKS.
  return { kty: kty!, crv, x, kid, alg: 'EdDSA', use: 'sig' };
}

export async function approvalKeys(privateKey: KeyObject, published: readonly KeyObject[], issuer: string): Promise<ApprovalKeys> {
  const current = await publicJwk(privateKey);
  const keys: Jwk[] = [current];
  const byKid = new Map<string, KeyObject>([[current.kid, createPublicKey(privateKey)]]);
  for (const key of published) {
    const jwk = await publicJwk(key);
    if (!keys.some((k) => k.kid === jwk.kid)) {
      keys.push(jwk);
      byKid.set(jwk.kid, key);
    }
  }
  return {
    issuer,
    keyId: current.kid,
    jwks: { keys },
    sign: (claims, decidedAt) =>
      new SignJWT({ ...claims })
        .setProtectedHeader({ alg: 'EdDSA', kid: current.kid, typ: APPROVAL_TOKEN_TYPE })
        .setIssuer(issuer)
        .setIssuedAt(decidedAt)
        .sign(privateKey),
    verify(token) {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) return null;
      const segments = token.split('.');
      if (segments.length !== 3 || !segments.every((x) => /^[A-Za-z0-9_-]+$/.test(x))) return null;
      const [header64, payload64, signature64] = segments as [string, string, string];
      const header = decodeSegment(header64);
      const claims = decodeSegment(payload64);
      if (!header || !claims || header.alg !== 'EdDSA' || header.typ !== APPROVAL_TOKEN_TYPE || 'crit' in header) return null;
      const key = typeof header.kid === 'string' ? byKid.get(header.kid) : undefined;
      if (!key || !verify(null, Buffer.from(`${header64}.${payload64}`), key, Buffer.from(signature64, 'base64url'))) return null;
      return claims.iss === issuer && typeof claims.iat === 'number' ? claims : null;
    },
  };
}

/**
 * The instance's approval keys: TASKBAY_APPROVAL_KEY when set, else the data directory's key
 * file, created (mode 0600) on first start. Instances behind one URL must share the key.
 */
export async function loadApprovalKeys(config: {
  approvalSigningKey: KeyObject | null;
  approvalPublishedKeys: KeyObject[];
  dataDir: string;
  publicUrl: string;
}): Promise<ApprovalKeys> {
  let key = config.approvalSigningKey;
  if (!key) {
    const path = join(config.dataDir, APPROVAL_KEY_FILE);
    const file = loadOrCreatePrivateKeyFile(path, 'the approval signing key');
    key = file.key;
    if (file.created) log.info(`Created the approval signing key ${path}. Back it up: agents verify approvals with its public key.`);
  }
  return approvalKeys(key, config.approvalPublishedKeys, config.publicUrl);
}
