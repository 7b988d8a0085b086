import { builder } from '../graphql/builder.js';
import { actorOf, AgentRef } from '../agents/module.js';
import { registerAgUiAgent } from './agent-registration.js';
import { AgUiRun, type AgUiRunRow } from './entities.js';
import { TaskRef } from '../tasks/module.js';

// The AG-UI runs of a task (docs/AG-UI.md): what each run ended with and where its resume stands.

const AgUiRunStatusEnum = builder.enumType('AgUiRunStatus', { values: ['RUNNING', 'SUCCESS', 'INTERRUPTED', 'ERROR', 'CANCELLED'] as const });
const AgUiResumeStatusEnum = builder.enumType('AgUiResumeStatus', { values: ['QUEUED', 'DELIVERED', 'FAILED'] as const });

const AgUiRunRef = builder.objectRef<AgUiRunRow>('AgUiRun').implement({
  description: 'One run of an AG-UI agent on the task (its thread).',
  fields: (t) => ({
    runId: t.exposeString('runId'),
    threadId: t.exposeString('threadId'),
    status: t.field({ type: AgUiRunStatusEnum, resolve: (r) => r.status }),
    error: t.string({ nullable: true, description: "RUN_ERROR's message, or the protocol error Taskbay stopped reading at.", resolve: (r) => r.error ?? null }),
    events: t.exposeInt('events', { description: 'Valid events read.' }),
    resumes: t.string({
      nullable: true,
      description: 'The runId of the interrupted run this run resumes.',
      resolve: async (r, _a, ctx) => (r.resumesId ? ((await ctx.em.findOne(AgUiRun, { id: r.resumesId }))?.runId ?? null) : null),
    }),
    resumeStatus: t.field({
      type: AgUiResumeStatusEnum,
      nullable: true,
      description: 'For an interrupted run: its one resume, once every interrupt is answered.',
      resolve: (r) => r.resumeStatus ?? null,
    }),
    resumeRunId: t.string({ nullable: true, resolve: (r) => r.resumeRunId ?? null }),
    resumeAttempts: t.exposeInt('resumeAttempts'),
    resumeError: t.string({ nullable: true, resolve: (r) => r.resumeError ?? null }),
    state: t.field({ type: 'JSON', nullable: true, description: 'The last STATE_SNAPSHOT.', resolve: (r) => r.state ?? null }),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
  }),
});

builder.objectFields(TaskRef, (t) => ({
  aguiRuns: t.field({
    type: [AgUiRunRef],
    description: 'AG-UI agents only: the runs on this task, oldest first. Empty for other agents.',
    resolve: (task, _a, ctx) => ctx.em.find(AgUiRun, { taskId: task.id }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
  }),
}));

const RegisterAgUiAgentInput = builder.inputType('RegisterAgUiAgentInput', {
  fields: (t) => ({
    endpointUrl: t.string({ required: true, description: 'Where runs are POSTed (RunAgentInput in, events over SSE out).' }),
    name: t.string({ required: true, description: 'How the console names the agent (AG-UI has no card to read it from).' }),
  }),
});

builder.mutationFields((t) => ({
  registerAgUiAgent: t.withAuth({ admin: true }).field({
    type: AgentRef,
    description: 'Registers an AG-UI agent by its endpoint (docs/AG-UI.md). The URL must pass the agent network policy.',
    args: { input: t.arg({ type: RegisterAgUiAgentInput, required: true }) },
    resolve: (_r, { input }, ctx) => registerAgUiAgent(ctx.em, ctx.deps.network, ctx.viewer.tenantId, actorOf(ctx), input),
  }),
}));
