import { encodeGlobalID } from '@pothos/plugin-relay';
import { UserRef } from '../auth/module.js';
import { builder } from '../graphql/builder.js';
import type { ReviewerGroupRow } from './entities.js';
import { addGroupMember, createGroup, deleteGroup, findGroup, listGroups, membersOf, removeGroupMember, renameGroup } from './service.js';

// Reviewer groups in the API (docs/POLICIES.md "Groups"). Admins list and manage them; anyone
// who sees a request's policy sees the names of the groups it names, and only admins see members.

export const ReviewerGroupRef = builder.objectRef<ReviewerGroupRow>('ReviewerGroup');
builder.node(ReviewerGroupRef, {
  id: { resolve: (g) => g.id },
  loadOne: async (id, ctx) => (ctx.access?.isAdmin ? findGroup(ctx.em, ctx.access, id).catch(() => null) : null),
  fields: (t) => ({
    name: t.exposeString('name'),
    createdAt: t.field({ type: 'DateTime', resolve: (g) => g.createdAt }),
    members: t.field({
      type: [UserRef],
      description: 'The members, in the order they were added (admins; others get an empty list).',
      resolve: async (g, _a, ctx) => {
        if (!ctx.access?.isAdmin || ctx.access.viewer.tenantId !== g.tenantId) return [];
        const ids = (await membersOf(ctx.em, [g.id])).get(g.id) ?? [];
        return (await Promise.all(ids.map((id) => ctx.loaders.user.load(id)))).filter((u) => !!u);
      },
    }),
  }),
});

const CreateReviewerGroupInput = builder.inputType('CreateReviewerGroupInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    memberIds: t.globalIDList({ for: UserRef }),
  }),
});

builder.queryFields((t) => ({
  reviewerGroups: t.withAuth({ admin: true }).field({
    type: [ReviewerGroupRef],
    description: "The tenant's reviewer groups by name (admins).",
    resolve: (_r, _a, ctx) => listGroups(ctx.em, ctx.access),
  }),
}));

builder.mutationFields((t) => ({
  createReviewerGroup: t.withAuth({ admin: true }).field({
    type: ReviewerGroupRef,
    args: { input: t.arg({ type: CreateReviewerGroupInput, required: true }) },
    resolve: (_r, { input }, ctx) => createGroup(ctx.em, ctx.access, { name: input.name, memberIds: input.memberIds?.map((m) => m.id) ?? [] }),
  }),
  renameReviewerGroup: t.withAuth({ admin: true }).field({
    type: ReviewerGroupRef,
    args: { id: t.arg.globalID({ for: ReviewerGroupRef, required: true }), name: t.arg.string({ required: true }) },
    resolve: (_r, { id, name }, ctx) => renameGroup(ctx.em, ctx.access, id.id, name),
  }),
  deleteReviewerGroup: t.withAuth({ admin: true }).field({
    type: 'ID',
    description: 'Removes a group no policy names any more; requests keep the group ids frozen in their policy. Returns its id.',
    args: { id: t.arg.globalID({ for: ReviewerGroupRef, required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await deleteGroup(ctx.em, ctx.access, id.id);
      return encodeGlobalID('ReviewerGroup', id.id);
    },
  }),
  addReviewerGroupMember: t.withAuth({ admin: true }).field({
    type: ReviewerGroupRef,
    args: { groupId: t.arg.globalID({ for: ReviewerGroupRef, required: true }), userId: t.arg.globalID({ for: UserRef, required: true }) },
    resolve: (_r, { groupId, userId }, ctx) => addGroupMember(ctx.em, ctx.access, groupId.id, userId.id),
  }),
  removeReviewerGroupMember: t.withAuth({ admin: true }).field({
    type: ReviewerGroupRef,
    args: { groupId: t.arg.globalID({ for: ReviewerGroupRef, required: true }), userId: t.arg.globalID({ for: UserRef, required: true }) },
    resolve: (_r, { groupId, userId }, ctx) => removeGroupMember(ctx.em, ctx.access, groupId.id, userId.id),
  }),
}));
