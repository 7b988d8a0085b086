import type { EntityManager } from '@mikro-orm/postgresql';
import { registerObservationHook } from '../tasks/module.js';
import { byId, manyBy } from '../graphql/loaders.js';
import { approvalDetection } from './detection.js';
import { ApprovalRequest, Revision, type ApprovalRow, type RevisionRow } from './entities.js';
import { expireJob, startExpirySweeper, type ExpirySweeper } from './expiry.js';
import { defineModule } from '../module-kit.js';
import './graphql.js';
import './console-graphql.js';
import './waiting-graphql.js';
import './audit-graphql.js';
import './policy-graphql.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { actionDigest, type ApprovalAction, digestInput } from './digest.js';
export { expireIfDue, type ExpiryHook, registerExpiryHook } from './expiry.js';
export { parseExternalId } from './external-id.js';
export { ApprovalRef, RiskEnum } from './graphql.js';
export { applyActionEdit, type ApprovalRequestInput, parseApprovalRequest } from './request-part.js';
export { expiryFor, insertPendingApproval, openApproval } from './service.js';

// Approval requests: detected in an agent's answer (or opened by a person, a hook, an interrupt), their
// revisions, expiry, and the reviewer's inbox and waiting list.

const loaders = (em: EntityManager) => ({
  approval: byId<ApprovalRow>(em, ApprovalRequest),
  revisions: manyBy<RevisionRow>(em, Revision, 'approvalId', { number: 'asc' }),
});
type ApprovalsLoaders = ReturnType<typeof loaders>;
declare module '../graphql/loaders.js' {
  interface Loaders extends ApprovalsLoaders {}
}

registerObservationHook('approvals', approvalDetection);

export const approvalsModule = defineModule({
  name: 'approvals',
  entities: [ApprovalRequest, Revision],
  loaders,
  jobs: [expireJob],
  // With the job worker: the expiry sweeper, which hears of new deadlines from the LISTEN loop.
  start({ orm }) {
    let sweeper: ExpirySweeper | null = null;
    return {
      onEvent: (event) => sweeper?.noteEvent(event),
      startBackground: () => {
        sweeper = startExpirySweeper(orm);
      },
      stop: async () => {
        await sweeper?.stop();
      },
    };
  },
});
