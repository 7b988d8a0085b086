import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { ApprovalRequest } from '../approvals/entities.js';
import { User } from '../auth/entities.js';
import { manyToOneId } from '../db/relations.js';

import { DECISION_OUTCOMES } from '../lib/outcomes.js';

export { DECISION_OUTCOMES, type DecisionOutcome } from '../lib/outcomes.js';

export const Decision = defineEntity({
  name: 'Decision',
  tableName: 'decision',
  properties: {
    id: p.uuid().primary(),
    approvalId: manyToOneId(ApprovalRequest, 'approval_id'),
    outcome: p.enum([...DECISION_OUTCOMES]),
    revision: p.integer(),
    digest: p.text(),
    reviewerId: manyToOneId(User, 'reviewer_id'),
    comment: p.text().nullable(),
    delegatedToId: manyToOneId(User, 'delegated_to_id').nullable(),
    /**
     * A decision that leaves the request PENDING (decisions/quorum.ts): an approval toward a
     * quorum not yet met, or a rejection recorded under a policy whose rejection does not reject.
     */
    vote: p.boolean().default(false),
    /**
     * The signed approval (a compact JWS by the approval signing key) of a final APPROVE or
     * EDIT_AND_APPROVE, made in the transaction that records the decision and written with it
     * (approval-signing/signed-approval.ts); null for every other decision and on rows older than
     * the column (Migration20261205000100_decision_signature).
     */
    signature: p.text().nullable(),
    decidedAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()'),
  },
  indexes: [{ name: 'decision_approval', properties: ['approvalId', 'decidedAt'] }],
  uniques: [
    // At most one final decision per request, whatever the code does (votes are not final).
    {
      name: 'decision_one_final',
      expression: `create unique index decision_one_final on decision (approval_id) where outcome <> 'DELEGATE' and not vote`,
    },
    // One say per reviewer and revision: a second vote by one reviewer on one revision is refused.
    {
      name: 'decision_one_say_per_revision',
      expression: `create unique index decision_one_say_per_revision on decision (approval_id, revision, reviewer_id) where outcome <> 'DELEGATE'`,
    },
  ],
  checks: [{ name: 'decision_vote_check', expression: `not vote or outcome = any (array['APPROVE', 'EDIT_AND_APPROVE', 'REJECT'])` }],
});

export type DecisionRow = InferEntity<typeof Decision>;
