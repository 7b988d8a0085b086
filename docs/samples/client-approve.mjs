// Approve from a script. Without arguments: lists the pending requests you may see.
// With a request id: approves the revision it reads, or says why it could not.
// TASKBAY_URL=http://localhost:4000 TASKBAY_TOKEN=tb_... node client-approve.mjs [id [comment]]
import { createTaskbayClient, isTaskbayError } from '@taskbay/client';

const taskbay = createTaskbayClient({ url: process.env.TASKBAY_URL, token: process.env.TASKBAY_TOKEN });
const [id, comment] = process.argv.slice(2);

if (!id) {
  // Every page of the connection, 50 at a time.
  for await (const pending of taskbay.all.approvals({ status: ['PENDING'] })) {
    console.log(`${pending.id}  ${pending.risk}  ${pending.title}`);
  }
  process.exit(0);
}

const request = await taskbay.approval({ id });
if (!request) {
  console.error(`No request ${id}`);
  process.exit(1);
}
try {
  // A decision names the revision and digest it was made on.
  const decision = await taskbay.approve({ input: { approvalId: id, revision: request.revision, digest: request.digest, comment } });
  console.log(`Approved "${request.title}" at revision ${decision.revision}`);
} catch (e) {
  if (isTaskbayError(e, 'STALE_REVISION')) {
    console.error(`The request changed (now revision ${e.extensions.currentRevision}) after it was read: read it again`);
    process.exit(2);
  }
  if (isTaskbayError(e, 'NOT_PENDING', 'EXPIRED', 'FORBIDDEN', 'SEPARATION_OF_DUTIES')) {
    console.error(`Not approved (${e.code}): ${e.message}`);
    process.exit(3);
  }
  throw e;
}
