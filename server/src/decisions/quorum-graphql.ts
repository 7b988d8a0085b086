import { ApprovalRef } from '../approvals/graphql.js';
import { builder } from '../graphql/builder.js';
import { DecisionRef } from './graphql.js';
import { groupNames, quorumProgress, type QuorumProgress } from './quorum.js';

// The quorum of a request as GraphQL shows it (decisions/quorum.ts has the rules): where the
// current revision stands, and which decisions are votes. A vote is an audit event on the
// request's stream (approval.voted), so approvalChanged carries each one live.

const QuorumProgressRef = builder.objectRef<QuorumProgress>('QuorumProgress').implement({
  description:
    "Where the quorum of the request's policy stands on its current revision and digest. required 1 is a single approval (no quorum). Approvals on earlier revisions do not count.",
  fields: (t) => ({
    required: t.int({ description: 'Distinct reviewers whose approval of one revision closes the request APPROVED.', resolve: (p) => p.rule.approvals }),
    revision: t.exposeInt('revision', { description: 'The revision the approvals below are on (the current one).' }),
    digest: t.exposeString('digest'),
    count: t.int({ description: 'Approvals that count so far on this revision.', resolve: (p) => p.approvals.length }),
    met: t.boolean({ resolve: (p) => p.approvals.length >= p.rule.approvals }),
    approvals: t.field({
      type: [DecisionRef],
      description: 'The approvals that count, oldest first (votes, and the final approval once the quorum is met).',
      resolve: (p) => p.approvals,
    }),
    rejections: t.field({
      type: [DecisionRef],
      description: 'Rejections recorded on this revision without closing the request (policy rejectionRejects false).',
      resolve: (p) => p.rejections,
    }),
    rejectionRejects: t.boolean({ description: 'One rejection closes the request REJECTED.', resolve: (p) => p.rule.rejectionRejects }),
    fromGroupNames: t.stringList({
      description: 'When not empty, only members of one of these reviewer groups can approve.',
      resolve: (p, _a, ctx) => groupNames(ctx.em, p.rule.fromGroupIds),
    }),
  }),
});

builder.objectFields(ApprovalRef, (t) => ({
  quorum: t.field({
    type: QuorumProgressRef,
    description: "The quorum of the request's policy and its progress on the current revision.",
    resolve: async (a, _x, ctx) => quorumProgress(ctx.em, a, await ctx.loaders.decisions.load(a.id)),
  }),
  // Flat copies of quorum.required and quorum.count for lists (the inbox): the query cost limit
  // weighs every nested object of a 100-row list, and most requests need no decisions read at all.
  quorumRequired: t.int({
    description: 'quorum.required: distinct approvals of one revision that close the request APPROVED.',
    resolve: (a) => a.policy.quorum.approvals,
  }),
  quorumCount: t.int({
    description: 'quorum.count: approvals that count so far on the current revision (0 while a single approval decides).',
    resolve: async (a, _x, ctx) =>
      a.policy.quorum.approvals > 1 ? (await quorumProgress(ctx.em, a, await ctx.loaders.decisions.load(a.id))).approvals.length : 0,
  }),
}));

builder.objectFields(DecisionRef, (t) => ({
  vote: t.exposeBoolean('vote', {
    description:
      'A decision that left the request PENDING: an approval toward a quorum not yet met, or a rejection recorded under a policy whose rejection does not reject. A final decision is not a vote.',
  }),
}));
