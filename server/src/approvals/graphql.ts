import type { GraphQLResolveInfo } from 'graphql';
import { AgentRef } from '../agents/module.js';
import { auditTypesOf } from '../audit/module.js';
import { UserRef, canView, visibleFilter } from '../auth/module.js';
import { RiskEnum } from '../policies/module.js';
import { TaskRef } from '../tasks/module.js';
import { groupIdsOf } from '../groups/module.js';
import type { Viewer } from '../access.js';
import { readRows } from '../db/read-rows.js';
import { DomainError } from '../errors.js';
import { builder } from '../graphql/builder.js';
import { inEventScope, setEventScope, type Context } from '../graphql/context.js';
import { rowOf } from '../graphql/loaders.js';
import { ORDER_NEWEST, pageQuery, toConnection } from '../graphql/pagination.js';
import { selectedFields } from '../graphql/selection.js';
import { shareEventResults } from '../graphql/shared-events.js';
import type { ApprovalEventPayload } from '../events/pubsub.js';
import { ApprovalRequest, type ApprovalRow, type RevisionRow } from './entities.js';
import { eventView, type EventView } from './event-view.js';
import { createUserApproval } from './service.js';
import { parseExternalId } from './external-id.js';

export const ApprovalStatusEnum = builder.enumType('ApprovalStatus', {
  values: ['PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED'] as const,
});
export { RiskEnum };
export const ApprovalSourceEnum = builder.enumType('ApprovalSource', { values: ['AGENT', 'USER', 'COMMAND'] as const });

type ActorShape = { type: string; id: string | null };
const ActorRef = builder.objectRef<ActorShape>('Actor').implement({
  description: 'Who did something: a user, an agent, a service or the system.',
  fields: (t) => ({
    type: t.exposeString('type'),
    id: t.exposeString('id', { nullable: true }),
    user: t.field({
      type: UserRef,
      nullable: true,
      resolve: (a, _x, ctx) => (a.type === 'user' && a.id ? ctx.loaders.user.load(a.id) : null),
    }),
  }),
});

const RevisionRef = builder.objectRef<RevisionRow>('ApprovalRevision').implement({
  fields: (t) => ({
    number: t.exposeInt('number'),
    action: t.field({ type: 'JSON', resolve: (r) => r.action }),
    digest: t.exposeString('digest'),
    createdBy: t.field({ type: ActorRef, resolve: (r) => ({ type: r.createdByType, id: r.createdById ?? null }) }),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
  }),
});

export async function visibleApproval(ctx: Context, id: string): Promise<ApprovalRow | null> {
  const a = await ctx.loaders.approval.load(id);
  return a && ctx.access && (await canView(ctx.access, a)) ? a : null;
}

