import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export type DecisionOutcome = 'APPROVE' | 'EDIT_AND_APPROVE' | 'REJECT' | 'REQUEST_CHANGES' | 'DELEGATE';

export const Decision = defineEntity({
  name: 'Decision',
  tableName: 'decision',
  properties: {
    id: p.uuid().primary(),
    approvalId: p.uuid(),
    outcome: p.text().$type<DecisionOutcome>(),
    revision: p.integer(),
    digest: p.text(),
    reviewerId: p.uuid(),
    comment: p.text().nullable(),
    delegatedToId: p.uuid().nullable(),
    decidedAt: p.datetime().onCreate(() => new Date()),
  },
});

export type DecisionRow = InferEntity<typeof Decision>;
