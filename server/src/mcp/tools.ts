import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { APPROVAL_LIMITS, EXTERNAL_ID_LIMITS, MCP_LIMITS, MESSAGE_LIMITS, RISKS } from '../limits.js';

// The tools Taskbay's MCP server offers: for agents to ask and to learn the answer, never to
// decide (a decision is a person's, in the console or the API, under sign-in and policy).

const waitSeconds = (fallback: number) => ({
  type: 'integer',
  minimum: 0,
  maximum: MCP_LIMITS.waitMaxSeconds,
  default: fallback,
  description: `Seconds to wait for the decision before answering (0: answer at once with the request id; at most ${MCP_LIMITS.waitMaxSeconds}). Progress notifications are sent every ${MCP_LIMITS.progressSeconds} s while it waits when the call carries a progressToken.`,
});

export const REQUEST_APPROVAL: Tool = {
  name: 'request_approval',
  title: 'Ask a person for approval',
  description:
    'Ask a person to approve exactly one action before you do it: a message (with optional data) or a tool call {server, tool, arguments}. ' +
    'The answer says whether it was approved, the action as approved (a reviewer may edit it: do exactly that, once), its revision and digest, and the signed approval. ' +
    'Without a decision within wait_seconds it answers with the request id: call get_approval with it. Never do the action unless the answer says approved: true.',
  inputSchema: {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: APPROVAL_LIMITS.titleMin, maxLength: APPROVAL_LIMITS.titleMax, description: 'What is asked, in a line.' },
      summary: { type: 'string', maxLength: APPROVAL_LIMITS.summaryMax, description: 'Why, and what happens if it is approved.' },
      risk: { type: 'string', enum: [...RISKS], default: 'medium' },
      expires_in_seconds: {
        type: 'integer',
        minimum: APPROVAL_LIMITS.expiresMinSeconds,
        maximum: APPROVAL_LIMITS.expiresMaxSeconds,
        description: "How long the request stays open for a decision (default: the server's).",
      },
      action: {
        description: 'The exact action to approve.',
        oneOf: [
          {
            type: 'object',
            title: 'A message',
            properties: {
              kind: { const: 'send_message' },
              text: { type: 'string', minLength: 1, maxLength: MESSAGE_LIMITS.textMax },
              data: { type: 'object', description: 'Structured content sent with the text.' },
            },
            required: ['kind', 'text'],
          },
          {
            type: 'object',
            title: 'A tool call',
            properties: {
              server: { type: 'string', minLength: 1, maxLength: MCP_LIMITS.serverNameMaxChars, description: 'The MCP server the tool belongs to.' },
              tool: { type: 'string', minLength: 1, maxLength: MCP_LIMITS.toolNameMaxChars },
              arguments: { type: 'object' },
            },
            required: ['server', 'tool'],
          },
        ],
      },
      external_id: {
        type: 'string',
        minLength: EXTERNAL_ID_LIMITS.min,
        maxLength: EXTERNAL_ID_LIMITS.max,
        description: 'Your own id of this call or thread; signed with the approval, not editable by reviewers.',
      },
      editable: { type: 'boolean', default: true, description: 'false: reviewers may approve or reject, never edit.' },
      wait_seconds: waitSeconds(MCP_LIMITS.defaultWaitSeconds),
    },
    required: ['title', 'action'],
  },
  annotations: { title: 'Ask a person for approval', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

export const GET_APPROVAL: Tool = {
  name: 'get_approval',
  title: 'The state of an approval request',
  description:
    'The state of a request you opened with request_approval: pending, or the decision with the action as approved and the signed approval. Never do the action unless approved is true.',
  inputSchema: {
    type: 'object',
    properties: {
      request_id: { type: 'string', minLength: 1, maxLength: 200, description: 'The request_id request_approval answered with.' },
      wait_seconds: waitSeconds(0),
    },
    required: ['request_id'],
  },
  annotations: { title: 'The state of an approval request', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export const TOOLS: readonly Tool[] = [REQUEST_APPROVAL, GET_APPROVAL];
