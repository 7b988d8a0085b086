import { signedApprovalOf, type SignedApprovalView } from '../approval-signing/module.js';
import { ApprovalRef } from '../approvals/module.js';
import { UserRef } from '../auth/module.js';
import { DecisionOutcomeEnum } from '../policies/module.js';
import type { ApprovalRow } from '../approvals/entities.js';
import { builder } from '../graphql/builder.js';
import type { Context } from '../graphql/context.js';
import type { DecisionOutcome, DecisionRow } from './entities.js';
import { decide } from './service.js';
import { delegateCandidates, whyCannotDecide } from './who-decides.js';

// DecisionOutcome is shared with the policies that narrow it (policies/outcome-enum.ts).
export { DecisionOutcomeEnum };

const SignedApprovalRef = builder.objectRef<SignedApprovalView>('SignedApproval').implement({
  description:
    'Taskbay\'s signature over one approving decision (docs/VERIFYING-APPROVALS.md, "Approvals of requests without an A2A task"): a compact JWS (EdDSA, typ taskbay-approval+jwt) by the key published at /.well-known/jwks.json, whose claims are iss, iat, requestId, decisionId, revision, revisionDigest, taskId (the agent\'s task id, or null) and, when the request has one, externalId. The ids are the local ones an A2A approved message carries in metadata.approval.',
  fields: (t) => ({
    requestId: t.exposeID('requestId', { description: "The request's local id (a UUID), as in the claims; not the Approval's node id." }),
    decisionId: t.exposeID('decisionId', { description: "The approving decision's id (a UUID), as in the claims." }),
    revision: t.exposeInt('revision'),
    revisionDigest: t.exposeString('revisionDigest', { description: 'SHA-256 hex of the canonical JSON of action.' }),
    signature: t.exposeString('signature', { description: 'The compact JWS.' }),
    action: t.field({
      type: 'JSON',
      description:
        'The approved (possibly edited) action exactly as the digest covers it: {kind, text, data} (data null when absent) or {kind, form, values}; a command as it was sealed.',
      resolve: (v) => v.action,
    }),
    externalId: t.exposeString('externalId', { nullable: true, description: "The request's externalId, also a claim; null when it has none." }),
  }),
});

/** A decision's signed approval as it can be shown (approval-signing/signed-approval.ts), read through the request's loaders. */
async function signedApprovalOfDecision(ctx: Context, d: DecisionRow, request?: ApprovalRow | null): Promise<SignedApprovalView | null> {
  if (!d.signature) return null;
  const approval = request ?? (await ctx.loaders.approval.load(d.approvalId));
  if (!approval) return null;
  // The decided revision's action: the request's own while it is at that revision (a final approval leaves it there).
  const action =
    approval.revision === d.revision ? approval.action : (await ctx.loaders.revisions.load(d.approvalId)).find((r) => r.number === d.revision)?.action;
  return signedApprovalOf(ctx.deps.approvalKeys, d, approval, action);
}

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
    signedApproval: t.field({
      type: SignedApprovalRef,
      nullable: true,
      description:
        'The signed approval of an APPROVE or EDIT_AND_APPROVE that approved the request (under a quorum, the deciding approval). Null for every other decision, for votes, for decisions made before signing existed, and for a stored signature that does not verify for this very decision.',
      resolve: (d, _a, ctx) => signedApprovalOfDecision(ctx, d),
    }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  decisions: t.field({ type: [DecisionRef], resolve: (a, _x, ctx) => ctx.loaders.decisions.load(a.id) }),
  signedApproval: t.field({
    type: SignedApprovalRef,
    nullable: true,
    description: 'The signed approval of the decision that approved this request (Decision.signedApproval of it); null unless the request is APPROVED.',
    resolve: async (a, _x, ctx) => {
      if (a.status !== 'APPROVED') return null;
      const final = (await ctx.loaders.decisions.load(a.id)).find((d) => !d.vote && (d.outcome === 'APPROVE' || d.outcome === 'EDIT_AND_APPROVE'));
      return final ? signedApprovalOfDecision(ctx, final, a) : null;
    },
  }),
}));

/** Who started the request's task, when its policy excludes the starter (else not read). */
async function starterOf(a: ApprovalRow, ctx: Context): Promise<string | null> {
  if (!a.policy?.excludeTaskStarter || !a.taskId) return null;
  return (await ctx.loaders.task.load(a.taskId))?.createdById ?? null;
}

// What the console asks before the ritual (who-decides.ts): a control the viewer cannot use is
// disabled with this reason, and delegation offers only people who could decide.
builder.objectFields(ApprovalRef, (t) => ({
  viewerCannotDecide: t.string({
    nullable: true,
    description:
      "Why the viewer cannot approve or reject the current revision (not pending, their own request, no OPERATE on its scope, the task's starter under a policy that excludes them, assigned to someone else, or their say on this revision already given); null when they can. Having given their say leaves edit then approve and delegation open. A hint for the console: the decision itself checks again.",
    resolve: async (a, _x, ctx) => {
      const access = ctx.access;
      if (!access) return 'sign in to decide';
      return whyCannotDecide(a, access, {
        decisions: await ctx.loaders.decisions.load(a.id),
        starterId: await starterOf(a, ctx),
        inGroup: async (groupId) => (await ctx.loaders.memberships.load(access.viewer.userId)).some((m) => m.groupId === groupId),
      });
    },
  }),
  delegateCandidates: t.field({
    type: [UserRef],
    description:
      "The people this request can be delegated to, by name: enabled people of its tenant with OPERATE on its scope, never its requester, the task's starter when the policy excludes them, or the viewer.",
    resolve: async (a, _x, ctx) => (ctx.access ? delegateCandidates(ctx.em, ctx.access, a, await starterOf(a, ctx)) : []),
  }),
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
