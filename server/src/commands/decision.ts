import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import { appendEvents, stream, type Actor, type AuditEventInput } from '../audit/module.js';
import { RecordedRefusal, type DecisionHook } from '../decisions/module.js';
import { sql } from '../db/sql.js';
import type { DecisionOutcome } from '../decisions/entities.js';
import { DomainError } from '../errors.js';
import { canonicalSha256 } from '../lib/hashing.js';
import { commandEvent } from './command-event.js';
import { ApprovalGrant, CommandApproval, type CommandApprovalRow } from './entities.js';
import { approveLabel } from './label.js';
import { GRANT_TTL_SECONDS, isRunCommand, payloadFingerprint, runCommandDigest, type RunCommandAction } from './rules.js';

// The decision path of command approvals (seed 002): the ordinary decision (decisions/service.ts)
// calls this hook for source COMMAND; commands/service.ts registers it. Approving verifies the
// sealed payload and forms the single-use grant (SHOWN, APPROVED); rejecting closes the request.

/** A command cannot be edited by the reviewer or sent back for changes: approve or reject it. */
export function assertCommandOutcome(outcome: string): void {
  if (outcome === 'EDIT_AND_APPROVE' || outcome === 'REQUEST_CHANGES') {
    throw new DomainError('INVALID_ACTION', 'a command approval can only be approved, rejected or delegated; the command itself is never edited', {
      reason: 'COMMAND_APPROVAL',
    });
  }
}

/**
 * The refusal of a grant activation. Thrown inside the decision's transaction (which rolls
 * back, so no grant and no decision form); `recordRefusal` then leaves the event in its own
 * transaction.
 */
export class ActivationRefused extends RecordedRefusal {
  constructor(
    private readonly command: CommandApprovalRow,
    private readonly approval: Pick<ApprovalRow, 'agentId'>,
    private readonly actor: Actor,
    private readonly detail: Record<string, unknown>,
  ) {
    super('INVALID_ACTION', `the sealed payload of ${command.approvalId} does not match its fingerprint; no grant was formed`, {
      reason: 'FINGERPRINT_MISMATCH',
    });
  }

  async recordRefusal(em: EntityManager): Promise<void> {
    await em.fork().transactional(async (tem) => {
      await appendEvents(tem, [
        commandEvent(this.command, this.approval, 'command.activation_refused', this.actor, { reason: 'FINGERPRINT_MISMATCH', ...this.detail }),
      ]);
    });
  }
}

/**
 * Seed 002 "The payload's integrity is enforced at grant activation": the stored payload must
 * hash to the fingerprint stored with it and to the one sealed into the REQUESTED event, and the
 * action the reviewer approved (digest) must be that payload.
 */
async function verifyFingerprint(tem: EntityManager, approval: ApprovalRow, command: CommandApprovalRow): Promise<Record<string, unknown> | null> {
  const [requested] = await sql<{ data: any }>(tem, `select data from audit_event where stream = ? and type = 'REQUESTED'`, [stream.approval(command.id)]);
  const sealed = typeof requested?.data === 'string' ? JSON.parse(requested.data) : requested?.data;
  const actual = payloadFingerprint(command.payload);
  const action = approval.action as unknown;
  const expectedAction: RunCommandAction = { kind: 'run_command', agent_id: command.agentId, commands: command.commands, payload: command.payload };
  const problems: string[] = [];
  if (actual !== command.fingerprint) problems.push('payload');
  if (!sealed || sealed.fingerprint !== command.fingerprint) problems.push('requested-event');
  if (!isRunCommand(action) || canonicalSha256(action) !== canonicalSha256(expectedAction)) problems.push('action');
  if (runCommandDigest(expectedAction) !== approval.digest) problems.push('digest');
  if (sealed && canonicalSha256(sealed.commands ?? null) !== canonicalSha256(command.commands)) problems.push('commands');
  return problems.length ? { expected: sealed?.fingerprint ?? command.fingerprint, actual, mismatched: problems } : null;
}

/** Inside the decision's transaction, after the usual checks: form the grant or close the request. */
async function onCommandDecision(
  tem: EntityManager,
  approval: ApprovalRow,
  outcome: DecisionOutcome,
  actor: Actor,
  decisionId: string,
): Promise<AuditEventInput[]> {
  assertCommandOutcome(outcome);
  if (outcome === 'DELEGATE') return [];
  const command = await tem.findOne(CommandApproval, { id: approval.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!command) throw new DomainError('INVALID_ACTION', 'this command approval has no sealed payload', { reason: 'FINGERPRINT_MISMATCH' });
  if (command.status !== 'pending') throw new DomainError('NOT_PENDING', `this command approval is ${command.status}`, { status: command.status });
  const now = new Date();
  if (outcome === 'REJECT') {
    command.status = 'rejected';
    await tem.flush();
    return [commandEvent(command, approval, 'REJECTED', actor, { decisionId })];
  }
  // APPROVE: the integrity boundary is activation.
  const mismatch = await verifyFingerprint(tem, approval, command);
  if (mismatch) throw new ActivationRefused(command, { agentId: approval.agentId }, actor, { decisionId, ...mismatch });
  const grant = tem.create(ApprovalGrant, {
    id: randomUUID(),
    commandApprovalId: command.id,
    tenantId: command.tenantId,
    status: 'PENDING',
    fingerprint: command.fingerprint,
    expiresAt: new Date(now.getTime() + GRANT_TTL_SECONDS * 1000),
    consumedAt: null,
    closedAt: null,
    createdAt: now,
  });
  command.status = 'approved';
  await tem.flush();
  // Seed 002: "SHOWN precedes APPROVED; the activation path writes them together."
  return [
    commandEvent(command, approval, 'SHOWN', actor, { decisionId, label: approveLabel(command.approvalId), fingerprint: command.fingerprint }),
    commandEvent(command, approval, 'APPROVED', actor, {
      decisionId,
      grantId: grant.id,
      fingerprint: command.fingerprint,
      grantExpiresAt: grant.expiresAt.toISOString(),
    }),
  ];
}

/** Registered for source COMMAND by commands/service.ts. */
export const commandDecisionHook: DecisionHook = { checkOutcome: assertCommandOutcome, onDecision: onCommandDecision };
