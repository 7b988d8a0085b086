import type { DecisionOutcome } from '../lib/outcomes.js';

// What a policy asks of one request, frozen onto the request when it opens (approval.policy):
// later edits to the policy never change an open request. Every later step reads the rules
// from here, never from the policy tables: the decision path (allowed outcomes, separation of
// duties, quorum) and the escalation sweeper.

export type PolicyRisk = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';

export interface QuorumRule {
  /** Distinct reviewers whose APPROVE on the same revision and digest is needed; 1 is a single approval. */
  approvals: number;
  /** When not empty, only members of these reviewer groups count toward the quorum (any one of them). */
  fromGroupIds: string[];
  /** One REJECT closes the request as REJECTED (true, the default); false records it and waits. */
  rejectionRejects: boolean;
}

export interface EscalationRule {
  /** Seconds after opening without a final decision. */
  afterSeconds: number;
  /** Who the request is assigned to when it escalates (a group, a person, or neither). */
  toGroupId: string | null;
  toUserId: string | null;
  /** The risk the request is raised to; null leaves it. Never lowered. */
  raiseRiskTo: PolicyRisk | null;
}

export interface PolicySnapshot {
  /** null: the built-in default policy (seed 000: all outcomes, separation of duties, no assignee). */
  policyId: string | null;
  name: string;
  /** The policy version that matched; 0 for the built-in default. */
  version: number;
  allowedOutcomes: DecisionOutcome[];
  /** Separation of duties also refuses the person who started the request's task (self-review). */
  excludeTaskStarter: boolean;
  quorum: QuorumRule;
  escalation: EscalationRule | null;
  /**
   * Present only when this policy applied because its condition failed to evaluate (fail
   * closed, policies/choose.ts): the evaluator's message. Recorded on the request and in its
   * opening event.
   */
  conditionError?: string;
}

export const DEFAULT_POLICY: PolicySnapshot = Object.freeze({
  policyId: null,
  name: 'default',
  version: 0,
  allowedOutcomes: ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE'],
  excludeTaskStarter: false,
  quorum: Object.freeze({ approvals: 1, fromGroupIds: [], rejectionRejects: true }),
  escalation: null,
}) as PolicySnapshot;

/**
 * The outcomes a reviewer may choose on a request under this policy. A quorum of two or more is
 * never delegated: a delegation assigns the request to one person, and only that person (and
 * admins) could then decide, so the quorum could not be met by reviewers (docs/POLICIES.md,
 * "Quorum, delegation and escalation"). Policies saved since leave DELEGATE out themselves
 * (rules.ts); this also holds for a snapshot frozen before.
 */
export function effectiveOutcomes(policy: Pick<PolicySnapshot, 'allowedOutcomes' | 'quorum'>): DecisionOutcome[] {
  return (policy.quorum?.approvals ?? 1) > 1 ? policy.allowedOutcomes.filter((o) => o !== 'DELEGATE') : policy.allowedOutcomes;
}
