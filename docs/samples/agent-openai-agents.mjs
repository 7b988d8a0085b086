// An OpenAI Agents SDK agent whose send_email tool waits for a person in Taskbay. taskbayTool is
// tool() with needsApproval that runs only with a verified Taskbay approval, with the approved
// (possibly edited) arguments; approveToolCalls answers the run's interruptions.
import { Agent, run } from '@openai/agents-core'; // or '@openai/agents', which re-exports it
import { approveToolCalls, taskbayTool } from '@taskbay/agent/openai-agents';
import { z } from 'zod';

export const taskbay = { url: process.env.TASKBAY_URL, token: process.env.TASKBAY_TOKEN };

export function mailer(model) {
  const sendEmail = taskbayTool({
    name: 'send_email',
    description: 'Send an email',
    parameters: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
    execute: async ({ to, subject }) => {
      console.log(`sent "${subject}" to ${to}`); // your mailer here
      return `sent to ${to}`;
    },
  });
  return new Agent({ name: 'Mailer', instructions: 'Send the emails you are asked to send.', model, tools: [sendEmail] });
}

export async function ask(model, prompt) {
  const agent = mailer(model);
  let result = await run(agent, prompt);
  while (result.interruptions.length > 0) {
    const { state } = await approveToolCalls(result, taskbay); // waits for the reviewers
    result = await run(agent, state);
  }
  return result.finalOutput;
}
