import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Tenant, User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';

// Outgoing webhooks of a tenant (docs/WEBHOOKS.md). Rows of the log go with their endpoint
// (`on delete cascade`).

export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoint',
  properties: {
    id: p.uuid().primary(),
    tenantId: manyToOneId(Tenant, 'tenant_id'),
    url: p.text(),
    description: p.text().nullable(),
    /** Payload types (`approval.decided`, ...: webhooks/events.ts) this endpoint receives. */
    eventTypes: p.array<string>().columnType('text[]'),
    enabled: p.boolean().default(true),
    createdById: manyToOneId(User, 'created_by_id').nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date())
      .defaultRaw('now()'),
  },
  indexes: [{ name: 'webhook_endpoint_tenant', properties: ['tenantId'] }],
});

/**
 * A signing secret (`whsec_` + base64 of 32 random bytes). Stored as it is: HMAC signing needs it
 * (docs/SECURITY.md says how it is kept). expiresAt: set when a rotation replaced it; it signs
 * alongside the new one until then.
 */
export const WebhookSecret = defineEntity({
  name: 'WebhookSecret',
  tableName: 'webhook_secret',
  properties: {
    id: p.uuid().primary(),
    endpointId: manyToOneId(WebhookEndpoint, 'endpoint_id').deleteRule('cascade'),
    secret: p.text(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    expiresAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'webhook_secret_endpoint', properties: ['endpointId'] }],
});

/** One message to one endpoint: the same body and webhook-id (messageId) on every attempt. */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  properties: {
    id: p.uuid().primary(),
    endpointId: manyToOneId(WebhookEndpoint, 'endpoint_id').deleteRule('cascade'),
    messageId: p.text().unique(),
    eventType: p.text(),
    /** The audit event it tells of; null for a test event. */
    auditEventId: p.uuid().nullable(),
    /** The exact JSON body sent (and signed). */
    payload: p.text(),
    status: p.enum([...WEBHOOK_DELIVERY_STATUSES]),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date())
      .defaultRaw('now()'),
    deliveredAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['endpointId', 'auditEventId'] }],
  indexes: [{ name: 'webhook_delivery_log', expression: 'create index webhook_delivery_log on webhook_delivery (endpoint_id, created_at desc, id desc)' }],
});

/** One attempt of a delivery, as the delivery log shows it. */
export const WebhookAttempt = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempt',
  properties: {
    id: p.uuid().primary(),
    deliveryId: manyToOneId(WebhookDelivery, 'delivery_id').deleteRule('cascade'),
    number: p.integer(),
    at: p.datetime(),
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
    nextRetryAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['deliveryId', 'number'] }],
});

export const WEBHOOK_ENTITIES = [WebhookEndpoint, WebhookSecret, WebhookDelivery, WebhookAttempt];

export type WebhookEndpointRow = InferEntity<typeof WebhookEndpoint>;
export type WebhookDeliveryRow = InferEntity<typeof WebhookDelivery>;
export type WebhookAttemptRow = InferEntity<typeof WebhookAttempt>;
export type WebhookSecretRow = InferEntity<typeof WebhookSecret>;
