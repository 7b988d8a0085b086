import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@mikro-orm/postgresql';
import { run, type Runner, type RunnerOptions, type TaskList } from 'graphile-worker';
import type { Message } from '../a2a/types.js';
import { latestSnapshot, recordAgentFailure } from '../agents/service.js';
import type { ApprovalAction } from '../approvals/digest.js';
import { ApprovalRequest } from '../approvals/entities.js';
import { EXPIRE_JOB, expireIfDue } from '../approvals/service.js';
import { AUDIT_VERIFY_JOB, auditVerifyTask, checkpointThenVerify } from '../audit/verification-job.js';
import { appendEvents, stream, SYSTEM } from '../audit/log.js';
import { Access } from '../auth/access.js';
import { MEDIA_TYPE } from '../a2a/extensions.js';
import { addJob } from '../db/sql.js';
import { quietLogger } from '../db/orm.js';
import { DELIVER_JOB } from '../decisions/service.js';
import type { Deps } from '../deps.js';
import { DomainError, notFound } from '../errors.js';
import { reconcileOutcome, RECONCILE_OUTCOME_JOB } from '../grants/service.js';
import { Task } from '../tasks/entities.js';
import { recordObservation } from '../tasks/observe.js';
import { sendToAgent } from '../tasks/service.js';
import { Delivery } from './entities.js';
import { startJobRecovery } from './job-recovery.js';
import { storable } from '../db/storable.js';

// Delivery: the approved action reaches the agent once, as a message on the same task and
// context whose messageId is derived from the decision (so a retry is the same message), with
// metadata.approval naming exactly what was approved.

export const CHECKPOINT_JOB = 'audit_checkpoint';

export function approvedMessage(
  action: ApprovalAction,
  approval: { requestId: string; decisionId: string; revision: number; revisionDigest: string },
  ids: { messageId: string; taskId?: string; contextId?: string },
): Message {
  const metadata: Record<string, unknown> = { approval };
  let parts: Message['parts'];
  if (action.kind === 'send_message') {
    parts = [{ text: action.text }];
    if (action.data) metadata.decision = action.data;
  } else {
    parts = [{ data: action.values, mediaType: MEDIA_TYPE.json }];
  }
  return { messageId: ids.messageId, role: 'ROLE_USER', parts, taskId: ids.taskId, contextId: ids.contextId, metadata };
}

/** One attempt. Throws to let the queue retry with backoff, until the last attempt fails it. */
export async function deliver(em: EntityManager, deps: Deps, deliveryId: string, attempt: number, maxAttempts: number) {
  const delivery = await em.findOne(Delivery, { id: deliveryId });
  if (!delivery || delivery.status === 'DELIVERED') return;
  const approval = await em.findOneOrFail(ApprovalRequest, { id: delivery.approvalId });
  const task = await em.findOneOrFail(Task, { id: approval.taskId! });
  const snapshot = await latestSnapshot(em, task.agentId);
  const revisionDigest = approval.digest;
  const message = approvedMessage(
    approval.action,
    { requestId: approval.id, decisionId: delivery.decisionId, revision: approval.revision, revisionDigest },
    { messageId: delivery.messageId, taskId: task.remoteTaskId ?? undefined, contextId: task.contextId ?? undefined },
  );
  delivery.attempts += 1;
  await em.flush();
  const routing = { approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, deliveryId, decisionId: delivery.decisionId };
  try {
    if (!snapshot) throw new Error('agent card missing');
    const result = await sendToAgent(deps, snapshot.card, message, task.skillId ?? null);
    await em.transactional(async (tem) => {
      const observed = await recordObservation(tem, deps.config, task.id, { sent: message, result });
      const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true });
      d.status = 'DELIVERED';
      d.lastError = null;
      d.observedTaskState = observed.state;
      d.observedAt = new Date();
      await tem.flush();
      await appendEvents(tem, [
        {
          tenantId: approval.tenantId,
          stream: stream.approval(approval.id),
          type: 'delivery.delivered',
          actor: SYSTEM,
          data: { ...routing, messageId: d.messageId, attempts: d.attempts, observedTaskState: observed.state },
        },
      ]);
    });
  } catch (e) {
    // Reviewers see the classified message (an A2AError's never holds what the agent answered);
    // admins read the upstream detail on the agent.
    await recordAgentFailure(em, task.agentId, e);
    const error = storable((e as Error).message?.slice(0, 2000) || String(e));
    const last = attempt >= maxAttempts;
    await em.transactional(async (tem) => {
      const d = await tem.findOneOrFail(Delivery, { id: deliveryId }, { refresh: true });
      d.lastError = error;
      if (last) d.status = 'FAILED';
      await tem.flush();
      if (last) {
        await appendEvents(tem, [
          {
            tenantId: approval.tenantId,
            stream: stream.approval(approval.id),
            type: 'delivery.failed',
            actor: SYSTEM,
            data: { ...routing, attempts: d.attempts, error },
          },
        ]);
      }
    });
    if (!last) throw e;
  }
}

