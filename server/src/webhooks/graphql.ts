import type { EntityManager } from '@mikro-orm/postgresql';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { DomainError } from '../errors.js';
import { builder } from '../graphql/builder.js';
import { ORDER_NEWEST, pageQuery, toConnection } from '../graphql/pagination.js';
import {
  WEBHOOK_DELIVERY_STATUSES,
  WebhookAttempt,
  WebhookDelivery,
  WebhookSecret,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  type WebhookSecretRow,
} from './entities.js';
import { eventNameOf, WEBHOOK_EVENT_NAMES, WEBHOOK_EVENTS, type WebhookEventName } from './events.js';
import { createEndpoint, deleteEndpoint, findEndpoint, listEndpoints, rotateEndpointSecret, sendTestEvent, updateEndpoint } from './service.js';

// Webhooks in the API, for admins only: endpoints with the events they receive, their delivery
// log, secret rotation and a test event (docs/WEBHOOKS.md).

export const WebhookEventTypeEnum = builder.enumType('WebhookEventType', {
  values: Object.fromEntries(WEBHOOK_EVENT_NAMES.map((n) => [n, { description: `\`${WEBHOOK_EVENTS[n].type}\`: ${WEBHOOK_EVENTS[n].about}.` }])) as Record<
    WebhookEventName,
    { description: string }
  >,
});

const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', { values: WEBHOOK_DELIVERY_STATUSES });

const WebhookSecretRef = builder.objectRef<WebhookSecretRow>('WebhookSecret').implement({
  description: 'A signing secret of an endpoint; the secret itself is shown only by the mutation that made it.',
  fields: (t) => ({
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Set by a rotation: it signs beside the new secret until then.',
      resolve: (s) => s.expiresAt ?? null,
    }),
  }),
});

const WebhookAttemptRef = builder.objectRef<WebhookAttemptRow>('WebhookAttempt').implement({
  fields: (t) => ({
    number: t.exposeInt('number'),
    at: t.field({ type: 'DateTime', resolve: (a) => a.at }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The receiver's HTTP status; null when no answer came." }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed; null when delivered.' }),
    durationMs: t.exposeInt('durationMs'),
    nextRetryAt: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.nextRetryAt ?? null }),
  }),
});

type DeliveryWithAttempts = WebhookDeliveryRow & { attemptRows: WebhookAttemptRow[] };

const WebhookDeliveryRef = builder.objectRef<DeliveryWithAttempts>('WebhookDelivery').implement({
  description: 'One message to one endpoint: every attempt sends the same body under the same webhook-id.',
  fields: (t) => ({
    id: t.exposeID('id'),
    webhookId: t.exposeString('messageId', { description: 'The webhook-id header.' }),
    type: t.exposeString('eventType', { description: 'The payload type, e.g. approval.decided (webhook.test for a test event).' }),
    status: t.field({ type: WebhookDeliveryStatusEnum, resolve: (d) => d.status }),
    payload: t.field({ type: 'JSON', resolve: (d) => JSON.parse(d.payload) }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.deliveredAt ?? null }),
    nextAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => (d.status === 'PENDING' ? (d.nextAttemptAt ?? null) : null) }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    attempts: t.field({ type: [WebhookAttemptRef], resolve: (d) => d.attemptRows }),
  }),
});

async function withAttempts(em: EntityManager, rows: WebhookDeliveryRow[]): Promise<DeliveryWithAttempts[]> {
  const attempts = rows.length ? await em.find(WebhookAttempt, { deliveryId: { $in: rows.map((r) => r.id) } }, { orderBy: { number: 'asc' } }) : [];
  return rows.map((r) => ({ ...r, attemptRows: attempts.filter((a) => a.deliveryId === r.id) }));
}

