// Ask a person before a deploy, and deploy only what they approved, once Taskbay's signature verifies.
//   TASKBAY_URL=https://taskbay.example.com TASKBAY_TOKEN=tb_... node agent-request-approval.mjs
import { requestApproval } from '@taskbay/agent';

const decision = await requestApproval({
  url: process.env.TASKBAY_URL,
  token: process.env.TASKBAY_TOKEN, // the agent's own token: another person approves
  title: 'Deploy web 2.4.1 to production',
  risk: 'high',
  action: { kind: 'send_message', text: 'Deploy web 2.4.1 to production', data: { service: 'web', version: '2.4.1' } },
  externalId: `deploy-web-${process.pid}`, // your id of this run: signed with the approval
  timeoutMs: 60 * 60 * 1000, // stop waiting after an hour (the request expires then too)
  onRequested: ({ approvalId }) => console.log(`Waiting for a decision on ${approvalId}`),
});

if (decision.status !== 'APPROVED') {
  console.log(`Not deploying: ${decision.status}${decision.comment ? ` (${decision.comment})` : ''}`);
  process.exit(1);
}
// What was approved, which a reviewer may have edited: deploy that, not what was asked.
const { service, version } = decision.action.data;
console.log(`Deploying ${service} ${version}, approved by ${decision.decidedBy.name} (digest ${decision.digest})`);
