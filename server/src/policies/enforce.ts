import type { EntityManager } from '@mikro-orm/postgresql';
import { badInput, DomainError } from '../errors.js';
import type { DecisionOutcome } from '../lib/outcomes.js';
import { Task } from '../tasks/entities.js';
import { effectiveOutcomes, type PolicySnapshot } from './snapshot.js';

// What a request's policy refuses in a decision, read from the snapshot frozen on the request
// (never from the policy tables: a later edit does not reach an open request). Called by the
// decision path (decisions/service.ts decide) with the request locked.

const WORDS: Record<DecisionOutcome, string> = {
  APPROVE: 'approve',
  EDIT_AND_APPROVE: 'edit then approve',
  REJECT: 'reject',
  REQUEST_CHANGES: 'request changes',
  DELEGATE: 'delegate',
};

export const policyLabel = (p: PolicySnapshot) =>
  p.policyId
    ? `the policy ${JSON.stringify(p.name)} (version ${p.version})`
    : p.failClosed
      ? "the held rules (a condition failed: see the policy's conditionError)"
      : 'the default policy';

/** OUTCOME_NOT_ALLOWED when the policy does not offer the outcome. */
export function checkOutcomeAllowed(policy: PolicySnapshot, outcome: DecisionOutcome): void {
  const allowed = effectiveOutcomes(policy);
  if (allowed.includes(outcome)) return;
  const why =
    outcome === 'DELEGATE' && policy.allowedOutcomes.includes('DELEGATE')
      ? `this request needs ${policy.quorum.approvals} approvals from distinct reviewers and cannot be delegated to one person`
      : `${policyLabel(policy)} does not allow "${WORDS[outcome]}" on this request`;
  throw new DomainError('OUTCOME_NOT_ALLOWED', `${why}; it allows: ${allowed.map((o) => WORDS[o]).join(', ')}`, { outcome, allowedOutcomes: allowed });
}

/** What the task's starter is told under excludeTaskStarter: they do not decide (enforcePolicy; the console asks before the ritual). */
export const starterExcludedMessage = (policy: PolicySnapshot) =>
  `you started this request's task, and ${policyLabel(policy)} excludes the task's starter from deciding`;

/**
 * The policy's rules for one decision: the outcome must be allowed, and with excludeTaskStarter
 * the person who started the request's task neither decides nor receives it by delegation (like
 * a requester: seed 000's separation of duties, extended to the task's starter).
 */
export async function enforcePolicy(
  tem: EntityManager,
  approval: { policy: PolicySnapshot; taskId?: string | null },
  outcome: DecisionOutcome,
  reviewerId: string,
  delegateToId?: string | null,
): Promise<void> {
  const policy = approval.policy;
  if (policy.excludeTaskStarter && approval.taskId) {
    const task = await tem.findOne(Task, { id: approval.taskId });
    const starter = task?.createdById ?? null;
    if (starter && starter === reviewerId) throw new DomainError('SEPARATION_OF_DUTIES', starterExcludedMessage(policy));
    if (starter && outcome === 'DELEGATE' && delegateToId && delegateToId === starter) {
      throw badInput(`${policyLabel(policy)} excludes the task's starter: the request cannot be delegated to them`);
    }
  }
  checkOutcomeAllowed(policy, outcome);
}
