import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents, stream, type AuditEventInput, type AuditEventType, type AuditPayload } from '../audit/module.js';
import { requireAdmin, type Access } from '../access.js';
import type { Deps } from '../deps.js';
import { badInput, notFound } from '../errors.js';
import { codePointLength, WEBHOOK_LIMITS } from '../limits.js';
import { NetworkPolicyRefusal } from '../net/agent-network.js';
import { outboundUrl } from '../net/outbound-url.js';
import { WebhookDelivery, WebhookEndpoint, type WebhookEndpointRow } from './entities.js';
import { payloadTypeOf, testPayload, WEBHOOK_TEST_TYPE, type WebhookEventName } from './events.js';
import { queueWebhookDelivery } from './queue.js';
import { addSecret, rotateSecret } from './secrets.js';

// Managing a tenant's webhook endpoints (admins only). Every change is audited in the tenant's
// stream with the URL's origin only: a URL's path may itself be a credential (chat webhooks), and
// the audit log is kept forever. A secret is returned once, by the call that made it.

export interface EndpointInput {
  url?: string | null;
  description?: string | null;
  eventTypes?: readonly WebhookEventName[] | null;
  enabled?: boolean | null;
}

/**
 * A webhook URL, judged like an agent URL (net/agent-network.ts): resolved, and refused when an
 * address is refused by the network policy. Delivery judges it again on every connection, so a
 * name that later resolves elsewhere is refused then.
 */
export async function checkWebhookUrl(deps: Deps, raw: string): Promise<string> {
  const text = raw.trim();
  if (text.length > WEBHOOK_LIMITS.urlMax) throw badInput(`url is longer than ${WEBHOOK_LIMITS.urlMax} characters`);
  const url = outboundUrl(text, 'url', 'receivers verify the signature instead');
  url.hash = '';
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  try {
    await deps.network.admit(url.hostname, port);
  } catch (e) {
    if (e instanceof NetworkPolicyRefusal) {
      throw badInput(`${e.hostname} is refused by the network policy that agent and webhook URLs follow (${e.rule})`, { rule: e.rule });
    }
    throw badInput(`${url.hostname} cannot be resolved`);
  }
  return url.toString();
}

function checkedEventTypes(names: readonly WebhookEventName[]): string[] {
  if (!names.length) throw badInput('eventTypes must name at least one event type');
  return [...new Set(names.map(payloadTypeOf))];
}

function checkedDescription(raw: string | null | undefined): string | null {
  const d = raw?.trim() || null;
  if (d && codePointLength(d, WEBHOOK_LIMITS.descriptionMax) > WEBHOOK_LIMITS.descriptionMax) {
    throw badInput(`description is longer than ${WEBHOOK_LIMITS.descriptionMax} characters`);
  }
  return d;
}

const origin = (url: string) => new URL(url).origin;

async function audit<T extends AuditEventType>(tem: EntityManager, access: Access, type: T, data: AuditPayload<T>) {
  const tenantId = access.viewer.tenantId;
  const event: AuditEventInput<T> = { tenantId, stream: stream.tenant(tenantId), type, actor: { type: 'user', id: access.viewer.userId }, data };
  await appendEvents(tem, [event]);
}

