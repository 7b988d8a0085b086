import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppendedEventsHook } from '../audit/module.js';
import type { AuditEventRow } from '../audit/entities.js';
import type { Config } from '../config.js';
import { addJob, sql } from '../db/sql.js';
import type { WebhookEndpointCache } from './endpoint-cache.js';
import { eventPayload, webhookTypeOf, type ApprovalSnapshot } from './events.js';

// Queueing webhook deliveries. The one producer of event deliveries is the hook appendEvents runs
// in the transaction that writes the audit events (audit/appended.ts): a change that rolls back
// sends nothing, one that commits has its deliveries and their jobs. The test button queues one
// more (service.ts). worker.ts sends them.

export const WEBHOOK_JOB = 'deliver_webhook';

/**
 * graphile-worker's own attempts of one job: a send that failed is not one of them (the worker
 * records it and queues the next attempt itself); these cover a worker that could not record an
 * attempt (the database went away) or died during one.
 */
const JOB_ATTEMPTS = 10;

/** The webhook-id: fixed per delivery, so every retry carries the same one (no "." in it, as the specification asks). */
export const webhookMessageId = (deliveryId: string) => `msg_${deliveryId.replaceAll('-', '')}`;

/** Queues the first (or, after a failure, the next) attempt of a delivery in the caller's transaction. */
export async function queueAttempt(tem: EntityManager, deliveryId: string, runAt?: Date): Promise<void> {
  await addJob(tem, WEBHOOK_JOB, { deliveryId }, { runAt, jobKey: `webhook:${deliveryId}`, maxAttempts: JOB_ATTEMPTS });
}

/** Writes a delivery and queues its first attempt; null when the endpoint has this audit event already. */
export async function queueWebhookDelivery(
  tem: EntityManager,
  d: { endpointId: string; eventType: string; auditEventId: string | null; payload: string },
): Promise<string | null> {
  const id = randomUUID();
  const inserted = await sql<{ id: string }>(
    tem,
    `insert into webhook_delivery (id, endpoint_id, message_id, event_type, audit_event_id, payload, status, attempts, next_attempt_at)
     values (?, ?, ?, ?, ?, ?, 'PENDING', 0, now())
     on conflict (endpoint_id, audit_event_id) do nothing returning id`,
    [id, d.endpointId, webhookMessageId(id), d.eventType, d.auditEventId, d.payload],
  );
  if (!inserted.length) return null;
  await queueAttempt(tem, id);
  return id;
}

async function approvalOf(tem: EntityManager, row: AuditEventRow): Promise<ApprovalSnapshot | null> {
  const approvalId = row.data.approvalId;
  if (typeof approvalId !== 'string') return null;
  const [a] = await sql<ApprovalSnapshot>(
    tem,
    `select id, title, status, source, risk, revision, digest, agent_id as "agentId", task_id as "taskId", expires_at as "expiresAt",
            external_id as "externalId"
       from approval where id = ?`,
    [approvalId],
  );
  return a ?? null;
}

/**
 * The appended-events hook: one delivery per enabled endpoint of the event's tenant subscribed to
 * its type. Events no webhook tells cost nothing; the others take the tenant's endpoints from
 * the instance's memory (endpoint-cache.ts; one query when not remembered) and, when one wants
 * the event, one query for the approval.
 */
export function queueWebhooksFor(config: Pick<Config, 'publicUrl'>, endpointCache: WebhookEndpointCache): AppendedEventsHook {
  return async (tem, rows) => {
    const told = rows.flatMap((row) => {
      const type = webhookTypeOf(row.type);
      return type ? [{ row, type }] : [];
    });
    if (!told.length) return;
    const tenants = [...new Set(told.map((t) => t.row.tenantId))];
    const endpoints = await endpointCache.endpointsOf(tem, tenants);
    for (const { row, type } of told) {
      const targets = endpoints.filter((e) => e.tenant_id === row.tenantId && e.event_types.includes(type));
      if (!targets.length) continue;
      const payload = eventPayload(type, row, await approvalOf(tem, row), config.publicUrl);
      for (const e of targets) await queueWebhookDelivery(tem, { endpointId: e.id, eventType: type, auditEventId: row.id, payload });
    }
  };
}
