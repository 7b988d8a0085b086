import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import type { Access } from '../access.js';
import { DomainError } from '../errors.js';
import { ReviewerGroupMember } from '../groups/entities.js';

// Who may decide an assigned request. A request assigned to a person (delegation, escalation)
// and/or to a reviewer group (escalation, docs/ESCALATION.md) is decided by that person, a
// member of that group, or an admin; anyone else is FORBIDDEN. Assignment narrows who decides,
// it never widens it: the decider still needs OPERATE on the request (auth/visibility.ts), and
// the requester still never decides their own request.

/**
 * Why the viewer may not decide the request as it is assigned, or null when they may. The one
 * rule, asked by the decision path (checkAssignment, in its transaction) and by the console's
 * question before the ritual (who-decides.ts, through the request loaders): `inGroup` says
 * whether the viewer is a member of a group, as each reads it.
 */
export async function assignmentRefusal(
  approval: Pick<ApprovalRow, 'assigneeId' | 'assigneeGroupId'>,
  access: Access,
  inGroup: (groupId: string) => Promise<boolean>,
): Promise<string | null> {
  if (access.isAdmin) return null;
  const person = approval.assigneeId ?? null;
  const group = approval.assigneeGroupId ?? null;
  if (!person && !group) return null;
  if (access.isViewer(person)) return null;
  if (group && (await inGroup(group))) return null;
  return group
    ? `this request is assigned to a reviewer group you are not a member of${person ? ' (or to someone else)' : ''}`
    : 'this request is delegated to someone else';
}

/** Throws FORBIDDEN unless the viewer may decide the request as it is assigned. Read in the decision's transaction. */
export async function checkAssignment(tem: EntityManager, approval: ApprovalRow, access: Access): Promise<void> {
  const refusal = await assignmentRefusal(
    approval,
    access,
    async (groupId) => (await tem.count(ReviewerGroupMember, { groupId, userId: access.viewer.userId })) > 0,
  );
  if (refusal) throw new DomainError('FORBIDDEN', refusal);
}
