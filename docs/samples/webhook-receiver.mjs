// receiver.mjs
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

// The secret createWebhookEndpoint (or rotateWebhookSecret) returned: whsec_…
const webhook = new Webhook(process.env.TASKBAY_WEBHOOK_SECRET);
// webhook-ids already handled: a retry of a message that arrived carries the same id.
// (Keep them in your database, next to what handling the message changed.)
const handled = new Set();

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      // Throws unless a signature matches and webhook-timestamp is within 5 minutes.
      event = webhook.verify(body, req.headers);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const id = req.headers['webhook-id'];
    if (!handled.has(id)) {
      handled.add(id);
      console.log(`${event.type} ${event.data.approval?.url ?? ''}`);
    }
    // Any 2xx ends the retries; answer quickly and do slow work afterwards.
    res.writeHead(204).end();
  });
});
server.listen(Number(process.env.PORT ?? 8080), () => console.log(`listening on ${server.address().port}`));
