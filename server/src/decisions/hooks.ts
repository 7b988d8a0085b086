import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow, ApprovalSource } from '../approvals/entities.js';
import type { Actor, AuditEventInput } from '../audit/log.js';
import { DomainError } from '../errors.js';
import type { DecisionOutcome } from './entities.js';

// What a kind of approval (its source) adds to the one decision path. A module built on the
// approval loop registers its hook (command approvals: commands/service.ts), so the decision
// path knows none of them.

export interface DecisionHook {
  /** Before anything changes: refuses an outcome this kind of approval cannot take. */
  checkOutcome(outcome: DecisionOutcome): void;
  /**
   * In the decision's transaction, once the usual checks passed and the approval's new status
   * is set: does this kind's own part and returns its events, written before the decision's.
   */
  onDecision(tem: EntityManager, approval: ApprovalRow, outcome: DecisionOutcome, actor: Actor, decisionId: string): Promise<AuditEventInput[]>;
}

/**
 * A hook's refusal that leaves a record: thrown inside the decision's transaction (which rolls
 * back, so nothing of the decision stays), then `recordRefusal` writes in a transaction of its own.
 */
export abstract class RecordedRefusal extends DomainError {
  abstract recordRefusal(em: EntityManager): Promise<void>;
}

const hooks = new Map<ApprovalSource, DecisionHook>();

export function registerDecisionHook(source: ApprovalSource, hook: DecisionHook): void {
  const known = hooks.get(source);
  if (known && known !== hook) throw new Error(`a decision hook for ${source} approvals is already registered`);
  hooks.set(source, hook);
}

export function decisionHookFor(source: ApprovalSource): DecisionHook | null {
  return hooks.get(source) ?? null;
}
