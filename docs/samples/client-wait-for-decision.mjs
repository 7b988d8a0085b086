// Ask a person before a deploy: open a request in Taskbay and wait for its decision.
// TASKBAY_URL=http://localhost:4000 TASKBAY_TOKEN=tb_... node client-wait-for-decision.mjs
import { createTaskbayClient } from '@taskbay/client';

const taskbay = createTaskbayClient({ url: process.env.TASKBAY_URL, token: process.env.TASKBAY_TOKEN });

const request = await taskbay.createApproval({
  input: {
    title: 'Deploy web 2.4.1 to production',
    risk: 'HIGH',
    expiresInSeconds: 3600,
    action: { kind: 'send_message', text: 'Deploy web 2.4.1 to production', data: { service: 'web', version: '2.4.1' } },
  },
});
console.log(`Waiting for a decision on ${request.id}`);

const decided = await taskbay.waitForDecision(request.id, {
  onChange: (change) => console.log(`  ${change.status} (revision ${change.revision})`),
});
await taskbay.close();

if (decided.status !== 'APPROVED') {
  console.log(`Not deploying: the request is ${decided.status}`);
  process.exit(1);
}
console.log('Approved: deploying');
