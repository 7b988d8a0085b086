import type { ApprovalRow } from '../approvals/entities.js';
import { ApprovalRef, RiskEnum } from '../approvals/module.js';
import { stream } from '../audit/module.js';
import { UserRef } from '../auth/module.js';
import { ReviewerGroupRef } from '../groups/module.js';
import type { EscalationRule, PolicyRisk } from '../policies/module.js';
import { builder } from '../graphql/builder.js';
import type { Context } from '../graphql/context.js';

// What escalation adds to Approval (docs/ESCALATION.md): the group the request is assigned to,
// and its escalation (when it is due, when it happened, to whom, what it did to the risk).

/** The risk the request had before its escalation raised it, from the approval.escalated event; null when it did not. */
async function riskBeforeEscalation(a: ApprovalRow, ctx: Context): Promise<PolicyRisk | null> {
  if (!a.escalatedAt) return null;
  const events = await ctx.loaders.events.load(stream.approval(a.id));
  const escalated = events.find((ev) => ev.type === 'approval.escalated');
  const risk = (escalated?.data as { changed?: { risk?: { from?: unknown } } } | undefined)?.changed?.risk?.from;
  return typeof risk === 'string' ? (risk as PolicyRisk) : null;
}

interface EscalationShape {
  approval: ApprovalRow;
  rule: EscalationRule;
}

const EscalationRef = builder.objectRef<EscalationShape>('ApprovalEscalation').implement({
  description:
    "The escalation rule of the request's policy, as it applies to this request: due afterSeconds after the request opened, unless that is at or after its deadline (then the request has no escalation).",
  fields: (t) => ({
    dueAt: t.field({
      type: 'DateTime',
      description: 'When the request escalates (or was due to).',
      resolve: (e) => (e.approval.escalateAt ?? e.approval.escalatedAt)!,
    }),
    escalatedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it escalated; null while it has not.',
      resolve: (e) => e.approval.escalatedAt ?? null,
    }),
    toGroup: t.field({
      type: ReviewerGroupRef,
      nullable: true,
      description: 'The reviewer group the rule assigns the request to.',
      resolve: async (e, _x, ctx) => {
        if (!e.rule.toGroupId) return null;
        const g = await ctx.loaders.reviewerGroup.load(e.rule.toGroupId);
        return g && g.tenantId === e.approval.tenantId ? g : null;
      },
    }),
    toUser: t.field({
      type: UserRef,
      nullable: true,
      description: 'The person the rule assigns the request to.',
      resolve: async (e, _x, ctx) => {
        if (!e.rule.toUserId) return null;
        const u = await ctx.loaders.user.load(e.rule.toUserId);
        return u && u.tenantId === e.approval.tenantId ? u : null;
      },
    }),
    raiseRiskTo: t.field({ type: RiskEnum, nullable: true, resolve: (e) => e.rule.raiseRiskTo ?? null }),
    riskRaisedFrom: t.field({
      type: RiskEnum,
      nullable: true,
      description: 'The risk before the escalation raised it; null when it did not (not escalated yet, or the risk was already as high).',
      resolve: (e, _x, ctx) => riskBeforeEscalation(e.approval, ctx),
    }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  assigneeGroup: t.field({
    type: ReviewerGroupRef,
    nullable: true,
    description: 'The reviewer group the request is assigned to (by escalation): only its members, the assignee, or admins decide it.',
    resolve: (a, _x, ctx) => (a.assigneeGroupId ? ctx.loaders.reviewerGroup.load(a.assigneeGroupId) : null),
  }),
  // Also as scalars of the request: the inbox lists 100 requests, and a nested object per row
  // costs more of the query cost limit (TASKBAY_GRAPHQL_MAX_COST) than it can spare.
  escalatedAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'When the request escalated (Approval.escalation has the details); null while it has not.',
    resolve: (a) => a.escalatedAt ?? null,
  }),
  riskRaisedFrom: t.field({
    type: RiskEnum,
    nullable: true,
    description: 'The risk before its escalation raised it; null when it did not.',
    resolve: (a, _x, ctx) => riskBeforeEscalation(a, ctx),
  }),
  escalation: t.field({
    type: EscalationRef,
    nullable: true,
    description: "The request's escalation: null when its policy has none, or when it would come at or after the deadline.",
    resolve: (a) => {
      const rule = a.policy?.escalation;
      return rule && (a.escalateAt || a.escalatedAt) ? { approval: a, rule } : null;
    },
  }),
}));
