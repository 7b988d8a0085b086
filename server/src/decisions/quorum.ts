import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import {
  checkDecisionRecord,
  integrityAlert,
  loadDecisionEvents,
  trustedAuditKey,
  type DecisionRecordVerdict,
  type AuditEventInput,
  type AuditEventRow,
} from '../audit/module.js';
import { groupIdsOf } from '../groups/module.js';
import { DEFAULT_POLICY, type QuorumRule } from '../policies/module.js';
import { DomainError } from '../errors.js';
import { ReviewerGroup, ReviewerGroupMember } from '../groups/entities.js';
import { Decision, type DecisionOutcome, type DecisionRow } from './entities.js';

// The quorum of a request (policies/snapshot.ts QuorumRule, frozen on the request when it opens):
// every rule of it lives here; decide() (service.ts) asks `quorumStep` what a decision is before
// it changes anything, and the GraphQL progress (quorum-graphql.ts) reads `quorumProgress`.
//
// - APPROVE by a reviewer is a vote on the current revision and digest. The request stays
//   PENDING until `approvals` distinct reviewers approved that revision; the approval that makes
//   the count is the final decision (not a vote): it closes the request APPROVED and queues the
//   one delivery, which names it. With approvals = 1 nothing is a vote (the request's first
//   approval closes it, as without a policy).
// - EDIT_AND_APPROVE makes a new revision; the editor's approval is the first on it. Approvals on
//   earlier revisions stay in the record and no longer count.
// - REJECT closes the request REJECTED when the rule says `rejectionRejects` (the default).
//   Otherwise it is recorded as a vote (visible, audited) and the request stays PENDING: it can
//   still be approved by the quorum, closed by someone requesting changes, or expire.
// - A reviewer has one say per revision (a vote, a recorded rejection or a final decision):
//   another is ALREADY_VOTED. The database refuses it too (decision_one_say_per_revision).
// - fromGroupIds not empty: only members of one of the groups may approve (APPROVE,
//   EDIT_AND_APPROVE), and an approval counts only while its reviewer is still a member.
//   Rejecting, requesting changes and delegating stay open to every reviewer with OPERATE:
//   none of them makes anything happen, and a reviewer outside the groups who sees a problem
//   can still stop the request.
// - REQUEST_CHANGES and DELEGATE are as without a quorum.
// - A decision row counts only with its signed record (audit/decision-record.ts: the
//   approval.voted or approval.decided event the deciding instance signed): a row written behind
//   Taskbay's back is not counted, and the next decision on the request reports it.

/** The request's quorum rule, from its frozen policy (the default when a snapshot lacks one). */
export function quorumOf(approval: Pick<ApprovalRow, 'policy'>): QuorumRule {
  const q = approval.policy?.quorum;
  if (!q) return DEFAULT_POLICY.quorum;
  return {
    approvals: Number.isInteger(q.approvals) && q.approvals >= 1 ? q.approvals : 1,
    fromGroupIds: Array.isArray(q.fromGroupIds) ? q.fromGroupIds : [],
    rejectionRejects: q.rejectionRejects !== false,
  };
}

export interface QuorumProgress {
  rule: QuorumRule;
  revision: number;
  digest: string;
  /** The approvals that count on the current revision and digest (vote or final), oldest first. */
  approvals: DecisionRow[];
  /** Rejections recorded without closing (rejectionRejects false) on the current revision. */
  rejections: DecisionRow[];
  /** Decisions on the current revision left out for want of a signed record that matches them. */
  uncounted: { decision: DecisionRow; verdict: Extract<DecisionRecordVerdict, { ok: false }> }[];
}

const APPROVING: DecisionOutcome[] = ['APPROVE', 'EDIT_AND_APPROVE'];

/** Of `userIds`, those still members of one of `groupIds`. */
export type StillMembers = (groupIds: string[], userIds: string[]) => Promise<Set<string>>;

async function stillMembersIn(em: EntityManager, groupIds: string[], userIds: string[]): Promise<Set<string>> {
  const members = await em.find(ReviewerGroupMember, { groupId: { $in: groupIds }, userId: { $in: userIds } }, { fields: ['userId'] });
  return new Set(members.map((m) => m.userId));
}

/** The events that may record these decisions, by decision id (audit/decision-record.ts). */
export type DecisionEventsOf = (decisions: readonly DecisionRow[]) => Promise<Map<string, readonly AuditEventRow[]>>;

/**
 * Where the quorum of the request's current revision stands (read in the caller's transaction).
 * `decisions`, `stillMembers` and `eventsOf`: what the caller has already, or reads in batches
 * for many requests (GraphQL: its loaders, so a list of requests reads each kind once, not per
 * request).
 */