export const WebhookEndpointRef = builder.objectRef<WebhookEndpointRow>('WebhookEndpoint');
builder.node(WebhookEndpointRef, {
  id: { resolve: (e) => e.id },
  loadOne: async (id, ctx) => (ctx.access?.isAdmin ? findEndpoint(ctx.em, ctx.access, id).catch(() => null) : null),
  fields: (t) => ({
    url: t.exposeString('url'),
    description: t.exposeString('description', { nullable: true }),
    eventTypes: t.field({ type: [WebhookEventTypeEnum], resolve: (e) => e.eventTypes.map(eventNameOf).filter((n): n is WebhookEventName => n !== null) }),
    enabled: t.exposeBoolean('enabled'),
    createdAt: t.field({ type: 'DateTime', resolve: (e) => e.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (e) => e.updatedAt }),
    secrets: t.field({
      type: [WebhookSecretRef],
      description: 'The secrets signing now, newest first.',
      resolve: (e, _a, ctx) =>
        ctx.em.find(
          WebhookSecret,
          { endpointId: e.id, $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }] },
          { orderBy: { createdAt: 'desc', id: 'asc' } },
        ),
    }),
    deliveries: t.connection(
      {
        type: WebhookDeliveryRef,
        description: 'The delivery log, newest first.',
        resolve: async (e, args, ctx) => {
          if (args.last != null || args.before != null) throw new DomainError('BAD_USER_INPUT', 'use first/after');
          const page = pageQuery(args);
          const rows = await ctx.em.find(WebhookDelivery, { $and: [{ endpointId: e.id }, page.where] }, { orderBy: ORDER_NEWEST, limit: page.limit });
          return toConnection(await withAttempts(ctx.em, rows), page.limit, args.after);
        },
      },
      { name: 'WebhookDeliveryConnection' },
      { name: 'WebhookDeliveryEdge' },
    ),
  }),
});

const WebhookEndpointSecretRef = builder.objectRef<{ endpoint: WebhookEndpointRow; secret: string }>('WebhookEndpointSecret').implement({
  description: 'An endpoint with a secret just made: the only time the secret is shown. Keep it where the receiver reads it.',
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpointRef, resolve: (r) => r.endpoint }),
    secret: t.exposeString('secret', { description: 'whsec_ followed by base64 of 32 random bytes (Standard Webhooks).' }),
  }),
});

const CreateWebhookEndpointInput = builder.inputType('CreateWebhookEndpointInput', {
  fields: (t) => ({
    url: t.string({ required: true }),
    description: t.string(),
    eventTypes: t.field({ type: [WebhookEventTypeEnum], required: true }),
    enabled: t.boolean(),
  }),
});

const UpdateWebhookEndpointInput = builder.inputType('UpdateWebhookEndpointInput', {
  fields: (t) => ({
    id: t.globalID({ for: WebhookEndpointRef, required: true }),
    url: t.string(),
    description: t.string(),
    eventTypes: t.field({ type: [WebhookEventTypeEnum] }),
    enabled: t.boolean(),
  }),
});

builder.queryFields((t) => ({
  webhookEndpoints: t.withAuth({ admin: true }).field({
    type: [WebhookEndpointRef],
    description: "The tenant's webhook endpoints (admins).",
    resolve: (_r, _a, ctx) => listEndpoints(ctx.em, ctx.access),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.withAuth({ admin: true }).field({
    type: WebhookEndpointSecretRef,
    description: 'Registers an endpoint (its URL follows the network policy of agent URLs) and returns its signing secret, once.',
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true }) },
    resolve: (_r, { input }, ctx) => createEndpoint(ctx.em, ctx.access, ctx.deps, input),
  }),
  updateWebhookEndpoint: t.withAuth({ admin: true }).field({
    type: WebhookEndpointRef,
    args: { input: t.arg({ type: UpdateWebhookEndpointInput, required: true }) },
    resolve: (_r, { input: { id, ...input } }, ctx) => updateEndpoint(ctx.em, ctx.access, ctx.deps, id.id, input),
  }),
  deleteWebhookEndpoint: t.withAuth({ admin: true }).field({
    type: 'ID',
    description: 'Removes the endpoint, its secrets and its delivery log; returns its id.',
    args: { id: t.arg.globalID({ for: WebhookEndpointRef, required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await deleteEndpoint(ctx.em, ctx.access, id.id);
      return encodeGlobalID('WebhookEndpoint', id.id);
    },
  }),
  rotateWebhookSecret: t.withAuth({ admin: true }).field({
    type: WebhookEndpointSecretRef,
    description:
      'A new signing secret (returned once); the current ones keep signing beside it for graceSeconds (default 86400, at most 604800; 0 stops them now).',
    args: { id: t.arg.globalID({ for: WebhookEndpointRef, required: true }), graceSeconds: t.arg.int() },
    resolve: (_r, { id, graceSeconds }, ctx) => rotateEndpointSecret(ctx.em, ctx.access, id.id, graceSeconds),
  }),
  sendWebhookTestEvent: t.withAuth({ admin: true }).field({
    type: WebhookDeliveryRef,
    description: 'Queues a webhook.test message to the endpoint, signed and retried like any other.',
    args: { id: t.arg.globalID({ for: WebhookEndpointRef, required: true }) },
    resolve: async (_r, { id }, ctx) => (await withAttempts(ctx.em, [await sendTestEvent(ctx.em, ctx.access, ctx.deps, id.id)]))[0]!,
  }),
}));
