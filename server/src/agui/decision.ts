import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AGUI_KEY_PREFIX, type ApprovalRow } from '../approvals/entities.js';
import type { ExpiryHook } from '../approvals/module.js';
import { stream, type Actor, type AuditEventInput } from '../audit/module.js';
import type { DecisionHook } from '../decisions/module.js';
import { queueDelivery } from '../delivery/module.js';
import type { Config } from '../config.js';
import { addJob, sql } from '../db/sql.js';
import { sha256Hex, uuidFromDigest } from '../lib/hashing.js';
import { AgUiInterrupt, AgUiRun } from './entities.js';

// What a decision on an AG-UI interrupt's request adds (decisions/hooks.ts): every final decision
// is an answer the agent gets, approve and edit as a resolved resume entry, reject and request
// changes as a cancelled one, so each gets a delivery (its execution record). AG-UI 1.0 resumes a
// run with one input answering every interrupt of it ("Cover all open interrupts"): the decision
// that answers the last open interrupt of a run queues the run's one resume job
// (agui/resume.ts). The run row is locked, so of two last decisions exactly one sees
// nothing left open.

export const AGUI_RESUME_JOB = 'agui_resume';

/** The runId of the run that resumes an interrupted run: derived from it, so every attempt sends the same. */
export const resumeRunIdOf = (runRowId: string) => uuidFromDigest(sha256Hex(`taskbay-agui-resume:${runRowId}`));

/** In a transaction: marks the run's resume QUEUED and queues its one job. */
export async function queueResume(tem: EntityManager, runRowId: string, maxAttempts: number) {
  await sql(tem, `update agui_run set resume_status = 'QUEUED', resume_run_id = coalesce(resume_run_id, ?) where id = ?`, [resumeRunIdOf(runRowId), runRowId]);
  await addJob(tem, AGUI_RESUME_JOB, { runRowId }, { maxAttempts, jobKey: `agui-resume:${runRowId}` });
}

export const aguiDecisionHook: DecisionHook = {
  deliversDecisions: true,
  checkOutcome() {},
  async onDecision(
    tem: EntityManager,
    approval: ApprovalRow,
    outcome,
    actor: Actor,
    decisionId: string,
    config: Pick<Config, 'deliveryMaxAttempts'>,
  ): Promise<AuditEventInput[]> {
    if (outcome === 'DELEGATE') return [];
    const link = await tem.findOneOrFail(AgUiInterrupt, { approvalId: approval.id });
    // Serialises the decisions of one run's interrupts: the last one queues the resume.
    await tem.findOneOrFail(AgUiRun, { id: link.runRowId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const now = new Date();
    const { deliveryId, messageId } = await queueDelivery(tem, { approvalId: approval.id, decisionId, now });
    const base = { tenantId: approval.tenantId, stream: stream.approval(approval.id), actor };
    const routing = { approvalId: approval.id, agentId: approval.agentId, taskId: approval.taskId, decisionId };
    const events: AuditEventInput[] = [{ ...base, type: 'delivery.queued', data: { ...routing, deliveryId, messageId, aguiRunRowId: link.runRowId } }];
    const [open] = await sql<{ n: string }>(
      tem,
      `select count(*) as n from agui_interrupt i join approval a on a.id = i.approval_id where i.run_row_id = ? and a.id <> ? and a.status = 'PENDING'`,
      [link.runRowId, approval.id],
    );
    if (Number(open?.n ?? 0) === 0) await queueResume(tem, link.runRowId, config.deliveryMaxAttempts);
    return events;
  },
};

/** TASKBAY_DELIVERY_MAX_ATTEMPTS for resumes queued by expiry (the sweeper has no config to hand over); app.ts sets it. */
const expiryConfig = { deliveryMaxAttempts: 8 };
export function configureAgUiExpiry(config: Pick<Config, 'deliveryMaxAttempts'>): void {
  expiryConfig.deliveryMaxAttempts = config.deliveryMaxAttempts;
}

/**
 * A request of an interrupt that expires is answered too (cancelled): when it was the run's last
 * open one, the run's resume goes now. (If the interrupt's own expiresAt passed, the resume job
 * refuses to send and says so: AG-UI allows no resume after it.)
 */
export const answerExpiredInterrupts: ExpiryHook = async (tem, expired) => {
  const ids = expired.filter((a) => a.key?.startsWith(AGUI_KEY_PREFIX)).map((a) => a.id);
  if (!ids.length) return;
  const runs = await sql<{ run_row_id: string }>(
    tem,
    `select distinct run_row_id from agui_interrupt where approval_id in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  for (const { run_row_id } of runs) {
    await tem.findOneOrFail(AgUiRun, { id: run_row_id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const [open] = await sql<{ n: string }>(
      tem,
      `select count(*) as n from agui_interrupt i join approval a on a.id = i.approval_id where i.run_row_id = ? and a.status = 'PENDING'`,
      [run_row_id],
    );
    const [run] = await sql<{ resume_status: string | null }>(tem, 'select resume_status from agui_run where id = ?', [run_row_id]);
    if (Number(open?.n ?? 0) === 0 && !run?.resume_status) await queueResume(tem, run_row_id, expiryConfig.deliveryMaxAttempts);
  }
};
