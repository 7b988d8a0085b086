import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApprovalRequest } from '../approvals/entities.js';
import { appendEvents, stream } from '../audit/module.js';
import { sql } from '../db/sql.js';
import type { JobDefinition } from '../jobs/job.js';
import { commandEvent } from './command-event.js';
import { ApprovalGrant, CommandApproval } from './entities.js';

// Seed 002's `_reconcile_dangling_t3_on_stop`: a grant consumed (commands/service.ts consumeGrant)
// whose outcome never arrives becomes FAILED "outcome never reported", by a job queued with the
// consume.

export const RECONCILE_OUTCOME_JOB = 'reconcile_command_outcome';
export const OUTCOME_NEVER_REPORTED = 'outcome never reported';

/** When a grant consumed at `consumedAt` without an outcome is reconciled. */
export function outcomeDueAt(consumedAt: Date, timeoutSeconds: number): Date {
  return new Date(consumedAt.getTime() + timeoutSeconds * 1000);
}

/** The approval's terminal event (EXECUTED or FAILED), if any: the one double-record guard. */
export async function terminalEvent(tem: EntityManager, commandApprovalId: string): Promise<{ type: 'EXECUTED' | 'FAILED'; reconciled: boolean } | null> {
  const [row] = await sql<{ type: 'EXECUTED' | 'FAILED'; data: any }>(
    tem,
    `select type, data from audit_event where stream = ? and type in ('EXECUTED', 'FAILED') order by seq limit 1`,
    [stream.approval(commandApprovalId)],
  );
  if (!row) return null;
  const data = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
  return { type: row.type, reconciled: data?.reconciled === true };
}

/**
 * The worker's reconciler: a grant consumed at least the timeout ago with no terminal event gets
 * FAILED "outcome never reported", through the one writer. The grant's row lock orders it with
 * reportOutcome, so exactly one of the two writes the terminal event. Returns what it found; a
 * grant not yet due returns its due time (the queue's clock and ours may differ).
 */
export async function reconcileOutcome(
  em: EntityManager,
  commandApprovalId: string,
  timeoutSeconds: number,
  now = new Date(),
): Promise<{ result: 'FAILED' | 'OUTCOME_RECORDED' | 'NOT_CONSUMED' } | { result: 'NOT_DUE'; dueAt: Date }> {
  return em.transactional(async (tem) => {
    const grant = await tem.findOne(ApprovalGrant, { commandApprovalId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!grant || grant.status !== 'CONSUMED' || !grant.consumedAt) return { result: 'NOT_CONSUMED' as const };
    if (await terminalEvent(tem, commandApprovalId)) return { result: 'OUTCOME_RECORDED' as const };
    const dueAt = outcomeDueAt(grant.consumedAt, timeoutSeconds);
    if (dueAt.getTime() > now.getTime()) return { result: 'NOT_DUE' as const, dueAt };
    const command = await tem.findOneOrFail(CommandApproval, { id: commandApprovalId }, { refresh: true });
    const approval = await tem.findOneOrFail(ApprovalRequest, { id: commandApprovalId }, { refresh: true });
    await appendEvents(tem, [
      commandEvent(
        command,
        approval,
        'FAILED',
        { type: 'system', id: null },
        {
          grantId: grant.id,
          exit_code: null,
          commands: command.commands,
          detail: OUTCOME_NEVER_REPORTED,
          reconciled: true,
          consumedAt: grant.consumedAt.toISOString(),
          timeoutSeconds,
        },
      ),
    ]);
    return { result: 'FAILED' as const };
  });
}

export const reconcileOutcomeJob: JobDefinition = {
  name: RECONCILE_OUTCOME_JOB,
  async run(payload, helpers, { orm, deps }) {
    const { commandApprovalId } = payload as { commandApprovalId: string };
    const r = await reconcileOutcome(orm.em.fork(), commandApprovalId, deps.config.commandOutcomeTimeoutSeconds);
    // Came early by our clock: again at the due time, as the expiry job does.
    if (r.result === 'NOT_DUE') {
      await helpers.addJob(
        RECONCILE_OUTCOME_JOB,
        { commandApprovalId },
        { runAt: new Date(r.dueAt.getTime() + 1000), jobKey: `reconcile-outcome:${commandApprovalId}` },
      );
    }
  },
};