// The request itself. Each later step of the data path adds its own fields to Approval from its
// own module (decisions, delivery, audit, contract, commands: builder.objectFields), so this
// module imports none of them.
export const ApprovalRef = builder.objectRef<ApprovalRow>('Approval');
builder.node(ApprovalRef, {
  id: { resolve: (a) => a.id },
  loadOne: (id, ctx) => visibleApproval(ctx, id),
  fields: (t) => ({
    key: t.exposeString('key', { nullable: true }),
    source: t.field({ type: ApprovalSourceEnum, resolve: (a) => a.source }),
    status: t.field({ type: ApprovalStatusEnum, resolve: (a) => a.status }),
    title: t.exposeString('title'),
    summary: t.exposeString('summary', { nullable: true }),
    risk: t.field({ type: RiskEnum, resolve: (a) => a.risk }),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => a.createdAt }),
    expiresAt: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.expiresAt ?? null }),
    closedAt: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.closedAt ?? null }),
    requester: t.field({ type: UserRef, nullable: true, resolve: (a, _x, ctx) => (a.requesterId ? rowOf(ctx.loaders.user, a.requesterId) : null) }),
    assignee: t.field({ type: UserRef, nullable: true, resolve: (a, _x, ctx) => (a.assigneeId ? rowOf(ctx.loaders.user, a.assigneeId) : null) }),
    agent: t.field({ type: AgentRef, nullable: true, resolve: (a, _x, ctx) => (a.agentId ? rowOf(ctx.loaders.agent, a.agentId) : null) }),
    task: t.field({ type: TaskRef, nullable: true, resolve: (a, _x, ctx) => (a.taskId ? rowOf(ctx.loaders.task, a.taskId) : null) }),
    sourceMessageId: t.exposeString('sourceMessageId', { nullable: true }),
    stepSeq: t.exposeInt('stepSeq', { nullable: true }),
    revision: t.exposeInt('revision'),
    version: t.int({
      description:
        "Grows with every change of the request's own fields (status, revision, assignee, risk, escalation...), read with them: of two answers about one request, the higher version is the newer. An answer to a request that itself changed the request may carry the version from before its change.",
      resolve: (a) => a.version ?? 1,
    }),
    digest: t.exposeString('digest'),
    action: t.field({ type: 'JSON', resolve: (a) => a.action }),
    externalId: t.string({
      nullable: true,
      description:
        "The requester's own call or thread id, as given to createApproval (or a command hook's external_id): not part of the action or its digest, never edited, signed with the approval (SignedApproval.externalId).",
      resolve: (a) => a.externalId ?? null,
    }),
    editable: t.boolean({
      description:
        'False when the requester offered no edit-then-approve (createApproval editable: false; a command is never edited): editAndApprove is refused, whatever the policy allows.',
      resolve: (a) => a.editable !== false,
    }),
    revisions: t.field({ type: [RevisionRef], resolve: (a, _x, ctx) => ctx.loaders.revisions.load(a.id) }),
    supersededBy: t.field({
      type: ApprovalRef,
      nullable: true,
      resolve: (a, _x, ctx) => (a.supersededById ? visibleApproval(ctx, a.supersededById) : null),
    }),
  }),
});

/**
 * The people, agents and tasks the page's items show, each kind read in one batch before the
 * page answers: every item's `requester { ... }` then completes at once (rowOf), where a promise
 * per item and field made up a large part of the list's CPU (the inbox: docs/PERFORMANCE.md).
 */
async function prefetchShown(ctx: Context, rows: ApprovalRow[], info: GraphQLResolveInfo) {
  const shown = new Set([...selectedFields(info, ['edges', 'node']), ...selectedFields(info, ['nodes'])]);
  const ids = (pick: (a: ApprovalRow) => string | null | undefined) => [...new Set(rows.map(pick).filter((id): id is string => !!id))];
  const users = [...(shown.has('requester') ? ids((a) => a.requesterId) : []), ...(shown.has('assignee') ? ids((a) => a.assigneeId) : [])];
  await Promise.all([
    users.length ? ctx.loaders.user.loadMany(users) : null,
    shown.has('agent') ? ctx.loaders.agent.loadMany(ids((a) => a.agentId)) : null,
    shown.has('task') ? ctx.loaders.task.loadMany(ids((a) => a.taskId)) : null,
  ]);
}

builder.queryFields((t) => ({
  approvals: t.withAuth({ authenticated: true }).connection(
    {
      type: ApprovalRef,
      args: {
        status: t.arg({ type: [ApprovalStatusEnum] }),
        agentId: t.arg.globalID({ for: AgentRef }),
        taskId: t.arg.globalID({ for: TaskRef }),
        assignedToMe: t.arg.boolean(),
        externalId: t.arg.string({ description: 'Only requests opened with this externalId (several may share one), newest first.' }),
      },
      resolve: async (_r, args, ctx, info) => {
        if (args.last != null || args.before != null) throw new DomainError('BAD_USER_INPUT', 'use first/after');
        const access = ctx.access;
        const page = pageQuery(args);
        const where: Record<string, unknown> = { $and: [await visibleFilter(access, { ownRequests: true }), page.where] };
        if (args.status?.length) where.status = { $in: args.status };
        if (args.agentId) where.agentId = args.agentId.id;
        if (args.taskId) where.taskId = args.taskId.id;
        if (args.externalId != null) {
          const externalId = parseExternalId(args.externalId);
          if (!externalId.ok) throw new DomainError('BAD_USER_INPUT', externalId.error);
          where.externalId = externalId.value;
        }
        // Assigned to me: to me in person, or to a reviewer group I belong to (escalation).
        if (args.assignedToMe) {
          const groups = [...(await groupIdsOf(ctx.em, access.viewer.userId))];
          where.$or = [{ assigneeId: access.viewer.userId }, ...(groups.length ? [{ assigneeGroupId: { $in: groups } }] : [])];
        }
        // Plain rows, not managed entities: the list only shows them (db/read-rows.ts).
        const rows = await readRows<ApprovalRow>(ctx.em, ApprovalRequest, where, { orderBy: ORDER_NEWEST, limit: page.limit });
        await prefetchShown(ctx, rows, info);
        return toConnection(rows, page.limit, args.after);
      },
    },
    { name: 'ApprovalConnection' },
    { name: 'ApprovalEdge' },
  ),
  approval: t.withAuth({ authenticated: true }).field({
    type: ApprovalRef,
    nullable: true,
    args: { id: t.arg.globalID({ for: ApprovalRef, required: true }) },
    resolve: (_r, { id }, ctx) => visibleApproval(ctx, id.id),
  }),
}));

