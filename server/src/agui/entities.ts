import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { ApprovalRequest } from '../approvals/entities.js';
import { manyToOneId } from '../db/relations.js';
import { Task } from '../tasks/entities.js';

// The runs of an AG-UI agent's task (docs/AG-UI.md): one row per run Taskbay started, with the
// conversation after it (the next run's input), the interrupts it ended with (agui_interrupt, one
// approval each) and, for an interrupted run, the state of its resume: the one run that answers
// every interrupt of it, sent by the agui_resume job.

export const AGUI_RUN_STATUSES = ['RUNNING', 'SUCCESS', 'INTERRUPTED', 'ERROR', 'CANCELLED'] as const;
export type AgUiRunStatus = (typeof AGUI_RUN_STATUSES)[number];
export const AGUI_RESUME_STATUSES = ['QUEUED', 'DELIVERED', 'FAILED'] as const;
export type AgUiResumeStatus = (typeof AGUI_RESUME_STATUSES)[number];

export const AgUiRun = defineEntity({
  name: 'AgUiRun',
  tableName: 'agui_run',
  properties: {
    id: p.uuid().primary(),
    taskId: manyToOneId(Task, 'task_id'),
    runId: p.text(),
    threadId: p.text(),
    /** The interrupted run this one resumes. */
    resumesId: () => manyToOneId(AgUiRun, 'resumes_id').nullable(),
    status: p.enum([...AGUI_RUN_STATUSES]),
    /** Why the run failed: RUN_ERROR's message, or the protocol error Taskbay stopped reading at. */
    error: p.text().nullable(),
    /** Valid events read. */
    events: p.integer().default(0),
    /** AG-UI Message[]: the conversation after this run (the input's messages and the run's own). */
    messages: p.json<unknown[]>(),
    /** The last STATE_SNAPSHOT of the run (or the input's state). */
    state: p.json<unknown>().nullable(),
    /** RUN_FINISHED.result. */
    result: p.json<unknown>().nullable(),
    resumeStatus: p.enum([...AGUI_RESUME_STATUSES]).nullable(),
    /** The runId of the resuming run: derived from this row, so every attempt sends the same one. */
    resumeRunId: p.text().nullable(),
    resumeAttempts: p.integer().default(0),
    resumeError: p.text().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
    finishedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['taskId', 'runId'] }],
  indexes: [{ name: 'agui_run_task', properties: ['taskId', 'createdAt'] }],
});

/** One interrupt of a run and the approval it opened. */
export const AgUiInterrupt = defineEntity({
  name: 'AgUiInterrupt',
  tableName: 'agui_interrupt',
  properties: {
    id: p.uuid().primary(),
    runRowId: manyToOneId(AgUiRun, 'run_row_id'),
    interruptId: p.text(),
    approvalId: manyToOneId(ApprovalRequest, 'approval_id'),
    /** The Interrupt as the agent sent it (validated). */
    interrupt: p.json<Record<string, unknown>>(),
  },
  uniques: [{ properties: ['runRowId', 'interruptId'] }, { properties: ['approvalId'] }],
});

export type AgUiRunRow = InferEntity<typeof AgUiRun>;
export type AgUiInterruptRow = InferEntity<typeof AgUiInterrupt>;
