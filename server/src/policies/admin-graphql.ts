import { encodeGlobalID } from '@pothos/plugin-relay';
import { UserRef } from '../auth/module.js';
import { ReviewerGroupRef } from '../groups/module.js';
import { builder } from '../graphql/builder.js';
import type { PolicyRow, PolicyVersionRow } from './entities.js';
import { EscalationRuleRef, QuorumRuleRef, RiskEnum } from './graphql.js';
import { DecisionOutcomeEnum } from './outcome-enum.js';
import type { RulesInput } from './rules.js';
import {
  createPolicy,
  currentVersion,
  deletePolicy,
  findPolicy,
  listPolicies,
  policyVersions,
  reorderPolicies,
  setPolicyEnabled,
  updatePolicy,
} from './service.js';

// Policies in the API, for admins only (docs/POLICIES.md): the ordered list with each policy's
// current version and history, and the changes (policies/service.ts checks every input).

const PolicyVersionRef = builder.objectRef<PolicyVersionRow>('PolicyVersion').implement({
  description: 'One version of a policy: written once, never changed.',
  fields: (t) => ({
    version: t.exposeInt('version'),
    condition: t.exposeString('condition', { description: 'CEL over the request; empty matches every request.' }),
    allowedOutcomes: t.field({ type: [DecisionOutcomeEnum], resolve: (v) => v.rules.allowedOutcomes }),
    excludeTaskStarter: t.boolean({ resolve: (v) => v.rules.excludeTaskStarter }),
    quorum: t.field({ type: QuorumRuleRef, resolve: (v) => v.rules.quorum }),
    escalation: t.field({ type: EscalationRuleRef, nullable: true, resolve: (v) => v.rules.escalation }),
    createdBy: t.field({ type: UserRef, nullable: true, resolve: (v, _a, ctx) => (v.createdById ? ctx.loaders.user.load(v.createdById) : null) }),
    createdAt: t.field({ type: 'DateTime', resolve: (v) => v.createdAt }),
  }),
});

export const PolicyRef = builder.objectRef<PolicyRow>('Policy');
builder.node(PolicyRef, {
  id: { resolve: (p) => p.id },
  loadOne: async (id, ctx) => (ctx.access?.isAdmin ? findPolicy(ctx.em, ctx.access, id).catch(() => null) : null),
  fields: (t) => ({
    name: t.exposeString('name'),
    position: t.exposeInt('position', { description: 'Lower first: the first enabled policy whose condition matches a request applies.' }),
    enabled: t.exposeBoolean('enabled'),
    currentVersion: t.field({ type: PolicyVersionRef, resolve: (p, _a, ctx) => currentVersion(ctx.em, p) }),
    versions: t.field({ type: [PolicyVersionRef], description: 'Every version, newest first.', resolve: (p, _a, ctx) => policyVersions(ctx.em, p.id) }),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (p) => p.updatedAt }),
  }),
});

const QuorumRuleInput = builder.inputType('QuorumRuleInput', {
  fields: (t) => ({
    approvals: t.int({ description: 'Distinct approvals needed, 1 to 20 (default 1).' }),
    fromGroupIds: t.globalIDList({ for: ReviewerGroupRef, description: 'Only members of these groups count (default: anyone who may decide).' }),
    rejectionRejects: t.boolean({ description: 'One rejection closes the request (default true).' }),
  }),
});

const EscalationRuleInput = builder.inputType('EscalationRuleInput', {
  fields: (t) => ({
    afterSeconds: t.int({ required: true }),
    toGroupId: t.globalID({ for: ReviewerGroupRef }),
    toUserId: t.globalID({ for: UserRef }),
    raiseRiskTo: t.field({ type: RiskEnum }),
  }),
});

const ruleInputFields = (t: any) => ({
  condition: t.string({ description: 'CEL over the request (docs/POLICIES.md); empty or absent matches every request.' }),
  enabled: t.boolean(),
  allowedOutcomes: t.field({ type: [DecisionOutcomeEnum], description: 'Must include REJECT and APPROVE or EDIT_AND_APPROVE (default: all).' }),
  excludeTaskStarter: t.boolean({ description: "Also refuse the person who started the request's task (default false)." }),
  quorum: t.field({ type: QuorumRuleInput }),
  escalation: t.field({ type: EscalationRuleInput, description: 'Null removes the escalation.' }),
});