export function listEndpoints(em: EntityManager, access: Access): Promise<WebhookEndpointRow[]> {
  requireAdmin(access, 'manages webhooks');
  return em.find(WebhookEndpoint, { tenantId: access.viewer.tenantId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function findEndpoint(em: EntityManager, access: Access, id: string): Promise<WebhookEndpointRow> {
  requireAdmin(access, 'manages webhooks');
  const endpoint = await em.findOne(WebhookEndpoint, { id, tenantId: access.viewer.tenantId }, { refresh: true });
  if (!endpoint) throw notFound('webhook endpoint');
  return endpoint;
}

export async function createEndpoint(
  em: EntityManager,
  access: Access,
  deps: Deps,
  input: EndpointInput & { url: string; eventTypes: readonly WebhookEventName[] },
) {
  requireAdmin(access, 'manages webhooks');
  const tenantId = access.viewer.tenantId;
  const eventTypes = checkedEventTypes(input.eventTypes);
  const description = checkedDescription(input.description);
  const url = await checkWebhookUrl(deps, input.url);
  if ((await em.count(WebhookEndpoint, { tenantId })) >= WEBHOOK_LIMITS.endpointsPerTenantMax) {
    throw badInput(`a tenant has at most ${WEBHOOK_LIMITS.endpointsPerTenantMax} webhook endpoints`);
  }
  return em.transactional(async (tem) => {
    const endpoint = tem.create(WebhookEndpoint, {
      id: randomUUID(),
      tenantId,
      url,
      description,
      eventTypes,
      enabled: input.enabled ?? true,
      createdById: access.viewer.userId,
    });
    await tem.flush();
    const secret = await addSecret(tem, endpoint.id);
    await audit(tem, access, 'webhook.created', { endpointId: endpoint.id, origin: origin(url), eventTypes, enabled: endpoint.enabled });
    return { endpoint, secret };
  });
}

export async function updateEndpoint(em: EntityManager, access: Access, deps: Deps, id: string, input: EndpointInput) {
  const current = await findEndpoint(em, access, id);
  const changes: Partial<Pick<WebhookEndpointRow, 'url' | 'description' | 'eventTypes' | 'enabled'>> = {};
  if (input.url != null) changes.url = await checkWebhookUrl(deps, input.url);
  if (input.description !== undefined) changes.description = checkedDescription(input.description);
  if (input.eventTypes != null) changes.eventTypes = checkedEventTypes(input.eventTypes);
  if (input.enabled != null) changes.enabled = input.enabled;
  return em.transactional(async (tem) => {
    const endpoint = await tem.findOneOrFail(WebhookEndpoint, { id: current.id }, { refresh: true });
    tem.assign(endpoint, changes);
    await tem.flush();
    await audit(tem, access, 'webhook.updated', {
      endpointId: endpoint.id,
      origin: origin(endpoint.url),
      changed: Object.keys(changes),
      eventTypes: endpoint.eventTypes,
      enabled: endpoint.enabled,
    });
    return endpoint;
  });
}

/** Removes the endpoint with its secrets and delivery log; queued attempts find nothing to send. */
export async function deleteEndpoint(em: EntityManager, access: Access, id: string): Promise<string> {
  const endpoint = await findEndpoint(em, access, id);
  await em.transactional(async (tem) => {
    await tem.nativeDelete(WebhookEndpoint, { id: endpoint.id });
    await audit(tem, access, 'webhook.deleted', { endpointId: endpoint.id, origin: origin(endpoint.url) });
  });
  return endpoint.id;
}

export async function rotateEndpointSecret(em: EntityManager, access: Access, id: string, graceSeconds: number | null | undefined) {
  const grace = graceSeconds ?? WEBHOOK_LIMITS.rotationGraceDefaultSeconds;
  if (!Number.isInteger(grace) || grace < 0 || grace > WEBHOOK_LIMITS.rotationGraceMaxSeconds) {
    throw badInput(`graceSeconds must be between 0 and ${WEBHOOK_LIMITS.rotationGraceMaxSeconds}`);
  }
  const endpoint = await findEndpoint(em, access, id);
  return em.transactional(async (tem) => {
    const secret = await rotateSecret(tem, endpoint.id, grace);
    await audit(tem, access, 'webhook.secret_rotated', { endpointId: endpoint.id, origin: origin(endpoint.url), graceSeconds: grace });
    return { endpoint, secret };
  });
}

/** Queues a `webhook.test` message to the endpoint, whatever it subscribes to. */
export async function sendTestEvent(em: EntityManager, access: Access, deps: Deps, id: string) {
  const endpoint = await findEndpoint(em, access, id);
  if (!endpoint.enabled) throw badInput('the endpoint is disabled: enable it to send a test event');
  const deliveryId = await em.transactional((tem) =>
    queueWebhookDelivery(tem, {
      endpointId: endpoint.id,
      eventType: WEBHOOK_TEST_TYPE,
      auditEventId: null,
      payload: testPayload(endpoint.id, access.viewer.userId, new Date(), deps.config.publicUrl),
    }),
  );
  return em.findOneOrFail(WebhookDelivery, { id: deliveryId! }, { refresh: true });
}
