import { ApprovalRef } from '../approvals/module.js';
import { isDecisionEventType, stream } from '../audit/module.js';
import { builder } from '../graphql/builder.js';
import { DecisionRef } from './graphql.js';
import type { Context } from '../graphql/context.js';
import type { ApprovalRow } from '../approvals/entities.js';
import { quorumProgress, type QuorumProgress } from './quorum.js';

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
      resolve: async (p, _a, ctx) => {
        const groups = await ctx.loaders.reviewerGroup.loadMany(p.rule.fromGroupIds);
        return p.rule.fromGroupIds.map((id, i) => {
          const g = groups[i];
          return g && !(g instanceof Error) ? g.name : id;
        });
      },
    }),
  }),
});

/**
 * The request's quorum progress through the request's loaders: a list of requests reads their
 * decisions, and the group memberships of their approvers, once for the whole list.
 */
async function progressOf(a: ApprovalRow, ctx: Context): Promise<QuorumProgress> {
  // The request's events (each counted decision needs its signed record), asked with its
  // decisions: a list reads them in the batch its other fields read events in (Approval.events,
  // the escalation), one statement.
  const events = ctx.loaders.events.load(stream.approval(a.id));
  // Awaited only when there are decisions to check; a failed read otherwise is nobody's to handle.
  events.catch(() => {});
  return quorumProgress(
    ctx.em,
    a,
    await ctx.loaders.decisions.load(a.id),
    async (groupIds, userIds) => {
      const memberships = await ctx.loaders.memberships.loadMany(userIds);
      return new Set(
        userIds.filter((_u, i) => {
          const m = memberships[i];
          if (m instanceof Error) throw m;
          return m!.some((row) => groupIds.includes(row.groupId));
        }),
      );
    },
    async (decisions) => {
      const all = await events;
      return new Map(decisions.map((d) => [d.id, all.filter((e) => e.data.decisionId === d.id && isDecisionEventType(e.type))]));
    },
  );
}

builder.objectFields(ApprovalRef, (t) => ({
  quorum: t.field({
    type: QuorumProgressRef,
    description: "The quorum of the request's policy and its progress on the current revision.",
    resolve: (a, _x, ctx) => progressOf(a, ctx),
  }),
  // Flat copies of quorum.required and quorum.count for lists (the inbox): the query cost limit
  // weighs every nested object of a 100-row list, and most requests need no decisions read at all.
  quorumRequired: t.int({
    description: 'quorum.required: distinct approvals of one revision that close the request APPROVED.',
    resolve: (a) => a.policy.quorum.approvals,
  }),
  quorumCount: t.int({
    description: 'quorum.count: approvals that count so far on the current revision (0 while a single approval decides).',
    resolve: async (a, _x, ctx) => (a.policy.quorum.approvals > 1 ? (await progressOf(a, ctx)).approvals.length : 0),
  }),
}));

builder.objectFields(DecisionRef, (t) => ({
  vote: t.exposeBoolean('vote', {
    description:
      'A decision that left the request PENDING: an approval toward a quorum not yet met, or a rejection recorded under a policy whose rejection does not reject. A final decision is not a vote.',
  }),
}));
