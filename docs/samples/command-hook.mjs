// command-hook.mjs: a runner, not a host hook. It holds one shell command until a person approves
// it in Taskbay, then runs it itself, once, and reports how it ended (seed 002 over the REST API;
// Node 20+, no dependencies). For a terminal, a CI job or a script of your own. A Claude Code or
// Codex hook must never run the command (the host runs it after the hook answers, so it would run
// twice): wire `taskbay hook claude-code|codex` there instead. Wired as a hook anyway, it blocks.
// Usage: TASKBAY_URL=… TASKBAY_TOKEN=… TASKBAY_AGENT_ID=a1b2c3 node command-hook.mjs 'rm -rf build'
// Exits with the command's status once it ran, and 2 when it did not run (the reason on stderr).
import { spawnSync } from 'node:child_process';

const notRun = (why) => {
  console.error(`command-hook.mjs: ${why}; the command did not run`);
  process.exit(2); // 2: what a coding-agent host reads as "blocked", if this is ever wired as its hook
};
const [command] = process.argv.slice(2);
if (!command) notRun('no command given (this is a runner, not a host hook: use `taskbay hook claude-code|codex` as the hook)');
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

try {
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
  if (state.status !== 'approved') notRun(`${asked.approval_id} is ${state.status}`);
  await api(`/${asked.approval_id}/consume`, { agent_id }); // single use: a second consume fails
  const run = spawnSync('sh', ['-c', command], { stdio: ['inherit', 'inherit', 'pipe'], encoding: 'utf8' });
  const exit_code = run.status ?? 128;
  await api(`/${asked.approval_id}/outcome`, { exit_code, detail: run.stderr.slice(-4096) || undefined }).catch((e) =>
    console.error(`command-hook.mjs: the outcome was not reported (${e.message}); Taskbay records FAILED after its outcome timeout`),
  );
  process.exit(exit_code);
} catch (e) {
  notRun(e.message); // Taskbay unreachable, or it refused
}
