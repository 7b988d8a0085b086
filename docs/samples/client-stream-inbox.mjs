// Stream the inbox: print each new request as it is opened (Ctrl-C stops).
// TASKBAY_URL=http://localhost:4000 TASKBAY_TOKEN=tb_... node client-stream-inbox.mjs
import { createTaskbayClient } from '@taskbay/client';

const taskbay = createTaskbayClient({ url: process.env.TASKBAY_URL, token: process.env.TASKBAY_TOKEN });

console.log('Listening for new requests');
for await (const request of taskbay.approvalRequested()) {
  const from = request.agent?.name ?? request.requester?.name ?? 'someone';
  console.log(`${request.risk} ${request.title} (${request.id}) from ${from}`);
}
