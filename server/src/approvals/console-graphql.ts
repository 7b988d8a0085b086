import { builder } from '../graphql/builder.js';
import { ApprovalRequest } from './entities.js';
import { ApprovalRef, visibleApproval } from './graphql.js';

// Approval fields the reviewer console reads: the request this one replaced (the reverse of
// supersededBy, so the page can link to it and show what changed). Its own audit-trail status
// is Approval.chain (audit/graphql.ts).

builder.objectFields(ApprovalRef, (t) => ({
  supersedes: t.field({
    type: ApprovalRef,
    nullable: true,
    description: 'The request this one superseded (same task), when the viewer may see it.',
    resolve: async (a, _x, ctx) => {
      const previous = await ctx.em.findOne(ApprovalRequest, { supersededById: a.id, tenantId: a.tenantId }, { fields: ['id'] });
      return previous ? visibleApproval(ctx, previous.id) : null;
    },
  }),
}));
