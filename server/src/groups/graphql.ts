import { builder } from '../graphql/builder.js';
import type { ReviewerGroupRow } from './entities.js';

// The reviewer group as GraphQL shows it wherever a request refers to one (an escalation's
// target, the group a request is assigned to). Managing groups (admins) adds its own fields and
// mutations to this type.

export const ReviewerGroupRef = builder.objectRef<ReviewerGroupRow>('ReviewerGroup');
builder.node(ReviewerGroupRef, {
  description: 'A group of reviewers, managed by admins: a policy can assign requests to it (escalation) or count only its members (quorum).',
  id: { resolve: (g) => g.id },
  loadOne: async (id, ctx) => {
    const g = await ctx.loaders.reviewerGroup.load(id);
    return g && ctx.viewer && g.tenantId === ctx.viewer.tenantId ? g : null;
  },
  fields: (t) => ({
    name: t.exposeString('name'),
  }),
});
