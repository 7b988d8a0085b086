// A Vercel AI SDK 6 agent whose sendEmail tool waits for a person in Taskbay: needsApproval stops
// generateText at the call, resolveToolApprovals asks Taskbay and answers the SDK for each call.
import { resolveToolApprovals } from '@taskbay/agent/ai-sdk';
import { generateText, tool } from 'ai';
import { z } from 'zod';

const taskbay = { url: process.env.TASKBAY_URL, token: process.env.TASKBAY_TOKEN };

const tools = {
  sendEmail: tool({
    description: 'Send an email',
    inputSchema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
    needsApproval: true,
    execute: async (email) => sendEmail(email), // runs only once approved, with the approved arguments
  }),
};

export async function ask(model, prompt) {
  const messages = [{ role: 'user', content: prompt }];
  for (;;) {
    const result = await generateText({ model, tools, messages });
    messages.push(...result.response.messages);
    const { messages: answered, decisions } = await resolveToolApprovals(messages, taskbay);
    if (decisions.length === 0) return result.text; // nothing waited for approval: the turn is over
    messages.splice(0, messages.length, ...answered);
  }
}

async function sendEmail({ to, subject }) {
  console.log(`sent "${subject}" to ${to}`); // your mailer here
  return `sent to ${to}`;
}