export async function quorumProgress(
  em: EntityManager,
  approval: ApprovalRow,
  decisions?: readonly DecisionRow[],
  stillMembers: StillMembers = (groupIds, userIds) => stillMembersIn(em, groupIds, userIds),
  eventsOf: DecisionEventsOf = (ds) => loadDecisionEvents(em, ds),
): Promise<QuorumProgress> {
  const rule = quorumOf(approval);
  const all =
    decisions ??
    ((await em.find(Decision, { approvalId: approval.id, revision: approval.revision }, { orderBy: { decidedAt: 'asc', id: 'asc' } })) as DecisionRow[]);
  const candidates = all.filter((d) => d.revision === approval.revision && d.digest === approval.digest && d.outcome !== 'DELEGATE');
  const uncounted: QuorumProgress['uncounted'] = [];
  let onRevision = candidates;
  if (candidates.length) {
    const events = await eventsOf(candidates);
    const key = trustedAuditKey(em);
    onRevision = candidates.filter((d) => {
      const verdict = checkDecisionRecord(key, { approval, decision: d, events: events.get(d.id) ?? [] });
      if (!verdict.ok) uncounted.push({ decision: d, verdict });
      return verdict.ok;
    });
  }
  let approvals = onRevision.filter((d) => APPROVING.includes(d.outcome));
  if (rule.fromGroupIds.length && approvals.length) {
    const members = await stillMembers(
      rule.fromGroupIds,
      approvals.map((d) => d.reviewerId),
    );
    approvals = approvals.filter((d) => members.has(d.reviewerId));
  }
  return {
    rule,
    revision: approval.revision,
    digest: approval.digest,
    approvals,
    rejections: onRevision.filter((d) => d.outcome === 'REJECT' && d.vote),
    uncounted,
  };
}

/** The names of the groups a quorum counts (for messages and the console), in the rule's order. */
export async function groupNames(em: EntityManager, groupIds: string[]): Promise<string[]> {
  if (!groupIds.length) return [];
  const rows = await em.find(ReviewerGroup, { id: { $in: groupIds } }, { fields: ['id', 'name'] });
  const byId = new Map(rows.map((g) => [g.id, g.name]));
  return groupIds.map((id) => byId.get(id) ?? id);
}

/** What a decision is under the request's quorum. */
export interface QuorumStep {
  /** true: recorded as a vote, the request stays PENDING; false: the final decision (or a DELEGATE). */
  vote: boolean;
  /** Approvals that count on the revision the decision lands on, this one included (0 for other outcomes). */
  count: number;
  required: number;
  /** Integrity alerts for decision rows the count left out (no signed record), to append with the decision. */
  alerts: AuditEventInput[];
}

/**
 * In decide()'s transaction, with the approval row locked and the revision checked, before
 * anything changes: refuses what the quorum forbids (ALREADY_VOTED, FORBIDDEN) and says whether
 * the decision is a vote or the final one. Locked, so concurrent votes are counted one after the
 * other: of two approvals making the count, the second is the final one.
 */
export async function quorumStep(tem: EntityManager, approval: ApprovalRow, reviewerId: string, outcome: DecisionOutcome): Promise<QuorumStep> {
  const rule = quorumOf(approval);
  const required = rule.approvals;
  if (outcome === 'DELEGATE') return { vote: false, count: 0, required, alerts: [] };
  // No quorum (the default policy): the first decision is final, as it always was.
  if (required === 1 && !rule.fromGroupIds.length && rule.rejectionRejects) {
    return { vote: false, count: APPROVING.includes(outcome) ? 1 : 0, required, alerts: [] };
  }

  const progress = await quorumProgress(tem, approval);
  const alerts = progress.uncounted.map(({ decision, verdict }) =>
    integrityAlert('quorum_vote', verdict, {
      tenantId: approval.tenantId,
      approvalId: approval.id,
      agentId: approval.agentId,
      taskId: approval.taskId,
      decisionId: decision.id,
    }),
  );
  const mine = await tem.findOne(Decision, {
    approvalId: approval.id,
    revision: approval.revision,
    reviewerId,
    outcome: { $ne: 'DELEGATE' },
  });
  // An edit makes a new revision, on which nobody has had a say yet.
  if (mine && outcome !== 'EDIT_AND_APPROVE') {
    const said = mine.outcome === 'REJECT' ? 'rejected' : 'approved';
    throw new DomainError(
      'ALREADY_VOTED',
      `you already ${said} revision ${approval.revision} of this request (${progress.approvals.length} of ${required} approvals so far); another reviewer must decide`,
      { revision: approval.revision, approvals: progress.approvals.length, required },
    );
  }

  if (APPROVING.includes(outcome)) {
    if (rule.fromGroupIds.length) {
      const mineGroups = await groupIdsOf(tem, reviewerId);
      if (!rule.fromGroupIds.some((g) => mineGroups.has(g))) {
        const names = await groupNames(tem, rule.fromGroupIds);
        throw new DomainError('FORBIDDEN', `only members of ${names.map((n) => `"${n}"`).join(' or ')} can approve this request (its policy's quorum)`, {
          reason: 'NOT_IN_QUORUM_GROUP',
        });
      }
    }
    const count = outcome === 'EDIT_AND_APPROVE' ? 1 : progress.approvals.length + 1;
    return { vote: count < required, count, required, alerts };
  }
  if (outcome === 'REJECT' && !rule.rejectionRejects) return { vote: true, count: progress.approvals.length, required, alerts };
  return { vote: false, count: progress.approvals.length, required, alerts };
}
