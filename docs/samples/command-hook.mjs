// command-hook.mjs: hold one shell command until a person approves it in Taskbay, then run it
// once and report how it ended (seed 002 over the REST API; Node 20+, no dependencies).
// Usage: TASKBAY_URL=… TASKBAY_TOKEN=… TASKBAY_AGENT_ID=a1b2c3 node command-hook.mjs 'rm -rf build'
import { spawnSync } from 'node:child_process';

const [command] = process.argv.slice(2);
const agent_id = process.env.TASKBAY_AGENT_ID; // "a" + 5 or more hex digits: one coding-agent session
const api = async (path, body) => {
  const res = await fetch(`${process.env.TASKBAY_URL}/api/command-approvals${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${process.env.TASKBAY_TOKEN}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${res.status} ${json.error}: ${json.message}`);
  return json;
};

const asked = await api('', {
  agent_id,
  payload: {
    operation: `MUTATIVE command intercepted: ${command.split(/\s+/)[0]}`,
    exact_content: command,
    scope: command.split(/\s+/)[0],
    risk_level: 'high',
    rollback: null,
    rationale: 'the coding agent wants to change files outside its sandbox',
    verification: 'the command exits 0',
  },
  expires_in_seconds: 600,
});
// The envelope is what the agent relays to its orchestrator, verbatim.
console.log(JSON.stringify(asked.envelope, null, 2));

let state = asked;
while (state.status === 'pending') {
  await new Promise((r) => setTimeout(r, 1000)); // or subscribe to approvalChanged over graphql-ws
  state = await api(`/${asked.approval_id}`);
}
if (state.status !== 'approved') {
  console.error(`${asked.approval_id} is ${state.status}: not running`);
  process.exit(77);
}
await api(`/${asked.approval_id}/consume`, { agent_id }); // single use: a second consume fails
const run = spawnSync('sh', ['-c', command], { stdio: ['inherit', 'inherit', 'pipe'], encoding: 'utf8' });
const exit_code = run.status ?? 128;
await api(`/${asked.approval_id}/outcome`, { exit_code, detail: run.stderr.slice(-4096) || undefined });
process.exit(exit_code);