const CreateApprovalInput = builder.inputType('CreateApprovalInput', {
  fields: (t) => ({
    taskId: t.globalID({ for: TaskRef, description: 'The task this request is about; its agent (and skill) is the approver scope.' }),
    agentId: t.globalID({
      for: AgentRef,
      description:
        'Without a task: the approver scope. OPERATE on this agent (and skill) decides, VIEW sees. Without taskId and agentId only admins decide (and see, besides the requester).',
    }),
    skillId: t.string({ description: 'With agentId: limits the approver scope to one skill of that agent.' }),
    title: t.string({ required: true }),
    summary: t.string(),
    risk: t.field({ type: RiskEnum }),
    expiresInSeconds: t.int(),
    action: t.field({ type: 'JSON', required: true }),
    externalId: t.string({
      description:
        "Your own id of the call or thread that asks (1 to 200 characters of printable ASCII): stored with the request, outside the action and its digest, never edited, in the signed approval's claims. Not unique: find your requests again with approvals(externalId:).",
    }),
    editable: t.boolean({
      defaultValue: true,
      description:
        'False: reviewers may approve or reject the action as it is, never edit it (editAndApprove is refused with OUTCOME_NOT_ALLOWED, whatever the policy allows).',
    }),
  }),
});

builder.mutationFields((t) => ({
  createApproval: t.withAuth({ authenticated: true }).field({
    type: ApprovalRef,
    args: { input: t.arg({ type: CreateApprovalInput, required: true }) },
    resolve: async (_r, { input }, ctx) =>
      (await createUserApproval(ctx.em, ctx.access, ctx.deps.config, {
        taskId: input.taskId?.id ?? null,
        agentId: input.agentId?.id ?? null,
        skillId: input.skillId,
        title: input.title,
        summary: input.summary,
        risk: input.risk ? (input.risk.toLowerCase() as 'low') : null,
        expiresInSeconds: input.expiresInSeconds,
        action: input.action,
        externalId: input.externalId,
        editable: input.editable,
      }))!,
  }),
}));

// Subscriptions: the pub/sub carries committed events only. Each event is loaded once for all
// subscribers of this instance (event-view.ts); each subscriber's tenant and grants are checked
// in memory before the approval is resolved through the event's shared loaders. The selection
// is executed once per group of subscribers that answer its viewer questions alike
// (graphql/shared-events.ts: `shareEventResults`), in the subscriber's scope for the event.
//
// The subscriber's scope for the event (the event's view, its access as of the event) is set
// when the event is prepared (events/pubsub.ts `prepare`: the view and every subscriber's
// grants load once, before the event is delivered); the check then answers at once.
/** The subscriber's context for the event: read through the event's view, with its access as of the event. */
function scoped(ctx: Context, viewer: Viewer, e: ApprovalEventPayload, view: EventView): Context {
  const inScope = inEventScope(ctx, e);
  return inScope !== ctx ? inScope : setEventScope(ctx, e, { em: view.em, loaders: view.loaders, access: view.accessOf(viewer) });
}

