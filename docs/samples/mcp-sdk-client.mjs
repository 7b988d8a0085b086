// Ask a person through Taskbay's MCP server with the official MCP SDK, then act only on approval.
// TASKBAY_URL=http://localhost:4000 TASKBAY_TOKEN=tb_... node mcp-sdk-client.mjs
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'deploy-script', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${process.env.TASKBAY_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.TASKBAY_TOKEN}` } },
  }),
);

// Progress every 10 s while Taskbay waits: it keeps the SDK's 60-s request timeout from running out.
const call = (name, args) =>
  client.callTool({ name, arguments: args }, undefined, { resetTimeoutOnProgress: true, onprogress: (p) => console.log(p.message) });

let answer = await call('request_approval', {
  title: 'Deploy web 2.4.1 to production',
  risk: 'high',
  action: { server: 'deploy', tool: 'deploy_service', arguments: { service: 'web', version: '2.4.1' } },
  wait_seconds: 300,
});
// Not decided within wait_seconds: ask again for the same request (it stays open until it expires).
while (!answer.isError && answer.structuredContent.status === 'PENDING') {
  answer = await call('get_approval', { request_id: answer.structuredContent.request_id, wait_seconds: 300 });
}
await client.close();

if (answer.isError) {
  console.error(answer.content[0].text);
  process.exit(2);
}
const { approved, status, tool_call } = answer.structuredContent;
if (!approved) {
  console.log(`Not deploying: the request is ${status}`);
  process.exit(1);
}
// A reviewer may have edited the call: run the approved one.
console.log(`Approved: calling ${tool_call.tool} with ${JSON.stringify(tool_call.arguments)}`);
