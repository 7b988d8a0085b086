import type { EntityManager } from '@mikro-orm/postgresql';
import { registerObservationHook } from '../tasks/module.js';
import { manyBy } from '../graphql/loaders.js';
import { Delivery, type DeliveryRow } from './entities.js';
import { recordDeliveryOutcomes } from './outcome.js';
import { deliverJob } from './worker.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { type DeliveryCarrier, registerDeliveryCarrier } from './carriers.js';
export { sendAfterCommit } from './direct.js';
export { ExecutionRef } from './graphql.js';
export { queueDelivery, queueFallbackJob } from './queue.js';

// Delivery: the approved action sent to the agent once, its attempts and the outcome the agent reports.

const loaders = (em: EntityManager) => ({ deliveries: manyBy<DeliveryRow>(em, Delivery, 'approvalId', { createdAt: 'asc' }) });
type DeliveryLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends DeliveryLoaders {}
}

// The first later state of a task a delivery went to is that delivery's outcome.
registerObservationHook('delivery', { taskAnswered: recordDeliveryOutcomes });

export const deliveryModule = defineModule({
  name: 'delivery',
  entities: [Delivery],
  loaders,
  jobs: [deliverJob],
});
