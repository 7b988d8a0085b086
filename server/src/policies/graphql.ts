import { encodeGlobalID } from '@pothos/plugin-relay';
import { UserRef } from '../auth/module.js';
import { ReviewerGroupRef } from '../groups/module.js';
import { builder } from '../graphql/builder.js';
import { ReviewerGroup } from '../groups/entities.js';
import { DecisionOutcomeEnum } from './outcome-enum.js';
import { effectiveOutcomes, type EscalationRule, type PolicySnapshot, type QuorumRule } from './snapshot.js';

// The rules a policy sets, as the API shows them: on a request (Approval.policy, the snapshot
// frozen when it opened) and on each version of a policy (policies/admin-graphql.ts). Quorum
// progress (who has approved so far) is the quorum's own field, not here.

export const RiskEnum = builder.enumType('Risk', { values: ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const });

export const QuorumRuleRef = builder.objectRef<QuorumRule>('QuorumRule').implement({
  description: 'Distinct reviewers whose approval of the same revision and digest the request needs.',
  fields: (t) => ({
    approvals: t.exposeInt('approvals', { description: 'How many approvals (1: a single approval).' }),
    fromGroups: t.field({
      type: [ReviewerGroupRef],
      description: 'When not empty, only members of these groups count (groups deleted since are left out).',
      resolve: async (q, _a, ctx) => {
        if (!q.fromGroupIds.length) return [];
        const rows = await ctx.em.find(ReviewerGroup, { id: { $in: q.fromGroupIds } });
        return q.fromGroupIds.map((id) => rows.find((r) => r.id === id)).filter((r) => !!r);
      },
    }),
    fromGroupIds: t.idList({
      description: 'The groups named, deleted ones too.',
      resolve: (q) => q.fromGroupIds.map((id) => encodeGlobalID('ReviewerGroup', id)),
    }),
    rejectionRejects: t.exposeBoolean('rejectionRejects', { description: 'One rejection closes the request as REJECTED.' }),
  }),
});

export const EscalationRuleRef = builder.objectRef<EscalationRule>('EscalationRule').implement({
  description: 'What happens when a request stays undecided: it is assigned on and its risk raised; it never approves itself.',
  fields: (t) => ({
    afterSeconds: t.exposeInt('afterSeconds'),
    toGroup: t.field({
      type: ReviewerGroupRef,
      nullable: true,
      resolve: async (e, _a, ctx) => (e.toGroupId ? ctx.em.findOne(ReviewerGroup, { id: e.toGroupId }) : null),
    }),
    toUser: t.field({ type: UserRef, nullable: true, resolve: (e, _a, ctx) => (e.toUserId ? ctx.loaders.user.load(e.toUserId) : null) }),
    raiseRiskTo: t.field({ type: RiskEnum, nullable: true, resolve: (e) => e.raiseRiskTo }),
  }),
});

export const ApprovalPolicyRef = builder.objectRef<PolicySnapshot>('ApprovalPolicy').implement({
  description: 'The policy a request opened under, as it was then: later edits to the policy do not change it.',
  fields: (t) => ({
    policyId: t.id({
      nullable: true,
      description: 'The policy (null: the built-in default). It may have been deleted since.',
      resolve: (p) => (p.policyId ? encodeGlobalID('Policy', p.policyId) : null),
    }),
    name: t.exposeString('name'),
    version: t.exposeInt('version', { description: 'The version that applied (0: the built-in default).' }),
    isDefault: t.boolean({
      description: 'The built-in default policy applies (false for the held rules of a request whose conditions failed: see conditionError).',
      resolve: (p) => p.policyId === null && !p.failClosed,
    }),
    allowedOutcomes: t.field({
      type: [DecisionOutcomeEnum],
      description: 'What a reviewer may choose on this request (a quorum of two or more leaves DELEGATE out).',
      resolve: (p) => effectiveOutcomes(p),
    }),
    excludeTaskStarter: t.exposeBoolean('excludeTaskStarter'),
    quorum: t.field({ type: QuorumRuleRef, resolve: (p) => p.quorum }),
    escalation: t.field({ type: EscalationRuleRef, nullable: true, resolve: (p) => p.escalation }),
    conditionError: t.string({
      nullable: true,
      description:
        'Set when a condition could not be evaluated on this request: which failed, and why these rules apply (the strictest policy the request could have had, or held: it cannot be approved). docs/POLICIES.md "When a condition fails".',
      resolve: (p) => p.conditionError ?? null,
    }),
  }),
});
