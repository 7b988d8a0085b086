import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import {
  checkDecisionRecord,
  decisionEventsOf,
  decisionEventsSubquery,
  integrityAlert,
  refusalMessage,
  trustedAuditKey,
  type DecisionRecordVerdict,
  appendEvents,
} from '../audit/module.js';
import { requireAdmin, type Access } from '../access.js';
import type { Config } from '../config.js';
import { addJob, sql } from '../db/sql.js';
import { storable } from '../db/storable.js';
import { DomainError } from '../errors.js';
import { COMMAND_LIMITS } from '../limits.js';
import { ApprovalGrant, CommandApproval, type CommandApprovalRow } from './entities.js';
import { commandEvent } from './command-event.js';
import { OUTCOME_NEVER_REPORTED, outcomeDueAt, RECONCILE_OUTCOME_JOB, terminalEvent } from './reconcile.js';
import type { DecisionRow } from '../decisions/entities.js';
import { parseAgentId, runCommandDigest, type RunCommandAction } from './rules.js';
import { getCommandView, loadView, type CommandView } from './service.js';

// The hook after the decision (seed 002): consume the single-use grant, report the outcome, revoke.

function requireRequester(access: Access, command: CommandApprovalRow) {
  if (command.requestedById !== access.viewer.userId) {
    throw new DomainError('FORBIDDEN', 'only the requester of a command approval (its hook) consumes its grant and reports its outcome');
  }
}

/**
 * Just before running: PENDING -> CONSUMED, atomically; a second consume fails. With the
 * session's agent_id, a grant of another session (agent_id) of the same person is refused before
 * anything changes (seed 002: approvals are single-session).
 */
