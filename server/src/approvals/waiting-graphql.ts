import { authorize, canView } from '../auth/module.js';
import { TaskRef } from '../tasks/module.js';
import { DomainError } from '../errors.js';
import { builder } from '../graphql/builder.js';
import { freshEventScope } from '../graphql/context.js';
import { tasksWaitingForInput, WAITING_REASONS, type WaitingItem } from './waiting.js';

// GraphQL of the inbox's "waiting for input" section (approvals/waiting.ts).

const WaitingReasonEnum = builder.enumType('WaitingReason', {
  description:
    'FORM: asks for a structured form. A2UI: shows an A2UI surface. IGNORED_PART: an extension part was left as ordinary data (detail says why). MESSAGE: asks in its message.',
  values: WAITING_REASONS,
});

const WaitingTaskRef = builder.objectRef<WaitingItem>('WaitingTask').implement({
  description: 'A task waiting for a person whose latest agent message opened no approval.',
  fields: (t) => ({
    task: t.field({ type: TaskRef, resolve: (w) => w.task }),
    reason: t.field({ type: WaitingReasonEnum, resolve: (w) => w.reason }),
    detail: t.string({ description: 'One or more sentences for the reviewer; agent text is quoted, render it as text.', resolve: (w) => w.detail }),
    messageId: t.string({ nullable: true, resolve: (w) => w.message?.messageId ?? null }),
    since: t.field({ type: 'DateTime', resolve: (w) => w.message?.createdAt ?? w.task.updatedAt }),
  }),
});

const WAITING_MAX = 100;

builder.queryFields((t) => ({
  tasksWaitingForInput: t.withAuth({ authenticated: true }).field({
    type: [WaitingTaskRef],
    description: 'Tasks waiting for a person (INPUT_REQUIRED) that have no approval for their latest message, newest first.',
    args: { first: t.arg.int({ defaultValue: 50 }) },
    resolve: (_r, { first }, ctx) => {
      const n = first ?? 50;
      if (n < 1 || n > WAITING_MAX) throw new DomainError('BAD_USER_INPUT', `first must be 1 to ${WAITING_MAX}`);
      return tasksWaitingForInput(ctx.em, ctx.access, n);
    },
  }),
}));

builder.subscriptionFields((t) => ({
  waitingForInputChanged: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    description: 'A task of the viewer changed (state or messages); the inbox re-reads tasksWaitingForInput.',
    subscribe: (_r, _a, ctx) =>
      ctx.pubsub.subscribe('task', {
        when: (e) => e.tenantId === ctx.viewer.tenantId,
        visible: async (e) => {
          freshEventScope(ctx);
          const task = await ctx.loaders.task.load(e.taskId);
          return !!task && (await canView(ctx.access, task));
        },
      }),
    resolve: async (e, _a, ctx) => authorize(ctx.access, 'VIEW', 'task', await ctx.loaders.task.load(e.taskId)),
  }),
}));
