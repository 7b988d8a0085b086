import { badInput } from '../errors.js';
import { codePointLength, POLICY_LIMITS } from '../limits.js';
import { DECISION_OUTCOMES, type DecisionOutcome } from '../lib/outcomes.js';
import type { EscalationRule, PolicyRisk, PolicySnapshot, QuorumRule } from './snapshot.js';

// What a policy version says (everything of the snapshot but the policy's identity), and the
// checks an admin's input passes before anything is written (docs/POLICIES.md "Rules").
// Checks that need the database (groups and people of the tenant) are in policies/service.ts.

export type PolicyRules = Omit<PolicySnapshot, 'policyId' | 'name' | 'version'>;

const RISK_ORDER: PolicyRisk[] = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

export interface RulesInput {
  allowedOutcomes?: readonly DecisionOutcome[] | null;
  excludeTaskStarter?: boolean | null;
  quorum?: { approvals?: number | null; fromGroupIds?: readonly string[] | null; rejectionRejects?: boolean | null } | null;
  escalation?: {
    afterSeconds: number;
    toGroupId?: string | null;
    toUserId?: string | null;
    raiseRiskTo?: PolicyRisk | null;
  } | null;
}

export function checkedName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badInput('a policy needs a name');
  if (codePointLength(name, POLICY_LIMITS.nameMax) > POLICY_LIMITS.nameMax) throw badInput(`name is longer than ${POLICY_LIMITS.nameMax} characters`);
  if (name.toLowerCase() === 'default') throw badInput('"default" is the name of the built-in policy');
  return name;
}

/**
 * The rules from an admin's input, with defaults filled in (the built-in policy's, seed 000:
 * every outcome, a single approval, one rejection rejects, no escalation). Pure checks only.
 */
export function checkedRules(input: RulesInput, base?: PolicyRules): PolicyRules {
  const outcomes = input.allowedOutcomes ?? base?.allowedOutcomes ?? [...DECISION_OUTCOMES];
  const allowed = DECISION_OUTCOMES.filter((o) => outcomes.includes(o));
  if (outcomes.some((o) => !(DECISION_OUTCOMES as readonly string[]).includes(o))) throw badInput('allowedOutcomes names an unknown outcome');
  if (!allowed.includes('REJECT')) throw badInput('allowedOutcomes must include REJECT: a reviewer can always say no');
  if (!allowed.includes('APPROVE') && !allowed.includes('EDIT_AND_APPROVE')) {
    throw badInput('allowedOutcomes must include APPROVE or EDIT_AND_APPROVE: a request must be able to be approved');
  }

  const q = input.quorum;
  const quorum: QuorumRule = {
    approvals: q?.approvals ?? base?.quorum.approvals ?? 1,
    fromGroupIds: [...new Set(q?.fromGroupIds ?? base?.quorum.fromGroupIds ?? [])],
    rejectionRejects: q?.rejectionRejects ?? base?.quorum.rejectionRejects ?? true,
  };
  if (!Number.isInteger(quorum.approvals) || quorum.approvals < 1 || quorum.approvals > POLICY_LIMITS.quorumMax) {
    throw badInput(`quorum.approvals must be a whole number from 1 to ${POLICY_LIMITS.quorumMax}`);
  }
  if (quorum.fromGroupIds.length > POLICY_LIMITS.groupsPerQuorumMax) {
    throw badInput(`quorum.fromGroupIds names at most ${POLICY_LIMITS.groupsPerQuorumMax} groups`);
  }

  let escalation: EscalationRule | null = base?.escalation ?? null;
  if (input.escalation !== undefined) {
    const e = input.escalation;
    escalation = e ? { afterSeconds: e.afterSeconds, toGroupId: e.toGroupId ?? null, toUserId: e.toUserId ?? null, raiseRiskTo: e.raiseRiskTo ?? null } : null;
  }
  if (escalation) {
    const { afterSeconds, toGroupId, toUserId, raiseRiskTo } = escalation;
    if (!Number.isInteger(afterSeconds) || afterSeconds < 1 || afterSeconds > POLICY_LIMITS.escalationMaxSeconds) {
      throw badInput(`escalation.afterSeconds must be a whole number of seconds from 1 to ${POLICY_LIMITS.escalationMaxSeconds}`);
    }
    if (toGroupId && toUserId) throw badInput('escalation assigns to a group or to a person, not both');
    if (!toGroupId && !toUserId && !raiseRiskTo) throw badInput('escalation must assign the request (toGroupId or toUserId) or raise its risk (raiseRiskTo)');
    if (raiseRiskTo && !RISK_ORDER.includes(raiseRiskTo)) throw badInput('escalation.raiseRiskTo is not a risk');
    // An assignment to one person lets only that person (and admins) decide: it could never
    // gather a quorum of reviewers (docs/POLICIES.md "Quorum, delegation and escalation").
    if (toUserId && quorum.approvals > 1) {
      throw badInput(`escalation.toUserId: a request that needs ${quorum.approvals} approvals cannot escalate to one person; escalate to a group (toGroupId)`);
    }
  }

  return {
    // A quorum of two or more is never delegated, for the same reason (snapshot.ts effectiveOutcomes).
    allowedOutcomes: quorum.approvals > 1 ? allowed.filter((o) => o !== 'DELEGATE') : allowed,
    excludeTaskStarter: input.excludeTaskStarter ?? base?.excludeTaskStarter ?? false,
    quorum,
    escalation,
  };
}
