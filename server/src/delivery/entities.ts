import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { A2ATaskState } from '../a2a/types.js';

export type DeliveryStatus = 'QUEUED' | 'DELIVERED' | 'FAILED';

/** The execution record of one approved decision: at most one per decision. */
export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'delivery',
  properties: {
    id: p.uuid().primary(),
    approvalId: p.uuid(),
    decisionId: p.uuid(),
    status: p.text().$type<DeliveryStatus>(),
    attempts: p.integer().default(0),
    messageId: p.text(),
    lastError: p.text().nullable(),
    observedTaskState: p.text().$type<A2ATaskState>().nullable(),
    observedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type DeliveryRow = InferEntity<typeof Delivery>;
