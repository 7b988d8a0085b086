// The same agent, resumed by a webhook: start() stops the run at its tool calls, opens the
// Taskbay requests and stores the run (RunState serialised); Taskbay's approval.decided webhook
// (a Standard Webhooks message) makes onApprovalDecided() rebuild the agent and resume the run,
// in whichever process receives it, however long after.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { run } from '@openai/agents-core';
import { openToolApprovals, resumeToolApprovals } from '@taskbay/agent/openai-agents';
import { Webhook } from 'standardwebhooks';
import { mailer, taskbay } from './agent-openai-agents.mjs';

const STORE = process.env.RUN_STORE ?? './runs'; // one file per request: your database here
mkdirSync(STORE, { recursive: true });
const stored = (approvalId) => `${STORE}/${encodeURIComponent(approvalId)}.json`;

export async function start(model, prompt) {
  const result = await run(mailer(model), prompt);
  if (result.interruptions.length === 0) return result.finalOutput;
  const pending = await openToolApprovals(result, taskbay); // { state: RunState.toString(), approvals }
  for (const { approvalId } of pending.approvals) writeFileSync(stored(approvalId), JSON.stringify(pending));
  return null; // the webhook takes it from here
}

// The body and headers of a POST from Taskbay (createWebhookEndpoint with APPROVAL_DECIDED); `model` as in start().
export async function onApprovalDecided(body, headers, model) {
  const event = new Webhook(process.env.TASKBAY_WEBHOOK_SECRET).verify(body, headers);
  if (event.type !== 'approval.decided') return;
  let saved;
  try {
    saved = readFileSync(stored(event.data.approval.id), 'utf8');
  } catch {
    return; // not one of ours
  }
  const agent = mailer(model);
  const resumed = await resumeToolApprovals(agent, saved, taskbay); // reads and verifies the decisions
  if (!resumed) return; // another request of this run is still waiting
  for (const { approvalId } of JSON.parse(saved).approvals) rmSync(stored(approvalId), { force: true });
  const result = await run(agent, resumed.state);
  console.log(`run finished: ${result.finalOutput}`);
}
