import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { APPROVAL_TOKEN_TYPE, JWKS_PATH } from './constants.js';

// Taskbay's approval signature: a compact JWS (RFC 7515), EdDSA over Ed25519, typ
// taskbay-approval+jwt, by a key of the JWKS Taskbay publishes at <public URL>/.well-known/jwks.json.
// Plain node:crypto, no JOSE library.

/** A public key as JWKS lists it (RFC 7517); only OKP / Ed25519 keys are used. */
export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
  use?: string;
  [member: string]: unknown;
}

export interface Jwks {
  keys: Jwk[];
}

/** Far above a real signature (~400 characters): longer input is refused before decoding. */
const MAX_SIGNATURE_CHARS = 4096;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JWKS URL of a Taskbay public URL. */
export function jwksUrl(issuer: string): string {
  return issuer.replace(/\/+$/, '') + JWKS_PATH;
}

/** Fetches a JWKS (GET, JSON); throws when the answer is not one. */
export async function fetchJwks(url: string, fetchImpl: typeof fetch = fetch): Promise<Jwks> {
  const res = await fetchImpl(url, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`GET ${url} answered HTTP ${res.status}`);
  const body: unknown = await res.json();
  if (!isObject(body) || !Array.isArray(body.keys) || !body.keys.every(isObject)) throw new Error(`${url} is not a JWKS (no keys array)`);
  return body as unknown as Jwks;
}

function decodeJson(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function publicKeyOf(jwk: Jwk): KeyObject | null {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || 'd' in jwk) return null;
  if ((jwk.alg !== undefined && jwk.alg !== 'EdDSA' && jwk.alg !== 'Ed25519') || (jwk.use !== undefined && jwk.use !== 'sig')) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch {
    return null;
  }
}

/**
 * The claims and key id of `token` when it is a well-formed approval JWS signed by a key of
 * `jwks`, else why not. Only the signature is checked here; what the claims must say is the
 * caller's.
 */
export function checkSignature(token: string, jwks: Jwks): { claims: Record<string, unknown>; keyId: string } | string {
  if (token.length > MAX_SIGNATURE_CHARS) return 'the signature is too long';
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every((s) => BASE64URL.test(s))) return 'the signature is not a compact JWS';
  const [headerB64, payloadB64, signatureB64] = segments as [string, string, string];
  const header = decodeJson(headerB64);
  const claims = decodeJson(payloadB64);
  if (!header || !claims) return 'the signature is not a compact JWS';
  if (header.alg !== 'EdDSA' && header.alg !== 'Ed25519') return `the signature's algorithm is ${JSON.stringify(header.alg)}, not EdDSA`;
  if (header.typ !== APPROVAL_TOKEN_TYPE) return `the signature's type is ${JSON.stringify(header.typ)}, not ${APPROVAL_TOKEN_TYPE}`;
  if ('crit' in header) return 'the signature names critical header parameters';
  if (typeof header.kid !== 'string') return 'the signature names no key (kid)';
  if (!isObject(jwks) || !Array.isArray(jwks.keys)) return 'the trusted JWKS has no keys array';
  const jwk = jwks.keys.find((k) => isObject(k) && k.kid === header.kid);
  const key = jwk ? publicKeyOf(jwk) : null;
  if (!key) return `key ${header.kid} is not an Ed25519 key of the trusted JWKS`;
  const valid = verify(null, Buffer.from(`${headerB64}.${payloadB64}`), key, Buffer.from(signatureB64, 'base64url'));
  if (!valid) return `the signature does not verify with key ${header.kid}`;
  return { claims, keyId: header.kid };
}
