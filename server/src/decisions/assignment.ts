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

/** Throws FORBIDDEN unless the viewer may decide the request as it is assigned. Read in the decision's transaction. */
export async function checkAssignment(tem: EntityManager, approval: ApprovalRow, access: Access): Promise<void> {
  const viewer = access.viewer;
  if (access.isAdmin) return;
  const person = approval.assigneeId ?? null;
  const group = approval.assigneeGroupId ?? null;
  if (!person && !group) return;
  if (person === viewer.userId) return;
  if (group && (await tem.count(ReviewerGroupMember, { groupId: group, userId: viewer.userId })) > 0) return;
  throw new DomainError(
    'FORBIDDEN',
    group
      ? `this request is assigned to a reviewer group you are not a member of${person ? ' (or to someone else)' : ''}`
      : 'this request is delegated to someone else',
  );
}
