// Before acting on an approved message: check that Taskbay approved exactly this action on this
// task, then build the execution-evidence part for the reply. The message is the A2A message as
// it arrived (the params.message of Taskbay's SendMessage request), saved as JSON:
//   TASKBAY_URL=https://taskbay.example.com TASK_ID=<your task id> node verify-approval.mjs message.json
import { readFileSync } from 'node:fs';
import { executionEvidencePart, fetchJwks, jwksUrl, verifyApprovedMessage } from '@taskbay/verify';

const TASKBAY = process.env.TASKBAY_URL; // configured, never read from the message
const JWKS_URL = process.env.TASKBAY_JWKS_URL || jwksUrl(TASKBAY); // set it when the JWKS is elsewhere
const taskId = process.env.TASK_ID; // your own id of the task the message arrived on

const message = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const jwks = await fetchJwks(JWKS_URL); // cache it; fetch again when a signature names an unknown kid
// For a send_data approval, also pass `form`: the form you asked with.
const verdict = verifyApprovedMessage(message, { jwks, issuer: TASKBAY, taskId });
if (!verdict.ok) {
  console.error(`approval refused: ${verdict.reason}`);
  process.exit(1);
}

// verdict.action is what was approved. Act on verdict.claims.decisionId once only: a retry
// delivers the same message again.
const result = await execute(verdict.action);
const evidence = executionEvidencePart(verdict.claims, verdict.action, result.ok ? 'succeeded' : 'failed', result.summary);
console.log(JSON.stringify(evidence)); // put it in your reply on the same task

async function execute(action) {
  // Your agent's work goes here.
  const what = action.kind === 'send_message' ? action.text : JSON.stringify(action.values);
  return { ok: true, summary: `executed: ${what}` };
}
