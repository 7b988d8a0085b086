import { builder } from '../graphql/builder.js';
import { AgentRef } from './graphql.js';
import { UserRef, grantAgentAccess, listGrants, revokeGrant, type AgentGrantRow } from '../auth/module.js';

// GraphQL of agent grants (VIEW/OPERATE on an agent): granting and revoking (auth/service.ts,
// auth/grant-admin.ts), and a person's own grants so the console can say why a member sees no
// tasks or agents. Kept apart from auth/graphql.ts (users, tokens, sign-in): agents/graphql.ts
// imports that for User, and this module imports agents/graphql.ts for Agent.

export const PermissionEnum = builder.enumType('Permission', { values: ['VIEW', 'OPERATE'] as const });

export const AgentGrantRef = builder.objectRef<AgentGrantRow>('AgentGrant').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    user: t.field({ type: UserRef, resolve: async (g, _a, ctx) => (await ctx.loaders.user.load(g.userId))! }),
    agent: t.field({ type: AgentRef, resolve: async (g, _a, ctx) => (await ctx.loaders.agent.load(g.agentId))! }),
    skillId: t.exposeString('skillId', { nullable: true }),
    permission: t.field({ type: PermissionEnum, resolve: (g) => g.permission }),
  }),
});

const GrantAgentAccessInput = builder.inputType('GrantAgentAccessInput', {
  fields: (t) => ({
    userId: t.globalID({ for: UserRef, required: true }),
    agentId: t.globalID({ for: AgentRef, required: true }),
    skillId: t.string(),
    permission: t.field({ type: PermissionEnum, required: true }),
  }),
});

builder.queryFields((t) => ({
  agentGrants: t.withAuth({ admin: true }).field({
    type: [AgentGrantRef],
    description: "The tenant's agent grants (admins), optionally of one person.",
    args: { userId: t.arg.globalID({ for: UserRef }) },
    resolve: (_r, { userId }, ctx) => listGrants(ctx.em, ctx.access, userId?.id ?? null),
  }),
}));

builder.objectFields(UserRef, (t) => ({
  grants: t.field({
    type: [AgentGrantRef],
    description: "This person's agent grants: visible to the person and to admins (others get an empty list).",
    resolve: async (u, _a, ctx) => {
      const access = ctx.access;
      if (!access || access.viewer.tenantId !== u.tenantId || (access.viewer.userId !== u.id && !access.isAdmin)) return [];
      return listGrants(ctx.em, access, u.id);
    },
  }),
}));

builder.mutationFields((t) => ({
  grantAgentAccess: t.withAuth({ admin: true }).field({
    type: AgentGrantRef,
    args: { input: t.arg({ type: GrantAgentAccessInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      grantAgentAccess(ctx.em, ctx.access, {
        userId: input.userId.id,
        agentId: input.agentId.id,
        skillId: input.skillId,
        permission: input.permission,
      }),
  }),
  revokeAgentAccess: t.withAuth({ admin: true }).field({
    type: AgentGrantRef,
    description: 'Removes one agent grant; the person loses that access on their next request. Returns the removed grant.',
    args: { grantId: t.arg.id({ required: true }) },
    resolve: (_r, { grantId }, ctx) => revokeGrant(ctx.em, ctx.access, String(grantId)),
  }),
}));