export async function consumeGrant(
  em: EntityManager,
  access: Access,
  config: Pick<Config, 'commandOutcomeTimeoutSeconds'>,
  id: string,
  input: { agent_id?: unknown } = {},
): Promise<CommandView> {
  const { command, approval } = await getCommandView(em, access, id);
  requireRequester(access, command);
  if (input.agent_id != null) {
    const session = parseAgentId(input.agent_id);
    if (!session.ok) throw new DomainError('BAD_USER_INPUT', session.error);
    if (session.value !== command.agentId) {
      throw new DomainError(
        'FORBIDDEN',
        `the grant of ${command.approvalId} belongs to another session (agent_id ${command.agentId}); approvals are single-session`,
        {
          reason: 'OTHER_SESSION',
        },
      );
    }
  }
  const ended = await em.transactional(async (tem): Promise<'expired' | 'consumed' | { refused: string }> => {
    const grant = await tem.findOne(ApprovalGrant, { commandApprovalId: command.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!grant) {
      throw new DomainError('NOT_PENDING', `${command.approvalId} has no grant (the approval is ${command.status})`, {
        reason: 'NO_GRANT',
        status: command.status,
      });
    }
    if (grant.status === 'PENDING' && grant.expiresAt.getTime() <= Date.now()) {
      grant.status = 'EXPIRED';
      grant.closedAt = new Date();
      await tem.flush();
      await appendEvents(tem, [commandEvent(command, approval, 'command.grant_expired', { type: 'system', id: null }, { grantId: grant.id })]);
      return 'expired';
    }
    if (grant.status === 'PENDING') {
      // The grant is handed out only on its approval's signed record: the command is what that decision approved.
      const record = await approvalRecordOf(tem, approval, command);
      if (!record.verdict.ok) {
        await appendEvents(tem, [
          integrityAlert('command_grant', record.verdict, {
            tenantId: approval.tenantId,
            approvalId: approval.id,
            agentId: approval.agentId,
            taskId: approval.taskId,
            decisionId: record.decisionId,
          }),
        ]);
        return { refused: refusalMessage(record.verdict) };
      }
    }
    const rows = await sql<{ id: string; consumed_at: Date }>(
      tem,
      `update approval_grant set status = 'CONSUMED', consumed_at = now(), closed_at = now() where id = ? and status = 'PENDING' returning id, consumed_at`,
      [grant.id],
    );
    if (!rows.length) {
      throw new DomainError('NOT_PENDING', `the grant of ${command.approvalId} is ${grant.status}; a grant is used once`, {
        reason: `GRANT_${grant.status}`,
        status: grant.status,
      });
    }
    // The reconciler of this grant, queued with the consume (rolled back with it): without an
    // outcome by then, the grant becomes FAILED "outcome never reported".
    await addJob(
      tem,
      RECONCILE_OUTCOME_JOB,
      { commandApprovalId: command.id },
      {
        runAt: outcomeDueAt(new Date(rows[0]!.consumed_at), config.commandOutcomeTimeoutSeconds),
        jobKey: `reconcile-outcome:${command.id}`,
        maxAttempts: 10,
      },
    );
    await appendEvents(tem, [commandEvent(command, approval, 'command.grant_consumed', { type: 'user', id: access.viewer.userId }, { grantId: grant.id })]);
    return 'consumed';
  });
  if (ended === 'expired') throw new DomainError('EXPIRED', `the grant of ${command.approvalId} expired before it was used`, { reason: 'GRANT_EXPIRED' });
  if (typeof ended === 'object')
    throw new DomainError('FORBIDDEN', `the grant of ${command.approvalId} is not used: ${ended.refused}`, { reason: 'UNSIGNED_DECISION' });
  return loadView(em.fork(), command);
}

/**
 * The command approval's final approval and its signed record (audit/decision-record.ts), in one
 * statement: the decision the grant stands on, and the command handed out hashing to its digest.
 */
async function approvalRecordOf(
  tem: EntityManager,
  approval: ApprovalRow,
  command: CommandApprovalRow,
): Promise<{ decisionId: string | null; verdict: DecisionRecordVerdict }> {
  const [d] = await sql<DecisionRow & { events: unknown }>(
    tem,
    `select d.id, d.approval_id as "approvalId", d.outcome, d.revision, d.digest, d.reviewer_id as "reviewerId", d.vote,
            ${decisionEventsSubquery('d.approval_id', 'd.id')} as events
       from decision d where d.approval_id = ? and not d.vote and d.outcome <> 'DELEGATE'`,
    [approval.id],
  );
  if (!d) return { decisionId: null, verdict: { ok: false, problem: 'no_signed_event', message: `request ${approval.id} has no final decision` } };
  const action: RunCommandAction = { kind: 'run_command', agent_id: command.agentId, commands: command.commands, payload: command.payload };
  const verdict = checkDecisionRecord(trustedAuditKey(tem), {
    approval,
    decision: d,
    events: decisionEventsOf(d.events),
    acting: { action, revision: approval.revision, digest: approval.digest, digestOf: runCommandDigest },
  });
  return { decisionId: d.id, verdict };
}

/** A stored detail: storable text, at most COMMAND_LIMITS.outcomeDetailMaxChars, keeping the end (a stderr tail ends with the error). */
function outcomeDetail(text: string): string {
  const chars = [...storable(text)];
  const max = COMMAND_LIMITS.outcomeDetailMaxChars;
  return chars.length <= max ? chars.join('') : '…' + chars.slice(chars.length - max + 1).join('');
}

/** After running: EXECUTED (exit 0) or FAILED (with the detail). Only for a consumed grant, once. */
export async function reportOutcome(
  em: EntityManager,
  access: Access,
  id: string,
  input: { exit_code: unknown; detail?: unknown },
): Promise<{ type: 'EXECUTED' | 'FAILED'; view: CommandView }> {
  const exit = input.exit_code;
  if (typeof exit !== 'number' || !Number.isInteger(exit) || exit < -1 || exit > 255) {
    throw new DomainError('BAD_USER_INPUT', 'exit_code must be an integer -1..255 (-1: killed by a signal)');
  }
  if (input.detail != null && typeof input.detail !== 'string') throw new DomainError('BAD_USER_INPUT', 'detail must be a string');
  const detail = typeof input.detail === 'string' ? outcomeDetail(input.detail) : null;
  const { command, approval } = await getCommandView(em, access, id);
  requireRequester(access, command);
  const type = exit === 0 ? 'EXECUTED' : 'FAILED';
  await em.transactional(async (tem) => {
    const grant = await tem.findOne(ApprovalGrant, { commandApprovalId: command.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    // Seed 002: "Do not assume an EXECUTED event exists for an approval whose command never ran."
    if (!grant || grant.status !== 'CONSUMED') {
      throw new DomainError('INVALID_ACTION', `${command.approvalId} has no consumed grant: the command never ran, so no outcome is recorded`, {
        reason: 'NOT_CONSUMED',
      });
    }
    // Double-record guard (seed 002 `_t3_terminal_event_exists`), under the grant's row lock,
    // which the reconciler takes too.
    const done = await terminalEvent(tem, command.id);
    if (done) {
      throw new DomainError(
        'NOT_PENDING',
        `the outcome of ${command.approvalId} is already recorded: ${done.type}${done.reconciled ? ` (${OUTCOME_NEVER_REPORTED})` : ''}`,
        {
          reason: 'OUTCOME_RECORDED',
          outcome: done.type,
          reconciled: done.reconciled,
        },
      );
    }
    await appendEvents(tem, [
      commandEvent(
        command,
        approval,
        type,
        { type: 'user', id: access.viewer.userId },
        {
          grantId: grant.id,
          exit_code: exit,
          commands: command.commands,
          ...(type === 'FAILED' ? { detail: detail ?? `exited with status ${exit}` } : {}),
        },
      ),
    ]);
  });
  return { type, view: await loadView(em.fork(), command) };
}

/** An admin cancels an unused grant: grant REVOKED, approval revoked, event REVOKED. */
export async function revokeGrant(em: EntityManager, access: Access, id: string): Promise<CommandView> {
  requireAdmin(access, 'revokes a grant');
  const { command, approval } = await getCommandView(em, access, id);
  await em.transactional(async (tem) => {
    const c = await tem.findOneOrFail(CommandApproval, { id: command.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const grant = await tem.findOne(ApprovalGrant, { commandApprovalId: command.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!grant || grant.status !== 'PENDING') {
      throw new DomainError('NOT_PENDING', `${command.approvalId} has no unused grant to revoke (${grant?.status ?? c.status})`, {
        reason: 'NO_PENDING_GRANT',
        status: grant?.status ?? c.status,
      });
    }
    const now = new Date();
    grant.status = 'REVOKED';
    grant.closedAt = now;
    c.status = 'revoked';
    await tem.flush();
    await appendEvents(tem, [commandEvent(c, approval, 'REVOKED', { type: 'user', id: access.viewer.userId }, { grantId: grant.id })]);
  });
  return loadView(em.fork(), command);
}
