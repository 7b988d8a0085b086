import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../deps.js';
import { inRequestScope, requestScope } from '../log.js';
import { deliver } from './worker.js';

// The deciding instance sends an approved A2A delivery itself, right after the decision's
// transaction committed: the agent does not wait for the job queue's pick-up (the decision-to-agent
// time, docs/PERFORMANCE.md). The delivery's job, added in that transaction a grace later (delivery/queue.ts
// queueFallbackJob), is the fallback: it sends if this never happened or did not finish, and comes
// back after a failure. The claim on the delivery (worker.ts) keeps the two from sending at once.

/**
 * Starts the delivery's first attempt without awaiting it (the decision's answer does not wait).
 * Its errors are logged; a graceful stop waits for it (deps.inFlight); once stopping it is left
 * to the job.
 */
export function sendAfterCommit(em: EntityManager, deps: Deps, deliveryId: string): void {
  // Its log lines keep the request's id; it outlives the request, so none of the request's
  // freshness proofs (lib/fresh-cache.ts) are carried over.
  const reqId = requestScope()?.reqId;
  const attempt = () => deliver(em.fork(), deps, deliveryId, { kind: 'decision' });
  deps.inFlight.start(`delivery ${deliveryId} after its decision`, reqId ? () => inRequestScope({ reqId }, attempt) : attempt, {
    name: 'delivery send',
    attributes: { 'taskbay.delivery.id': deliveryId, 'taskbay.delivery.sender': 'decision' },
  });
}
