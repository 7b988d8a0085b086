import { ApprovalRef } from '../approvals/module.js';
import { TaskStateEnum, toGqlState } from '../tasks/module.js';
import { builder } from '../graphql/builder.js';
import type { DeliveryRow } from './entities.js';
import { retryDelivery } from './queue.js';

// Delivery's part of Approval: its execution, and retrying a failed one.

export const ExecutionStatusEnum = builder.enumType('ExecutionStatus', { values: ['QUEUED', 'DELIVERED', 'FAILED'] as const });

export const ExecutionRef = builder.objectRef<DeliveryRow>('Execution').implement({
  description: 'The delivery of an approved action: correlation with the task state observed after, not proof.',
  fields: (t) => ({
    status: t.field({ type: ExecutionStatusEnum, resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts'),
    messageId: t.exposeString('messageId'),
    lastError: t.exposeString('lastError', { nullable: true }),
    observedTaskState: t.field({ type: TaskStateEnum, nullable: true, resolve: (d) => (d.observedTaskState ? toGqlState(d.observedTaskState) : null) }),
    observedAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.observedAt ?? null }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  execution: t.field({
    type: ExecutionRef,
    nullable: true,
    resolve: async (a, _x, ctx) => (await ctx.loaders.deliveries.load(a.id))[0] ?? null,
  }),
}));

builder.mutationFields((t) => ({
  retryDelivery: t.withAuth({ authenticated: true }).field({
    type: ApprovalRef,
    description: 'Queue a FAILED delivery again (same decision, same messageId).',
    args: { approvalId: t.arg.globalID({ for: ApprovalRef, required: true }) },
    resolve: (_r, { approvalId }, ctx) => retryDelivery(ctx.em, ctx.access, ctx.deps, approvalId.id),
  }),
}));
