import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { A2ATaskState } from '../a2a/types.js';
import { ApprovalRequest } from '../approvals/entities.js';
import { manyToOneId } from '../db/relations.js';
import { Decision } from '../decisions/entities.js';

export const DELIVERY_STATUSES = ['QUEUED', 'DELIVERED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The execution record of one approved decision: at most one per decision (and per request). */
export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'delivery',
  properties: {
    id: p.uuid().primary(),
    approvalId: manyToOneId(ApprovalRequest, 'approval_id'),
    decisionId: manyToOneId(Decision, 'decision_id'),
    status: p.enum([...DELIVERY_STATUSES]),
    attempts: p.integer().default(0),
    /** `attempts` when it was last queued (0; a reviewer's retry): each queueing has the configured attempts of its own. */
    attemptsAtQueue: p.integer().default(0),
    /** The claim of the attempt sending it now (delivery/worker.ts beginAttempt): until when, and whose. */
    claimedUntil: p.datetime().nullable(),
    claimId: p.uuid().nullable(),
    messageId: p.text(),
    /** metadata.approval.signature of the message: signed at the first attempt, then reused by every retry. */
    approvalSignature: p.text().nullable(),
    lastError: p.text().nullable(),
    observedTaskState: p.text().$type<A2ATaskState>().nullable(),
    observedAt: p.datetime().nullable(),
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
  uniques: [{ properties: ['approvalId'] }, { properties: ['decisionId'] }],
});

export type DeliveryRow = InferEntity<typeof Delivery>;