const CreatePolicyInput = builder.inputType('CreatePolicyInput', {
  fields: (t) => ({ name: t.string({ required: true }), ...ruleInputFields(t) }),
});

const UpdatePolicyInput = builder.inputType('UpdatePolicyInput', {
  description: 'Absent fields stay as they are. A new condition or new rules write the next version; open requests keep theirs.',
  fields: (t) => ({ id: t.globalID({ for: PolicyRef, required: true }), name: t.string(), ...ruleInputFields(t) }),
});

type GlobalId = { id: string };
interface RuleArgs {
  condition?: string | null;
  enabled?: boolean | null;
  allowedOutcomes?: RulesInput['allowedOutcomes'];
  excludeTaskStarter?: boolean | null;
  quorum?: { approvals?: number | null; fromGroupIds?: GlobalId[] | null; rejectionRejects?: boolean | null } | null;
  escalation?: {
    afterSeconds: number;
    toGroupId?: GlobalId | null;
    toUserId?: GlobalId | null;
    raiseRiskTo?: 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL' | null;
  } | null;
}

/** GraphQL's input as the service takes it (global ids decoded; absent stays absent, null stays null). */
function serviceInput(i: RuleArgs) {
  return {
    condition: i.condition,
    enabled: i.enabled,
    allowedOutcomes: i.allowedOutcomes,
    excludeTaskStarter: i.excludeTaskStarter,
    quorum: i.quorum
      ? { approvals: i.quorum.approvals, fromGroupIds: i.quorum.fromGroupIds?.map((g) => g.id) ?? null, rejectionRejects: i.quorum.rejectionRejects }
      : i.quorum,
    escalation:
      i.escalation === undefined
        ? undefined
        : i.escalation && {
            afterSeconds: i.escalation.afterSeconds,
            toGroupId: i.escalation.toGroupId?.id ?? null,
            toUserId: i.escalation.toUserId?.id ?? null,
            raiseRiskTo: i.escalation.raiseRiskTo ?? null,
          },
  };
}

builder.queryFields((t) => ({
  policies: t.withAuth({ admin: true }).field({
    type: [PolicyRef],
    description: "The tenant's approval policies in the order they are tried (admins).",
    resolve: (_r, _a, ctx) => listPolicies(ctx.em, ctx.access),
  }),
}));

builder.mutationFields((t) => ({
  createPolicy: t.withAuth({ admin: true }).field({
    type: PolicyRef,
    description: 'Adds a policy (version 1) after the existing ones.',
    args: { input: t.arg({ type: CreatePolicyInput, required: true }) },
    resolve: (_r, { input }, ctx) => createPolicy(ctx.em, ctx.access, { name: input.name, ...serviceInput(input as RuleArgs) }),
  }),
  updatePolicy: t.withAuth({ admin: true }).field({
    type: PolicyRef,
    args: { input: t.arg({ type: UpdatePolicyInput, required: true }) },
    resolve: (_r, { input }, ctx) => updatePolicy(ctx.em, ctx.access, input.id.id, { name: input.name, ...serviceInput(input as RuleArgs) }),
  }),
  setPolicyEnabled: t.withAuth({ admin: true }).field({
    type: PolicyRef,
    args: { id: t.arg.globalID({ for: PolicyRef, required: true }), enabled: t.arg.boolean({ required: true }) },
    resolve: (_r, { id, enabled }, ctx) => setPolicyEnabled(ctx.em, ctx.access, id.id, enabled),
  }),
  reorderPolicies: t.withAuth({ admin: true }).field({
    type: [PolicyRef],
    description: 'Puts every policy of the tenant in the order given.',
    args: { ids: t.arg.globalIDList({ for: PolicyRef, required: true }) },
    resolve: (_r, { ids }, ctx) =>
      reorderPolicies(
        ctx.em,
        ctx.access,
        ids.map((i) => i.id),
      ),
  }),
  deletePolicy: t.withAuth({ admin: true }).field({
    type: 'ID',
    description: 'Removes a policy and its versions; requests opened under it keep their snapshot. Returns its id.',
    args: { id: t.arg.globalID({ for: PolicyRef, required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await deletePolicy(ctx.em, ctx.access, id.id);
      return encodeGlobalID('Policy', id.id);
    },
  }),
}));
