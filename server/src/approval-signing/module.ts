import { jwksRoute } from './routes.js';
import { defineModule } from '../module-kit.js';

// What the other modules use of this one: its face. Nothing else of the folder is imported from outside.
export { APPROVAL_KEY_FILE, type ApprovalKeys, loadApprovalKeys } from './keys.js';
export { actionHashesTo, signApproval, signedApprovalOf, type SignedApprovalView, storedSignature } from './signed-approval.js';

// The approval signing key: every final approval signed in its decision's transaction, and the JWKS
// agents verify with.

export const approvalSigningModule = defineModule({
  name: 'approval-signing',
  routes: [jwksRoute],
});
