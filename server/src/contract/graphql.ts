import { ApprovalRef } from '../approvals/module.js';
import { builder } from '../graphql/builder.js';
import { commandRefOf, exportApprovalContract } from './agents-approval.js';

// The contract's part of Approval: the same agents.approval@1 record as GET /contracts/… (routes.ts).

builder.objectFields(ApprovalRef, (t) => ({
  contract: t.field({
    type: 'JSON',
    description: 'This approval as an agents.approval@1 record.',
    // The same validated export as the HTTP route; an invalid record is an error, never served.
    resolve: async (a, _x, ctx) => {
      const agent = a.agentId ? await ctx.loaders.agent.load(a.agentId) : null;
      return exportApprovalContract(a, await ctx.loaders.decisions.load(a.id), agent?.name ?? null, await commandRefOf(ctx.em, a));
    },
  }),
}));
