import type { A2ATaskState } from '../a2a/types.js';
import { AgentRef } from '../agents/module.js';
import { UserRef, authorize, canView, visibleFilter } from '../auth/module.js';
import { badInput, DomainError } from '../errors.js';
import { MESSAGE_LIMITS, TRANSCRIPT_READ_LIMITS } from '../limits.js';
import { builder } from '../graphql/builder.js';
import { freshEventScope, type Context, type SignedInContext } from '../graphql/context.js';
import type { TaskEventPayload } from '../events/pubsub.js';
import { ORDER_NEWEST, pageQuery, toConnection } from '../graphql/pagination.js';
import { Task, type TaskMessageRow, type TaskRow, type TaskStatusRow } from './entities.js';
import { chooseOffers, type Offers } from './observe.js';
import { cancelTask, sendA2uiAction, sendTaskMessage, startTask, submitTaskForm, syncTask } from './service.js';

const STATES = ['SUBMITTED', 'WORKING', 'INPUT_REQUIRED', 'AUTH_REQUIRED', 'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED'] as const;
export const TaskStateEnum = builder.enumType('TaskState', { values: STATES });
type GqlTaskState = (typeof STATES)[number];
export const toGqlState = (s: A2ATaskState): GqlTaskState => s.replace('TASK_STATE_', '') as GqlTaskState;
export const fromGqlState = (s: GqlTaskState): A2ATaskState => `TASK_STATE_${s}` as A2ATaskState;

// Which part the stored form and a2ui were read from, by the rule that chose them (observe.ts
// chooseOffers); read once per row, both index fields share it.
const chosenParts = new WeakMap<TaskMessageRow, Offers>();
function chosen(m: TaskMessageRow): Offers {
  let o = chosenParts.get(m);
  if (!o) {
    o = chooseOffers(m.parts, { form: m.form != null, a2ui: m.a2ui != null });
    chosenParts.set(m, o);
  }
  return o;
}

const TaskMessageRef = builder.objectRef<TaskMessageRow>('TaskMessage').implement({
  description: 'A message of the task transcript. Parts are agent content: render as text, never as HTML.',
  fields: (t) => ({
    stepSeq: t.exposeInt('stepSeq'),
    messageId: t.exposeString('messageId'),
    role: t.string({ resolve: (m) => (m.role === 'ROLE_AGENT' ? 'AGENT' : 'USER') }),
    parts: t.field({ type: 'JSON', resolve: (m) => m.parts }),
    metadata: t.field({ type: 'JSON', nullable: true, resolve: (m) => m.metadata ?? null }),
    form: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'The structured form this agent message asks for (seed 003), validated by the subset rules when observed; null when absent, invalid or not advertised (then the part is ordinary data).',
      resolve: (m) => m.form ?? null,
    }),
    formPartIndex: t.int({
      nullable: true,
      description:
        'The index in `parts` of the part `form` was read from (the first valid form part); null when `form` is null. Every other part, another form part included, is ordinary data.',
      resolve: (m) => (m.form ? chosen(m).formPartIndex : null),
    }),
    a2ui: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The A2UI v0.9 envelopes of this agent message, only when the card advertises the A2UI extension. Render inert.',
      resolve: (m) => m.a2ui ?? null,
    }),
    a2uiPartIndex: t.int({
      nullable: true,
      description:
        'The index in `parts` of the part `a2ui` was read from (the first valid A2UI part); null when `a2ui` is null. Every other part, another A2UI part included, is ordinary data.',
      resolve: (m) => (m.a2ui ? chosen(m).a2uiPartIndex : null),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (m) => m.createdAt }),
  }),
});

const TaskStatusRef = builder.objectRef<TaskStatusRow>('TaskStatusChange').implement({
  fields: (t) => ({
    state: t.field({ type: TaskStateEnum, resolve: (s) => toGqlState(s.state) }),
    messageId: t.exposeString('messageId', { nullable: true }),
    at: t.field({ type: 'DateTime', resolve: (s) => s.at }),
  }),
});

async function visibleTask(ctx: Context, id: string): Promise<TaskRow | null> {
  const task = await ctx.loaders.task.load(id);
  return task && ctx.access && (await canView(ctx.access, task)) ? task : null;
}