/** A reviewer retries a FAILED delivery: same decision, same messageId. */
export async function retryDelivery(em: EntityManager, access: Access, deps: Deps, approvalId: string) {
  return em.transactional(async (tem) => {
    // The grants are read on the transaction's connection: concurrent retries each hold one
    // while they wait, and needing a second would deadlock the pool (races.test.ts).
    const txAccess = new Access(tem, access.viewer);
    const approval = await tem.findOne(ApprovalRequest, { id: approvalId, tenantId: access.viewer.tenantId });
    const task = approval?.taskId ? await tem.findOne(Task, { id: approval.taskId }) : null;
    if (!approval || !approval.agentId || !(await txAccess.has('VIEW', approval.agentId, task?.skillId ?? null))) throw notFound('approval');
    if (!(await txAccess.has('OPERATE', approval.agentId, task?.skillId ?? null))) throw new DomainError('FORBIDDEN', 'you need OPERATE on this agent');
    // Locked: of concurrent retries exactly one sees FAILED and queues a job.
    const d = await tem.findOne(Delivery, { approvalId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!d || d.status !== 'FAILED') throw new DomainError('BAD_USER_INPUT', 'only a FAILED delivery can be retried');
    d.status = 'QUEUED';
    await tem.flush();
    await addJob(tem, DELIVER_JOB, { deliveryId: d.id }, { maxAttempts: deps.config.deliveryMaxAttempts });
    await appendEvents(tem, [
      {
        tenantId: approval.tenantId,
        stream: stream.approval(approval.id),
        type: 'delivery.retried',
        actor: { type: 'user', id: access.viewer.userId },
        data: { approvalId, agentId: approval.agentId, taskId: approval.taskId, deliveryId: d.id },
      },
    ]);
    return approval;
  });
}

export function taskList(orm: MikroORM, deps: Deps): TaskList {
  return {
    [DELIVER_JOB]: async (payload, helpers) => {
      const { deliveryId } = payload as { deliveryId: string };
      await deliver(orm.em.fork(), deps, deliveryId, helpers.job.attempts, helpers.job.max_attempts);
    },
    [EXPIRE_JOB]: async (payload, helpers) => {
      const { approvalId } = payload as { approvalId: string };
      const em = orm.em.fork();
      if (await expireIfDue(em, approvalId)) return;
      // The queue runs jobs by the database's clock, expiry is judged by ours: if the job came
      // early (clocks disagree), run it again at the expiry time instead of dropping it.
      const a = await em.findOne(ApprovalRequest, { id: approvalId });
      if (a?.status === 'PENDING' && a.expiresAt) {
        await helpers.addJob(EXPIRE_JOB, { approvalId }, { runAt: new Date(a.expiresAt.getTime() + 1000), jobKey: `expire:${approvalId}` });
      }
    },
    [RECONCILE_OUTCOME_JOB]: async (payload, helpers) => {
      const { commandApprovalId } = payload as { commandApprovalId: string };
      const r = await reconcileOutcome(orm.em.fork(), commandApprovalId, deps.config.commandOutcomeTimeoutSeconds);
      // Came early by our clock: again at the due time, as the expiry job does.
      if (r.result === 'NOT_DUE') {
        await helpers.addJob(RECONCILE_OUTCOME_JOB, { commandApprovalId }, { runAt: new Date(r.dueAt.getTime() + 1000), jobKey: `reconcile-outcome:${commandApprovalId}` });
      }
    },
    [AUDIT_VERIFY_JOB]: auditVerifyTask(orm),
    [CHECKPOINT_JOB]: async (_payload, helpers) => {
      // The next one is queued first, so a failed checkpoint does not end the schedule.
      const every = deps.config.checkpointIntervalSeconds;
      await helpers.addJob(CHECKPOINT_JOB, {}, checkpointSpec(nextCheckpointAt(helpers.job.run_at, every), 'replace'));
      await checkpointThenVerify(orm.em.fork());
    },
  };
}

// Audit checkpoints every TASKBAY_CHECKPOINT_INTERVAL seconds, exactly (a crontab has minute
// resolution): each checkpoint job queues the next one at its own scheduled time plus the
// interval. The job key keeps one queued across instances and restarts; one attempt each, the
// next one comes anyway.
const CHECKPOINT_JOB_KEY = CHECKPOINT_JOB;

const checkpointSpec = (runAt: Date, jobKeyMode: 'replace' | 'preserve_run_at') => ({
  runAt,
  jobKey: CHECKPOINT_JOB_KEY,
  jobKeyMode,
  maxAttempts: 1,
});

/** The scheduled time plus the interval (so the schedule does not drift), or from now when late. */
export function nextCheckpointAt(scheduledAt: Date, everySeconds: number, now = new Date()): Date {
  const next = new Date(scheduledAt.getTime() + everySeconds * 1000);
  return next > now ? next : new Date(now.getTime() + everySeconds * 1000);
}

/** At start: queue the first checkpoint unless one is queued; one due later than the (maybe
 *  shortened) interval allows is brought forward. A restart never postpones the next one. */
async function scheduleCheckpoints(runner: Runner, everySeconds: number) {
  const due = new Date(Date.now() + everySeconds * 1000);
  const queued = await runner.addJob(CHECKPOINT_JOB, {}, checkpointSpec(due, 'preserve_run_at'));
  if (new Date(queued.run_at) > due) await runner.addJob(CHECKPOINT_JOB, {}, checkpointSpec(due, 'replace'));
}

export async function startWorker(orm: MikroORM, deps: Deps, databaseUrl: string): Promise<Runner> {
  const recovery = startJobRecovery(databaseUrl);
  // A fresh options object per runner: graphile-worker caches what it compiles from one.
  const options = (): RunnerOptions => ({
    connectionString: databaseUrl,
    concurrency: 4,
    pollInterval: 1000,
    noHandleSignals: true,
    logger: quietLogger(),
    taskList: taskList(orm, deps),
    // Each worker holds its liveness lock before it takes a job (see job-recovery.ts).
    preset: { plugins: [recovery.plugin] },
  });
  let runner: Runner | null = null;
  try {
    runner = await run(options());
    await scheduleCheckpoints(runner, deps.config.checkpointIntervalSeconds);
  } catch (e) {
    await runner?.stop();
    await recovery.close();
    throw e;
  }
  let current: Runner = runner;

  // graphile-worker 0.16 does not replace a worker that could not record its job's outcome (the
  // database was unreachable; it "commits seppuku"), so every outage would shrink the pool for
  // good. Such an error replaces the runner; the dead worker's job is released by the sweeper
  // once that worker's lock is gone (job-recovery.ts).
  let stopping = false;
  let replacing: Promise<void> | null = null;
  const replace = async (old: Runner) => {
    await old.stop().catch(() => {});
    for (let delay = 500; !stopping; delay = Math.min(delay * 2, 10_000)) {
      try {
        current = await run(options());
        supervise(current);
        console.error('[worker] replaced the job runner after a worker error');
        return;
      } catch (e) {
        console.error(`[worker] could not start a new job runner: ${(e as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  const supervise = (r: Runner) =>
    r.events.on('worker:fatalError', () => {
      if (stopping || replacing) return;
      replacing = replace(r).finally(() => (replacing = null));
    });
  supervise(current);

  return {
    addJob: (...args) => current.addJob(...args),
    get promise() {
      return current.promise;
    },
    get events() {
      return current.events;
    },
    async stop() {
      stopping = true;
      await replacing;
      // A runner whose pool failed stops itself; that is not an error here.
      await current.stop().catch((e: Error) => {
        if (!/already stopped/.test(e.message)) throw e;
      });
      await recovery.close();
    },
  };
}
