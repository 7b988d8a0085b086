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
   * Present only when a condition could not be evaluated on this request (policies/choose.ts):
   * what failed and why these rules apply, in words. Recorded on the request and in its opening
   * event (with failClosed).
   */
  conditionError?: string;
  /** Present with conditionError: the same, as data. */
  failClosed?: FailClosed;
}

/** A policy, as a request's record names it. */
export interface PolicyRef {
  /** null: the built-in default. */
  policyId: string | null;
  name: string;
  version: number;
}

/**
 * Why a request's rules are what they are when a condition failed (docs/POLICIES.md "When a
 * condition fails"): every policy the request could have had, and the strictest of them.
 */
export interface FailClosed {
  /** The policies whose condition could not be evaluated on this request, in order, each with the error. */
  failed: (PolicyRef & { error: string })[];
  /** Every policy the request could have had: the failed ones, and the first that matched after them (or the default). */
  candidates: PolicyRef[];
  /**
   * strictest: one candidate is at least as strict as every other, and its rules apply as they
   * are (the snapshot is that policy). held: none is; the request cannot be approved, only
   * rejected or sent back (the snapshot is HELD_POLICY_NAME).
   */
  applied: 'strictest' | 'held';
}

/** The name of the rules a request gets when no single strictest policy exists (policies/strictest.ts). */
export const HELD_POLICY_NAME = 'held: no single strictest policy';

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
