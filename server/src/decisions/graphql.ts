import { ApprovalRef } from '../approvals/graphql.js';
import { UserRef } from '../auth/graphql.js';
import { builder } from '../graphql/builder.js';
import type { DecisionOutcome, DecisionRow } from './entities.js';
import { decide } from './service.js';
import { DecisionOutcomeEnum } from '../policies/outcome-enum.js';

// DecisionOutcome is shared with the policies that narrow it (policies/outcome-enum.ts).
export { DecisionOutcomeEnum };

export const DecisionRef = builder.objectRef<DecisionRow>('Decision');
DecisionRef.implement({
  description: 'A decision names the revision and digest it was made on.',
  fields: (t) => ({
    id: t.exposeID('id'),
    outcome: t.field({ type: DecisionOutcomeEnum, resolve: (d) => d.outcome }),
    revision: t.exposeInt('revision'),
    digest: t.exposeString('digest'),
    reviewer: t.field({ type: UserRef, resolve: async (d, _a, ctx) => (await ctx.loaders.user.load(d.reviewerId))! }),
    comment: t.exposeString('comment', { nullable: true }),
    decidedAt: t.field({ type: 'DateTime', resolve: (d) => d.decidedAt }),
    delegatedTo: t.field({ type: UserRef, nullable: true, resolve: (d, _a, ctx) => (d.delegatedToId ? ctx.loaders.user.load(d.delegatedToId) : null) }),
    approval: t.field({ type: ApprovalRef, resolve: async (d, _a, ctx) => (await ctx.loaders.approval.load(d.approvalId))! }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  decisions: t.field({ type: [DecisionRef], resolve: (a, _x, ctx) => ctx.loaders.decisions.load(a.id) }),
}));

const DecideInput = builder.inputType('DecideInput', {
  fields: (t) => ({
    approvalId: t.globalID({ for: ApprovalRef, required: true }),
    revision: t.int({ required: true }),
    digest: t.string({ required: true }),
    comment: t.string(),
  }),
});

const EditAndApproveInput = builder.inputType('EditAndApproveInput', {
  fields: (t) => ({
    approvalId: t.globalID({ for: ApprovalRef, required: true }),
    revision: t.int({ required: true }),
    digest: t.string({ required: true }),
    action: t.field({ type: 'JSON', required: true }),
    comment: t.string(),
  }),
});

const DelegateInput = builder.inputType('DelegateInput', {
  fields: (t) => ({
    approvalId: t.globalID({ for: ApprovalRef, required: true }),
    revision: t.int({ required: true }),
    digest: t.string({ required: true }),
    toUserId: t.globalID({ for: UserRef, required: true }),
    comment: t.string(),
  }),
});

builder.mutationFields((t) => {
  const decideField = (outcome: Exclude<DecisionOutcome, 'EDIT_AND_APPROVE' | 'DELEGATE'>) =>
    t.withAuth({ authenticated: true }).field({
      type: DecisionRef,
      args: { input: t.arg({ type: DecideInput, required: true }) },
      resolve: (_r, { input }, ctx) =>
        decide(ctx.em, ctx.access, ctx.deps, outcome, {
          approvalId: input.approvalId.id,
          revision: input.revision,
          digest: input.digest,
          comment: input.comment,
        }),
    });
  return {
    approve: decideField('APPROVE'),
    reject: decideField('REJECT'),
    requestChanges: decideField('REQUEST_CHANGES'),
    editAndApprove: t.withAuth({ authenticated: true }).field({
      type: DecisionRef,
      args: { input: t.arg({ type: EditAndApproveInput, required: true }) },
      resolve: (_r, { input }, ctx) =>
        decide(ctx.em, ctx.access, ctx.deps, 'EDIT_AND_APPROVE', {
          approvalId: input.approvalId.id,
          revision: input.revision,
          digest: input.digest,
          comment: input.comment,
          action: input.action,
        }),
    }),
    delegate: t.withAuth({ authenticated: true }).field({
      type: DecisionRef,
      args: { input: t.arg({ type: DelegateInput, required: true }) },
      resolve: (_r, { input }, ctx) =>
        decide(ctx.em, ctx.access, ctx.deps, 'DELEGATE', {
          approvalId: input.approvalId.id,
          revision: input.revision,
          digest: input.digest,
          comment: input.comment,
          toUserId: input.toUserId.id,
        }),
    }),
  };
});
