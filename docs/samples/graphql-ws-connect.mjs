// graphql-ws without @taskbay/client: the API token goes in connectionParams, as this literal
// object ("Bearer " included). Prints who the token is.
// TASKBAY_URL=http://localhost:4000 TASKBAY_TOKEN=tb_... node graphql-ws-connect.mjs
import { createClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node 20 has no global WebSocket; on 22 and later, leave webSocketImpl out

const ws = createClient({
  url: `${process.env.TASKBAY_URL.replace(/^http/, 'ws')}/graphql`,
  connectionParams: { authorization: `Bearer ${process.env.TASKBAY_TOKEN}` },
  webSocketImpl: WebSocket,
  shouldRetry: (e) => e?.code !== 4403, // a refused token stays refused: do not retry it
});
const result = await new Promise((resolve, reject) => {
  let last;
  ws.subscribe({ query: '{ viewer { email } }' }, { next: (v) => (last = v), error: reject, complete: () => resolve(last) });
});
console.log(JSON.stringify(result.data));
await ws.dispose();
