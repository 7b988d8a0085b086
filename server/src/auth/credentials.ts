import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { PASSWORD_LIMITS } from '../limits.js';

// API tokens are 256-bit random secrets: a SHA-256 of them is enough to store (no brute force
// to slow down). Passwords are chosen by people: argon2id.

export const TOKEN_PREFIX = 'tb_';

export function newApiToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function hashPassword(password: string): Promise<string> {
  if (password.length > PASSWORD_LIMITS.max) return Promise.reject(new Error(`password longer than ${PASSWORD_LIMITS.max} characters`));
  return hash(password);
}

/** False for an over-long password without hashing it (callers keep their own timing; see signIn). */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  if (password.length > PASSWORD_LIMITS.max) return false;
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