/** What the event's delivery waits for: the view, this subscriber's grants (both shared with every other subscriber). */
function prepareSubscriber(ctx: Context, e: ApprovalEventPayload): Promise<unknown> | undefined {
  const viewer = ctx.viewer;
  if (!viewer || e.tenantId !== viewer.tenantId) return undefined;
  const view = eventView(ctx.em, e);
  scoped(ctx, viewer, e, view);
  return view.grantsReady(viewer) ?? (view.approvals ? undefined : view.loaded);
}

function visibleToSubscriber(ctx: Context, e: ApprovalEventPayload): boolean | Promise<boolean> {
  const viewer = ctx.viewer;
  if (!viewer || e.tenantId !== viewer.tenantId) return false;
  const view = eventView(ctx.em, e);
  const access = scoped(ctx, viewer, e, view).access!;
  if (view.approvals) return canView(access, view.approvals.get(e.approvalId));
  return view.loaded.then(() => canView(access, view.approvals!.get(e.approvalId)));
}

async function loadForEvent(ctx: Context, id: string): Promise<ApprovalRow> {
  const a = await visibleApproval(ctx, id);
  if (!a) throw new DomainError('NOT_FOUND', 'approval not found');
  return a;
}

const ApprovalSupersededRef = builder.objectRef<{ approval: ApprovalRow; supersededBy: ApprovalRow | null }>('ApprovalSuperseded').implement({
  fields: (t) => ({
    approval: t.field({ type: ApprovalRef, resolve: (p) => p.approval }),
    supersededBy: t.field({ type: ApprovalRef, nullable: true, resolve: (p) => p.supersededBy }),
  }),
});

// The audit events each subscription delivers, as the catalogue declares them (its filter runs for every subscriber of every event).
const REQUESTED = auditTypesOf('approvalRequested');
const SUPERSEDED = auditTypesOf('approvalSuperseded');

builder.subscriptionFields((t) => ({
  approvalRequested: t.field({
    extensions: shareEventResults,
    type: ApprovalRef,
    authScopes: { authenticated: true },
    args: { agentId: t.arg.globalID({ for: AgentRef }) },
    subscribe: (_r, { agentId }, ctx) =>
      ctx.pubsub.subscribe('approval', {
        when: (e) => REQUESTED.has(e.type) && (!agentId || e.agentId === agentId.id),
        prepare: (e) => prepareSubscriber(ctx, e),
        visible: (e) => visibleToSubscriber(ctx, e),
      }),
    resolve: (e, _a, ctx) => loadForEvent(ctx, e.approvalId),
  }),
  approvalSuperseded: t.field({
    extensions: shareEventResults,
    type: ApprovalSupersededRef,
    authScopes: { authenticated: true },
    args: { agentId: t.arg.globalID({ for: AgentRef }) },
    subscribe: (_r, { agentId }, ctx) =>
      ctx.pubsub.subscribe('approval', {
        when: (e) => SUPERSEDED.has(e.type) && (!agentId || e.agentId === agentId.id),
        prepare: (e) => prepareSubscriber(ctx, e),
        visible: (e) => visibleToSubscriber(ctx, e),
      }),
    resolve: async (e, _a, ctx) => ({
      approval: await loadForEvent(ctx, e.approvalId),
      supersededBy: e.supersededById ? await visibleApproval(ctx, e.supersededById) : null,
    }),
  }),
  approvalChanged: t.field({
    extensions: shareEventResults,
    type: ApprovalRef,
    authScopes: { authenticated: true },
    args: { approvalId: t.arg.globalID({ for: ApprovalRef }), agentId: t.arg.globalID({ for: AgentRef }) },
    subscribe: (_r, { approvalId, agentId }, ctx) =>
      ctx.pubsub.subscribe('approval', {
        when: (e) => (!approvalId || e.approvalId === approvalId.id) && (!agentId || e.agentId === agentId.id),
        prepare: (e) => prepareSubscriber(ctx, e),
        visible: (e) => visibleToSubscriber(ctx, e),
      }),
    resolve: (e, _a, ctx) => loadForEvent(ctx, e.approvalId),
  }),
}));
