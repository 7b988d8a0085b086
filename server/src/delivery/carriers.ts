import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import type { Deps } from '../deps.js';

// A kind of approval whose answer reaches the agent another way than one message per delivery
// (AG-UI: one resume of the whole run). Its module registers here (agui/module.ts), so delivery/
// names none of them: a reviewer's retry of such a delivery goes through its carrier.

export interface DeliveryCarrier {
  /** Whether this carrier takes the approval's answer. */
  carries(approval: Pick<ApprovalRow, 'key' | 'source'>): boolean;
  /** Sends a retried delivery again its own way; false when the delivery is not one it carries. */
  retry(em: EntityManager, deps: Deps, deliveryId: string, attempt: number, maxAttempts: number): Promise<boolean>;
}

const carriers = new Map<string, DeliveryCarrier>();

export function registerDeliveryCarrier(name: string, carrier: DeliveryCarrier): void {
  const known = carriers.get(name);
  if (known && known !== carrier) throw new Error(`a delivery carrier named ${name} is already registered`);
  carriers.set(name, carrier);
}

export function carriedElsewhere(approval: Pick<ApprovalRow, 'key' | 'source'>): boolean {
  for (const c of carriers.values()) if (c.carries(approval)) return true;
  return false;
}

/** A retried delivery marked for its carrier: true once one of them sent it. */
export async function retryByCarrier(em: EntityManager, deps: Deps, deliveryId: string, attempt: number, maxAttempts: number): Promise<boolean> {
  for (const c of carriers.values()) if (await c.retry(em, deps, deliveryId, attempt, maxAttempts)) return true;
  return false;
}
