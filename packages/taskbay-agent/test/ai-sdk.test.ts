import { generateText, type ModelMessage, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveToolApprovals } from '../src/ai-sdk.js';
import { ApprovalVerificationError } from '../src/index.js';
import { decided, forgeSignature, inboxRequest, reviewer, signedApprovalsOf, startTaskbay, type Taskbay, tamperingFetch } from './support.js';

// The Vercel AI SDK 6 adapter end to end: MockLanguageModelV3 (ai/test) asks for a tool whose
// needsApproval is true; resolveToolApprovals puts the call to a real Taskbay, the reviewer
// decides, and the second generateText runs the tool (or tells the model it was denied).

let tb: Taskbay;

beforeAll(async () => {
  tb = await startTaskbay();
});

afterAll(async () => {
  await tb?.t.stop();
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that calls sendEmail once (with this call id), then answers "done". */
function scriptedModel(toolCallId: string) {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: 'tool-call', toolCallId, toolName: 'sendEmail', input: JSON.stringify({ to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' }) },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      },
      { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    ],
  });
}

/** The tools, with sendEmail's executions recorded. */
function emailTools() {
  const sent: unknown[] = [];
  const tools = {
    sendEmail: tool({
      description: 'Send an email',
      inputSchema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
      needsApproval: true,
      execute: async (email) => {
        sent.push(email);
        return `sent to ${email.to}`;
      },
    }),
  };
  return { tools, sent };
}

/** One agent turn with approvals, as docs/AGENT-FRAMEWORKS.md shows it. */
async function turn(
  model: MockLanguageModelV3,
  tools: ReturnType<typeof emailTools>['tools'],
  options: Partial<Parameters<typeof resolveToolApprovals>[1]> = {},
) {
  const messages: ModelMessage[] = [{ role: 'user', content: 'Send the Q3 report to ops' }];
  const first = await generateText({ model, tools, messages });
  messages.push(...first.response.messages);
  const { messages: answered, decisions } = await resolveToolApprovals(messages, { ...tb.agent, ...options });
  const second = await generateText({ model, tools, messages: answered });
  return { decisions, text: second.text, secondPrompt: JSON.stringify(model.doGenerateCalls[1]?.prompt) };
}

describe('@taskbay/agent/ai-sdk: needsApproval → Taskbay → tool-approval-response', () => {
  it('approve: the tool runs once, with the arguments the model sent, and the request showed them as AG-UI tool calls do', async () => {
    const { tools, sent } = emailTools();
    const running = turn(scriptedModel('call-approve'), tools);
    const seen = await inboxRequest(tb, 'call-approve');
    expect(seen.action).toMatchObject({
      kind: 'send_message',
      data: { toolName: 'sendEmail', arguments: { to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' } },
    });
    expect(seen.action.text).toMatch(/^Call sendEmail with \{/);
    expect(sent).toEqual([]);
    await reviewer.approve(tb, seen);
    const { decisions, text } = await running;
    expect(text).toBe('done');
    expect(decisions).toMatchObject([{ toolCallId: 'call-approve', approved: true, edited: false, status: 'APPROVED' }]);
    expect(sent).toEqual([seen.action.data!.arguments]);
  });

  it('edit then approve: the tool runs once, with the reviewer’s arguments', async () => {
    const { tools, sent } = emailTools();
    const running = turn(scriptedModel('call-edit'), tools);
    const seen = await inboxRequest(tb, 'call-edit');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached, as agreed.' });
    const { decisions } = await running;
    const held = await decided(tb, seen.id);
    expect(held.revision).toBe(2);
    expect(decisions).toMatchObject([{ approved: true, edited: true }]);
    expect(sent).toEqual([held.action.data.arguments]);
    expect(sent).not.toEqual([seen.action.data!.arguments]);
  });

  it('edited arguments the tool’s inputSchema refuses: the SDK does not run the tool, the model gets the error', async () => {
    const { tools, sent } = emailTools();
    const model = scriptedModel('call-invalid-edit');
    const running = turn(model, tools);
    const seen = await inboxRequest(tb, 'call-invalid-edit');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com' });
    const { decisions, secondPrompt } = await running;
    expect(decisions).toMatchObject([{ approved: true, edited: true }]);
    expect(sent).toEqual([]);
    expect(secondPrompt).toContain('Invalid input for tool sendEmail');
  });

  it('reject: the tool never runs; the model is told execution-denied with the reviewer’s reason', async () => {
    const { tools, sent } = emailTools();
    const model = scriptedModel('call-reject');
    const running = turn(model, tools);
    const seen = await inboxRequest(tb, 'call-reject');
    await reviewer.reject(tb, seen, 'wrong recipient');
    const { decisions, secondPrompt } = await running;
    expect(decisions).toMatchObject([{ approved: false, status: 'REJECTED' }]);
    expect(sent).toEqual([]);
    expect(secondPrompt).toContain('execution-denied');
    expect(secondPrompt).toContain('wrong recipient');
  });

  it('a forged signature: resolveToolApprovals throws ApprovalVerificationError, the tool never runs and the model is not called again', async () => {
    const { tools, sent } = emailTools();
    const model = scriptedModel('call-forged');
    const forged = tamperingFetch((a) => {
      for (const s of signedApprovalsOf(a)) s.signature = forgeSignature(s.signature);
    });
    const running = turn(model, tools, { fetch: forged }).catch((e) => e);
    const seen = await inboxRequest(tb, 'call-forged');
    await reviewer.approve(tb, seen);
    expect(await running).toBeInstanceOf(ApprovalVerificationError);
    expect((await decided(tb, seen.id)).status).toBe('APPROVED');
    expect(sent).toEqual([]);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('edited arguments altered in transit (signature intact): refused, the tool never runs', async () => {
    const { tools, sent } = emailTools();
    const altered = tamperingFetch((a) => {
      for (const s of signedApprovalsOf(a))
        s.action = { ...s.action, data: { ...s.action.data, arguments: { to: 'attacker@example.com', subject: 'x', body: 'x' } } };
    });
    const running = turn(scriptedModel('call-altered'), tools, { fetch: altered }).catch((e) => e);
    const seen = await inboxRequest(tb, 'call-altered');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached.' });
    expect(await running).toBeInstanceOf(ApprovalVerificationError);
    expect(sent).toEqual([]);
  });

  it('with experimental_toolApprovalSecret (the SDK signs the input) the request is not editable', async () => {
    const { tools, sent } = emailTools();
    const model = scriptedModel('call-secret');
    const messages: ModelMessage[] = [{ role: 'user', content: 'Send the Q3 report to ops' }];
    const first = await generateText({ model, tools, messages, experimental_toolApprovalSecret: 'a secret of the app' });
    messages.push(...first.response.messages);
    const resolving = resolveToolApprovals(messages, tb.agent);
    const seen = await inboxRequest(tb, 'call-secret');
    expect(seen.editable).toBe(false);
    await reviewer.approve(tb, seen);
    const { messages: answered } = await resolving;
    await generateText({ model, tools, messages: answered, experimental_toolApprovalSecret: 'a secret of the app' });
    expect(sent).toEqual([seen.action.data!.arguments]);
  });
});
