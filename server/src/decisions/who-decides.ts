import type { EntityManager } from '@mikro-orm/postgresql';
import { Access, findGrants } from '../access.js';
import { canOperate } from '../auth/module.js';
import { User, type UserRow } from '../auth/entities.js';
import { starterExcludedMessage } from '../policies/module.js';
import type { ApprovalRow } from '../approvals/entities.js';
import type { DecisionRow } from './entities.js';
import { assignmentRefusal } from './assignment.js';

// Who may decide a request as it stands, asked without deciding: the console disables what the
// decision path (service.ts decide) would refuse and says why before the reviewer types a
// digest, and offers delegation only to people who could then decide. Each answer is made of
// the rules decide() itself applies (auth visibility canOperate, the requester, the policy's
// task starter, assignment.ts, one say per revision); decide() stays the one that enforces them.

/** The refusal of a decider without OPERATE on the request's scope (decide's FORBIDDEN). */
export const noOperateMessage = (approval: Pick<ApprovalRow, 'agentId'>) =>
  approval.agentId ? 'you need OPERATE on this agent to decide' : 'only an admin decides a request without an approver scope';

/** The requester's refusal (decide's SEPARATION_OF_DUTIES). */
export const REQUESTER_MESSAGE = 'the requester cannot decide their own request';

export interface DeciderFacts {
  /** The request's decisions, oldest first. */
  decisions: readonly DecisionRow[];
  /** Who started the request's task (null: no task, or not read because the policy does not exclude them). */
  starterId: string | null;
  /** Whether the viewer is a member of the reviewer group. */
  inGroup: (groupId: string) => Promise<boolean>;
}

/**
 * Why the viewer cannot approve or reject the request's current revision, or null when they
 * can. Having said their say on this revision (a quorum vote, a recorded rejection) leaves
 * edit then approve (a new revision) and delegation open, as decide() does.
 */
export async function whyCannotDecide(approval: ApprovalRow, access: Access, facts: DeciderFacts): Promise<string | null> {
  if (approval.status === 'EXPIRED') return 'this request has expired';
  if (approval.status !== 'PENDING') return `this request is ${approval.status.toLowerCase().replace('_', ' ')} and cannot be decided again`;
  if (access.isViewer(approval.requesterId)) return REQUESTER_MESSAGE;
  if (!(await canOperate(access, approval))) return noOperateMessage(approval);
  if (approval.policy?.excludeTaskStarter && access.isViewer(facts.starterId)) return starterExcludedMessage(approval.policy);
  const assigned = await assignmentRefusal(approval, access, facts.inGroup);
  if (assigned) return assigned;
  const said = facts.decisions.find((d) => d.revision === approval.revision && d.outcome !== 'DELEGATE' && access.isViewer(d.reviewerId));
  if (said) return `you already ${said.outcome === 'REJECT' ? 'rejected' : 'approved'} revision ${approval.revision}; another reviewer must decide it`;
  return null;
}

/**
 * The people the request can be delegated to: enabled people of its tenant who could decide it
 * (OPERATE on its scope, as decide() checks the delegate), never its requester, nor its task's
 * starter when the policy excludes them, nor the viewer; by name.
 */
export async function delegateCandidates(em: EntityManager, access: Access, approval: ApprovalRow, starterId: string | null): Promise<UserRow[]> {
  const people = await em.find(User, { tenantId: approval.tenantId, disabledAt: null }, { orderBy: { name: 'asc', email: 'asc' } });
  const others = people.filter(
    (u) => !access.isViewer(u.id) && u.id !== approval.requesterId && !(approval.policy?.excludeTaskStarter && starterId && u.id === starterId),
  );
  // Everyone's grants in one query; admins need none.
  const grants = await findGrants(
    em,
    approval.tenantId,
    others.filter((u) => u.role !== 'ADMIN').map((u) => u.id),
  );
  const out: UserRow[] = [];
  for (const u of others) {
    const theirs = new Access(em, { userId: u.id, tenantId: u.tenantId, role: u.role, email: u.email }, async () => grants.get(u.id) ?? []);
    if (await canOperate(theirs, approval)) out.push(u);
  }
  return out;
}
