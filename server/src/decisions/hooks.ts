import type { EntityManager } from '@mikro-orm/postgresql';
import { AGUI_KEY_PREFIX, type ApprovalRow, type ApprovalSource } from '../approvals/entities.js';
import type { Actor, AuditEventInput } from '../audit/module.js';
import type { Config } from '../config.js';
import { DomainError } from '../errors.js';
import type { DecisionOutcome } from './entities.js';

// What a kind of approval (its source) adds to the one decision path. A module built on the
// approval loop registers its hook (command approvals: commands/service.ts), so the decision
// path knows none of them.

export interface DecisionHook {
  /**
   * True when this kind carries every final decision to the agent itself (AG-UI interrupts: a
   * reject is a cancelled resume entry too), so the decision path queues no delivery of its own.
   */
  readonly deliversDecisions?: boolean;
  /** Before anything changes: refuses an outcome this kind of approval cannot take. */
  checkOutcome(outcome: DecisionOutcome): void;
  /**
   * In the decision's transaction, once the usual checks passed and the approval's new status
   * is set: does this kind's own part and returns its events, written before the decision's.
   */
  onDecision(
    tem: EntityManager,
    approval: ApprovalRow,
    outcome: DecisionOutcome,
    actor: Actor,
    decisionId: string,
    config: Pick<Config, 'deliveryMaxAttempts'>,
  ): Promise<AuditEventInput[]>;
}

/**
 * A hook's refusal that leaves a record: thrown inside the decision's transaction (which rolls
 * back, so nothing of the decision stays), then `recordRefusal` writes in a transaction of its own.
 */
export abstract class RecordedRefusal extends DomainError {
  abstract recordRefusal(em: EntityManager): Promise<void>;
}

/** A kind of approval: its source, or AG_UI for the requests of AG-UI interrupts (an agent's requests too). */
export type ApprovalKind = ApprovalSource | 'AG_UI';

const hooks = new Map<ApprovalKind, DecisionHook>();

export function approvalKind(approval: Pick<ApprovalRow, 'source' | 'key'>): ApprovalKind {
  return approval.source === 'AGENT' && approval.key?.startsWith(AGUI_KEY_PREFIX) ? 'AG_UI' : approval.source;
}

export function registerDecisionHook(source: ApprovalKind, hook: DecisionHook): void {
  const known = hooks.get(source);
  if (known && known !== hook) throw new Error(`a decision hook for ${source} approvals is already registered`);
  hooks.set(source, hook);
}

export function decisionHookFor(approval: Pick<ApprovalRow, 'source' | 'key'>): DecisionHook | null {
  return hooks.get(approvalKind(approval)) ?? null;
}
