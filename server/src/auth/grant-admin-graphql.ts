import { builder } from '../graphql/builder.js';
import { requireAccess } from '../graphql/context.js';
import { listGrants, revokeGrant } from './grant-admin.js';
import { AgentGrantRef, UserRef } from './graphql.js';

// GraphQL of grant administration (auth/grant-admin.ts), and a person's own grants so the
// console can say why a member sees no tasks or agents.

builder.queryFields((t) => ({
  agentGrants: t.field({
    type: [AgentGrantRef],
    description: "The tenant's agent grants (admins), optionally of one person.",
    authScopes: { admin: true },
    args: { userId: t.arg.globalID({ for: UserRef }) },
    resolve: (_r, { userId }, ctx) => listGrants(ctx.em, requireAccess(ctx), userId?.id ?? null),
  }),
}));

builder.objectFields(UserRef, (t) => ({
  grants: t.field({
    type: [AgentGrantRef],
    description: "This person's agent grants: visible to the person and to admins (others get an empty list).",
    resolve: async (u, _a, ctx) => {
      const viewer = ctx.viewer;
      if (!viewer || viewer.tenantId !== u.tenantId || (viewer.userId !== u.id && viewer.role !== 'ADMIN')) return [];
      return listGrants(ctx.em, requireAccess(ctx), u.id);
    },
  }),
}));

builder.mutationFields((t) => ({
  revokeAgentAccess: t.field({
    type: AgentGrantRef,
    description: 'Removes one agent grant; the person loses that access on their next request. Returns the removed grant.',
    authScopes: { admin: true },
    args: { grantId: t.arg.id({ required: true }) },
    resolve: (_r, { grantId }, ctx) => revokeGrant(ctx.em, requireAccess(ctx), String(grantId)),
  }),
}));
