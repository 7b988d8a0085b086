import { WEBHOOK_ENTITIES } from './entities.js';
import { webhookJob } from './worker.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import { WEBHOOKS_CHANNEL, WebhookEndpointCache } from './endpoint-cache.js';
import { queueWebhooksFor } from './queue.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.

// Standard Webhooks: endpoints, their secrets, and the deliveries of audit events to them.

export const webhooksModule = defineModule({
  name: 'webhooks',
  entities: WEBHOOK_ENTITIES,
  jobs: [webhookJob],
  // Deliveries are queued in the transaction of the audit events they tell (queue.ts), to the
  // endpoints this instance remembers while the LISTEN loop keeps them fresh.
  start({ config, barrier }) {
    const endpoints = new WebhookEndpointCache(barrier);
    return {
      appendedEvents: queueWebhooksFor(config, endpoints),
      channels: { [WEBHOOKS_CHANNEL]: (tenantId) => endpoints.invalidateTenant(tenantId) },
    };
  },
});
