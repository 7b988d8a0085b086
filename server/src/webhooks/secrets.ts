import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Webhook } from 'standardwebhooks';
import { sql } from '../db/sql.js';

// Signing secrets of an endpoint. Standard Webhooks' symmetric scheme: HMAC-SHA256 over
// `{webhook-id}.{webhook-timestamp}.{body}` with a `whsec_` secret (24 to 64 random bytes, base64).
// After a rotation the old secret keeps signing beside the new one until its grace period ends;
// the receiver accepts a message when any one signature verifies.

export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Stores a new secret of an endpoint (in the caller's transaction) and returns it: the one time anyone sees it. */
export async function addSecret(tem: EntityManager, endpointId: string): Promise<string> {
  const secret = generateSecret();
  await sql(tem, 'insert into webhook_secret (id, endpoint_id, secret) values (?, ?, ?)', [randomUUID(), endpointId, secret]);
  return secret;
}

/** The secrets signing now, newest first. */
export async function signingSecrets(em: EntityManager, endpointId: string): Promise<string[]> {
  const rows = await sql<{ secret: string }>(
    em,
    'select secret from webhook_secret where endpoint_id = ? and (expires_at is null or expires_at > now()) order by created_at desc, id',
    [endpointId],
  );
  return rows.map((r) => r.secret);
}

/**
 * A rotation: the live secrets stop signing after the grace period (at once with 0), secrets
 * past theirs are removed, and a new one is added.
 */
export async function rotateSecret(tem: EntityManager, endpointId: string, graceSeconds: number): Promise<string> {
  await sql(
    tem,
    `update webhook_secret set expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => ?))
      where endpoint_id = ? and (expires_at is null or expires_at > now())`,
    [graceSeconds, endpointId],
  );
  await sql(tem, 'delete from webhook_secret where endpoint_id = ? and expires_at <= now()', [endpointId]);
  return addSecret(tem, endpointId);
}

/** The webhook-signature header: one `v1,<base64>` per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], messageId: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(messageId, at, body)).join(' ');
}
