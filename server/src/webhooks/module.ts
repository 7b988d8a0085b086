import { WEBHOOK_ENTITIES } from './entities.js';
import { webhookJob } from './worker.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { WebhookEndpointCache, WEBHOOKS_CHANNEL } from './endpoint-cache.js';
export { queueWebhooksFor } from './queue.js';

// Standard Webhooks: endpoints, their secrets, and the deliveries of audit events to them.

export const webhooksModule = defineModule({
  name: 'webhooks',
  entities: WEBHOOK_ENTITIES,
  jobs: [webhookJob],
});