export const TaskRef = builder.objectRef<TaskRow>('Task');
builder.node(TaskRef, {
  id: { resolve: (task) => task.id },
  loadOne: (id, ctx) => visibleTask(ctx, id),
  fields: (t) => ({
    state: t.field({ type: TaskStateEnum, resolve: (task) => toGqlState(task.state) }),
    agent: t.field({ type: AgentRef, resolve: async (task, _a, ctx) => (await ctx.loaders.agent.load(task.agentId))! }),
    skillId: t.exposeString('skillId', { nullable: true }),
    remoteTaskId: t.exposeString('remoteTaskId', { nullable: true }),
    contextId: t.exposeString('contextId', { nullable: true }),
    createdBy: t.field({ type: UserRef, nullable: true, resolve: (task, _a, ctx) => (task.createdById ? ctx.loaders.user.load(task.createdById) : null) }),
    createdAt: t.field({ type: 'DateTime', resolve: (task) => task.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (task) => task.updatedAt }),
    messages: t.field({
      type: [TaskMessageRef],
      description: `A page of the transcript, oldest first: the latest \`last\` messages (1 to ${TRANSCRIPT_READ_LIMITS.pageMax}, default ${TRANSCRIPT_READ_LIMITS.pageMax}) with a stepSeq below \`before\` (absent: the latest), fewer when they would exceed ${TRANSCRIPT_READ_LIMITS.pageBytesMax} bytes (always at least one). Messages are numbered from 1, so a first stepSeq above 1 means earlier messages exist: pass it as \`before\`. One request reads at most ${TRANSCRIPT_READ_LIMITS.requestBytesMax} bytes of messages (BAD_USER_INPUT, reason READ_TOO_LARGE).`,
      args: {
        last: t.arg.int({ description: `1 to ${TRANSCRIPT_READ_LIMITS.pageMax}` }),
        before: t.arg.int({ description: 'A stepSeq: only messages before it.' }),
      },
      resolve: (task, args, ctx) => {
        const last = args.last ?? TRANSCRIPT_READ_LIMITS.pageMax;
        if (!Number.isInteger(last) || last < 1 || last > TRANSCRIPT_READ_LIMITS.pageMax) throw badInput(`last must be 1 to ${TRANSCRIPT_READ_LIMITS.pageMax}`);
        if (args.before != null && args.before < 1) throw badInput('before must be a stepSeq (1 or more)');
        return ctx.loaders.messagePages.page({ taskId: task.id, last, before: args.before ?? null });
      },
    }),
    limitReason: t.string({
      nullable: true,
      description:
        'Why Taskbay stopped following the task: its agent went over a limit on what one stream or one task may hold. What was stored before stays; nothing the agent sends for the task is stored any more, and the task ended (FAILED unless it had ended already). Null while Taskbay follows the task.',
      resolve: (task) => task.limitReason ?? null,
    }),
    statusHistory: t.field({ type: [TaskStatusRef], resolve: (task, _a, ctx) => ctx.loaders.statuses.load(task.id) }),
  }),
});

builder.queryFields((t) => ({
  tasks: t.withAuth({ authenticated: true }).connection(
    {
      type: TaskRef,
      args: { agentId: t.arg.globalID({ for: AgentRef }), state: t.arg({ type: TaskStateEnum }) },
      resolve: async (_r, args, ctx) => {
        if (args.last != null || args.before != null) throw new DomainError('BAD_USER_INPUT', 'use first/after');
        const page = pageQuery(args);
        const where: Record<string, unknown> = { $and: [await visibleFilter(ctx.access, { ownRequests: false }), page.where] };
        if (args.agentId) where.agentId = args.agentId.id;
        if (args.state) where.state = fromGqlState(args.state);
        const rows = await ctx.em.find(Task, where, { orderBy: ORDER_NEWEST, limit: page.limit });
        return toConnection(rows, page.limit, args.after);
      },
    },
    { name: 'TaskConnection' },
    { name: 'TaskEdge' },
  ),
  task: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    nullable: true,
    args: { id: t.arg.globalID({ for: TaskRef, required: true }) },
    resolve: (_r, { id }, ctx) => visibleTask(ctx, id.id),
  }),
}));

const StartTaskInput = builder.inputType('StartTaskInput', {
  fields: (t) => ({
    agentId: t.globalID({ for: AgentRef, required: true }),
    skillId: t.string(),
    text: t.string(),
    data: t.field({ type: 'JSON' }),
    formValues: t.field({ type: 'JSON', description: "Values of the agent's start form; sent as the first message's one application/json data part." }),
  }),
});

const SubmitTaskFormInput = builder.inputType('SubmitTaskFormInput', {
  fields: (t) => ({
    taskId: t.globalID({ for: TaskRef, required: true }),
    messageId: t.string({ required: true }),
    values: t.field({ type: 'JSON', required: true }),
  }),
});

