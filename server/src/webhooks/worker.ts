import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { sql } from '../db/sql.js';
import { storable } from '../db/storable.js';
import type { Deps } from '../deps.js';
import type { JobDefinition } from '../jobs/job.js';
import { classifyConnectFailure, httpStatusReason, readBodyExcerpt } from '../net/failure.js';
import { WebhookDelivery, WebhookEndpoint } from './entities.js';
import { queueAttempt, WEBHOOK_JOB } from './queue.js';
import { signatureHeader, signingSecrets } from './secrets.js';

// One attempt of a webhook delivery: POST the stored body, signed with every live secret of the
// endpoint, to its URL through the agent network (the same policy as agent URLs: every address
// judged, the judged address dialled, no redirect followed). A 2xx answer delivers it. Anything
// else is logged, and the next attempt is queued in the same transaction with exponential backoff
// and jitter, until the last allowed attempt fails the delivery. A worker that dies mid-attempt
// leaves its job to be run again (jobs/recovery.ts): the receiver may see a webhook-id twice, which
// Standard Webhooks tells receivers to expect.

/** How long a receiver may take to answer (Standard Webhooks recommends 15 to 30 s). */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** The longest wait between two attempts. */
export const RETRY_DELAY_MAX_SECONDS = 12 * 3600;
/** Characters of a failing receiver's answer kept in the log. */
const ANSWER_EXCERPT_CHARS = 300;

/** Seconds to wait after the failed attempt `attempt` (1-based): base, 2x, 4x, … capped, then ±10 %. */
export function retryDelaySeconds(baseSeconds: number, attempt: number, random: () => number = Math.random): number {
  const delay = Math.min(baseSeconds * 2 ** (attempt - 1), RETRY_DELAY_MAX_SECONDS);
  return delay * (0.9 + 0.2 * random());
}

interface Outcome {
  statusCode: number | null;
  /** Null when delivered. */
  error: string | null;
}

async function send(deps: Deps, url: string, messageId: string, body: string, secrets: string[], at: Date): Promise<Outcome> {
  try {
    const res = await deps.network.fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Taskbay-Webhooks',
        'webhook-id': messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signatureHeader(secrets, messageId, at, body),
      },
      body,
    });
    if (res.status >= 200 && res.status < 300) {
      await res.body?.cancel().catch(() => undefined);
      return { statusCode: res.status, error: null };
    }
    const excerpt = (await readBodyExcerpt(res)).slice(0, ANSWER_EXCERPT_CHARS).trim();
    return { statusCode: res.status, error: `${httpStatusReason(res.status)}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (e) {
    return { statusCode: null, error: classifyConnectFailure(e, WEBHOOK_TIMEOUT_MS).reason };
  }
}

/** One attempt of a PENDING delivery (nothing for one delivered, failed or gone with its endpoint). */
export async function attemptDelivery(em: EntityManager, deps: Deps, deliveryId: string): Promise<void> {
  const config: Pick<Config, 'webhookMaxAttempts' | 'webhookRetryBaseSeconds'> = deps.config;
  const delivery = await em.findOne(WebhookDelivery, { id: deliveryId }, { refresh: true });
  if (delivery?.status !== 'PENDING') return;
  const endpoint = await em.findOne(WebhookEndpoint, { id: delivery.endpointId }, { refresh: true });
  if (!endpoint) return;
  if (!endpoint.enabled) {
    // Disabled while this one waited: it is not sent, and says why.
    await sql(
      em,
      `update webhook_delivery set status = 'FAILED', last_error = ?, next_attempt_at = null, updated_at = now() where id = ? and status = 'PENDING'`,
      ['not sent: the endpoint is disabled', deliveryId],
    );
    return;
  }
  const number = delivery.attempts + 1;
  const at = new Date();
  const started = performance.now();
  const outcome = await send(deps, endpoint.url, delivery.messageId, delivery.payload, await signingSecrets(em, endpoint.id), at);
  const durationMs = Math.round(performance.now() - started);
  const error = outcome.error === null ? null : storable(outcome.error);
  const last = number >= config.webhookMaxAttempts;
  const nextRetryAt = error !== null && !last ? new Date(Date.now() + retryDelaySeconds(config.webhookRetryBaseSeconds, number) * 1000) : null;
  const status = error === null ? 'DELIVERED' : last ? 'FAILED' : 'PENDING';
  await em.transactional(async (tem) => {
    // Only the attempt it read: a duplicate run of the job (a worker presumed dead) records nothing twice.
    const updated = await sql<{ id: string }>(
      tem,
      `update webhook_delivery set attempts = ?, status = ?, last_status_code = ?, last_error = ?, next_attempt_at = ?,
              delivered_at = case when ? = 'DELIVERED' then now() else null end, updated_at = now()
        where id = ? and status = 'PENDING' and attempts = ? returning id`,
      [number, status, outcome.statusCode, error, nextRetryAt, status, deliveryId, delivery.attempts],
    );
    if (!updated.length) return;
    await sql(
      tem,
      'insert into webhook_attempt (id, delivery_id, number, at, status_code, error, duration_ms, next_retry_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
      [randomUUID(), deliveryId, number, at, outcome.statusCode, error, durationMs, nextRetryAt],
    );
    if (nextRetryAt) await queueAttempt(tem, deliveryId, nextRetryAt);
  });
}

export const webhookJob: JobDefinition = {
  name: WEBHOOK_JOB,
  async run(payload, _helpers, { orm, deps }) {
    const { deliveryId } = payload as { deliveryId: string };
    await attemptDelivery(orm.em.fork(), deps, deliveryId);
  },
};