const SendA2uiActionInput = builder.inputType('SendA2uiActionInput', {
  fields: (t) => ({
    taskId: t.globalID({ for: TaskRef, required: true }),
    messageId: t.string({ required: true }),
    action: t.field({ type: 'JSON', required: true, description: 'A2UI v0.9 action: { name, surfaceId, sourceComponentId?, context? }' }),
  }),
});

const SendTaskMessageInput = builder.inputType('SendTaskMessageInput', {
  fields: (t) => ({
    taskId: t.globalID({ for: TaskRef, required: true }),
    text: t.string(),
    data: t.field({ type: 'JSON' }),
    idempotencyKey: t.string({
      description: `Optional, 1 to ${MESSAGE_LIMITS.idempotencyKeyMax} characters: the same key with the same text and data sends nothing more and answers the task as it stands; with other content it is refused (IDEMPOTENCY_KEY_REUSED).`,
    }),
  }),
});

builder.mutationFields((t) => ({
  startTask: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    args: { input: t.arg({ type: StartTaskInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      startTask(ctx.em, ctx.access, ctx.deps, {
        agentId: input.agentId.id,
        skillId: input.skillId,
        text: input.text,
        data: input.data,
        formValues: input.formValues,
      }),
  }),
  sendTaskMessage: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    args: { input: t.arg({ type: SendTaskMessageInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      sendTaskMessage(ctx.em, ctx.access, ctx.deps, {
        taskId: input.taskId.id,
        text: input.text,
        data: input.data,
        idempotencyKey: input.idempotencyKey,
      }),
  }),
  submitTaskForm: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    description:
      'Answers the form of the message the task waits on: one application/json data part of the declared keys, coerced. Reaches the agent once: the same values again answer the task as it stands, other values are refused (ALREADY_ANSWERED).',
    args: { input: t.arg({ type: SubmitTaskFormInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      submitTaskForm(ctx.em, ctx.access, ctx.deps, { taskId: input.taskId.id, messageId: input.messageId, values: input.values }),
  }),
  sendA2uiAction: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    description:
      'Sends an A2UI button action as one application/a2ui+json data part, while the task waits on that message. Reaches the agent once: the same action again answers the task as it stands, another is refused (ALREADY_ANSWERED).',
    args: { input: t.arg({ type: SendA2uiActionInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      sendA2uiAction(ctx.em, ctx.access, ctx.deps, { taskId: input.taskId.id, messageId: input.messageId, action: input.action }),
  }),
  cancelTask: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    description: 'A2A CancelTask on the agent; the task it answers is stored.',
    args: { taskId: t.arg.globalID({ for: TaskRef, required: true }) },
    resolve: (_r, { taskId }, ctx) => cancelTask(ctx.em, ctx.access, ctx.deps, taskId.id),
  }),
  syncTask: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    description: "A2A GetTask: resynchronises the stored task with the agent's view.",
    args: { taskId: t.arg.globalID({ for: TaskRef, required: true }) },
    resolve: (_r, { taskId }, ctx) => syncTask(ctx.em, ctx.access, ctx.deps, taskId.id),
  }),
}));

// Like the approval subscriptions: each event is checked against the subscriber's tenant and
// grants (through a fresh entity manager) before anything is emitted, so a task the subscriber
// cannot see (any more) sends nothing at all. Subscribing to a task one cannot see answers
// NOT_FOUND once, as the query does.
async function visibleToSubscriber(ctx: SignedInContext, e: TaskEventPayload): Promise<boolean> {
  if (e.tenantId !== ctx.viewer.tenantId) return false;
  freshEventScope(ctx);
  return !!(await visibleTask(ctx, e.taskId));
}

builder.subscriptionFields((t) => ({
  taskUpdated: t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    args: { taskId: t.arg.globalID({ for: TaskRef, required: true }) },
    subscribe: async (_r, { taskId }, ctx) => {
      await authorize(ctx.access, 'VIEW', 'task', await ctx.loaders.task.load(taskId.id));
      return ctx.pubsub.subscribe('task', { when: (e) => e.taskId === taskId.id, visible: (e) => visibleToSubscriber(ctx, e) });
    },
    // Loaded through the scope the filter just checked (the loader caches the row).
    resolve: async (e, _a, ctx) => authorize(ctx.access, 'VIEW', 'task', await ctx.loaders.task.load(e.taskId)),
  }),
}));
