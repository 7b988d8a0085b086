import type { IncomingMessage, Server } from 'node:http';
import { Agent, run, tool, Usage } from '@openai/agents-core';
import { assistantMessage, functionCall, modelResponse, ScriptedModel } from '@openai/agents-core/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalVerificationError } from '../src/index.js';
import { approveToolCalls, openToolApprovals, resumeToolApprovals, taskbayTool } from '../src/openai-agents.js';
import { decided, forgeSignature, inboxRequest, reviewer, signedApprovalsOf, startTaskbayWithWebhooks, type Taskbay, tamperingFetch } from './support.js';

// The OpenAI Agents SDK adapter end to end: ScriptedModel (@openai/agents-core/testing) calls a
// tool that needs approval; the run stops with an interruption; the adapter asks a real Taskbay,
// the reviewer decides, and the state is approved or rejected and run again. One test stores the
// interrupted run as a string and resumes it in a handler of Taskbay's approval.decided webhook,
// with an agent built anew, as a later process would.

let tb: Taskbay;
let receiver: Server;
/** What the webhook receiver does with a verified message. */
let onWebhook: (payload: any) => Promise<void> = async () => {};
let secret = '';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

beforeAll(async () => {
  ({ tb, receiver, secret } = await startTaskbayWithWebhooks(async (req, res) => {
    const body = await readBody(req);
    try {
      const payload = new Webhook(secret).verify(body, req.headers as Record<string, string>);
      await onWebhook(payload);
      res.writeHead(204).end();
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  }));
});

afterAll(async () => {
  await tb?.t.stop();
  await new Promise<void>((r) => receiver?.close(() => r()));
});

const EMAIL = { to: 'ops@example.com', subject: 'Q3 report', body: 'Attached.' };
const Email = z.object({ to: z.string(), subject: z.string(), body: z.string() });

/** A model that calls send_email once (with this call id), then answers "done". */
const scripted = (callId: string) =>
  new ScriptedModel([
    modelResponse({ output: [functionCall('send_email', EMAIL, { callId })], usage: new Usage({ requests: 1 }) }),
    modelResponse({ output: [assistantMessage('done')], usage: new Usage({ requests: 1 }) }),
  ]);

/** The mailer agent, its send_email a taskbayTool whose executions are recorded. */
function mailer(model: ScriptedModel, sent: unknown[]) {
  const sendEmail = taskbayTool({
    name: 'send_email',
    description: 'Send an email',
    parameters: Email,
    execute: async (email) => {
      sent.push(email);
      return `sent to ${email.to}`;
    },
  });
  return new Agent({ name: 'Mailer', instructions: 'Send the emails you are asked to send.', model, tools: [sendEmail] });
}

describe('@taskbay/agent/openai-agents: interruptions → Taskbay → state.approve / state.reject', () => {
  it('approve: the run resumes and the tool runs once, with the model’s arguments', async () => {
    const sent: unknown[] = [];
    const agent = mailer(scripted('call_approve'), sent);
    const result = await run(agent, 'Send the Q3 report to ops');
    expect(result.interruptions).toHaveLength(1);
    const approving = approveToolCalls(result, tb.agent);
    const seen = await inboxRequest(tb, 'call_approve');
    expect(seen.action.data).toEqual({ toolName: 'send_email', arguments: EMAIL });
    expect(seen.editable).toBe(true);
    await reviewer.approve(tb, seen);
    const { state, decisions } = await approving;
    expect(decisions).toMatchObject([{ approved: true, edited: false }]);
    expect(sent).toEqual([]);
    const resumed = await run(agent, state);
    expect(resumed.finalOutput).toBe('done');
    expect(sent).toEqual([seen.action.data!.arguments]);
  });

  it('edit then approve: the tool runs once, with the reviewer’s arguments', async () => {
    const sent: unknown[] = [];
    const agent = mailer(scripted('call_edit'), sent);
    const result = await run(agent, 'Send the Q3 report to ops');
    const approving = approveToolCalls(result, tb.agent);
    const seen = await inboxRequest(tb, 'call_edit');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached, as agreed.' });
    const { state } = await approving;
    await run(agent, state);
    const held = await decided(tb, seen.id);
    expect(sent).toEqual([held.action.data.arguments]);
    expect(sent).not.toEqual([EMAIL]);
  });

  it('reject: the tool never runs; the model is given the reviewer’s reason', async () => {
    const sent: unknown[] = [];
    const model = scripted('call_reject');
    const agent = mailer(model, sent);
    const result = await run(agent, 'Send the Q3 report to ops');
    const approving = approveToolCalls(result, tb.agent);
    const seen = await inboxRequest(tb, 'call_reject');
    await reviewer.reject(tb, seen, 'wrong recipient');
    const { state, decisions } = await approving;
    expect(decisions).toMatchObject([{ approved: false, status: 'REJECTED' }]);
    await run(agent, state);
    expect(sent).toEqual([]);
    expect(JSON.stringify(model.lastCall)).toContain('wrong recipient');
  });

  it('a forged signature: approveToolCalls throws ApprovalVerificationError and the tool never runs', async () => {
    const sent: unknown[] = [];
    const agent = mailer(scripted('call_forged'), sent);
    const result = await run(agent, 'Send the Q3 report to ops');
    const forged = tamperingFetch((a) => {
      for (const s of signedApprovalsOf(a)) s.signature = forgeSignature(s.signature);
    });
    const approving = approveToolCalls(result, { ...tb.agent, fetch: forged }).catch((e) => e);
    const seen = await inboxRequest(tb, 'call_forged');
    await reviewer.approve(tb, seen);
    expect(await approving).toBeInstanceOf(ApprovalVerificationError);
    expect((await decided(tb, seen.id)).status).toBe('APPROVED');
    // The state was left as it was: running it interrupts again, nothing runs.
    const again = await run(agent, result.state);
    expect(again.interruptions).toHaveLength(1);
    expect(sent).toEqual([]);
  });

  it('a taskbayTool call approved without Taskbay (state.approve alone) does not run', async () => {
    const sent: unknown[] = [];
    const agent = mailer(scripted('call_unasked'), sent);
    const result = await run(agent, 'Send the Q3 report to ops');
    result.state.approve(result.interruptions[0]!);
    const resumed = await run(agent, result.state);
    expect(sent).toEqual([]);
    // The call's result is the SDK's error text (the wrapper threw), not the tool's.
    const output = resumed.newItems.map((i) => i.rawItem as { type: string; output?: { text?: string } }).find((r) => r.type === 'function_call_result');
    expect(output?.output?.text).toMatch(/^An error occurred while running the tool/);
  });

  it('a plain tool with needsApproval: asked as not editable, and runs once approved', async () => {
    const sent: unknown[] = [];
    const plain = tool({
      name: 'send_email',
      description: 'Send an email',
      parameters: Email,
      needsApproval: true,
      execute: async (email) => {
        sent.push(email);
        return 'sent';
      },
    });
    const agent = new Agent({ name: 'Mailer', instructions: 'Send emails.', model: scripted('call_plain'), tools: [plain] });
    const result = await run(agent, 'Send the Q3 report to ops');
    const approving = approveToolCalls(result, tb.agent);
    const seen = await inboxRequest(tb, 'call_plain');
    expect(seen.editable).toBe(false);
    await reviewer.approve(tb, seen);
    await run(agent, (await approving).state);
    expect(sent).toEqual([seen.action.data!.arguments]);
  });

  it('resumable from a webhook: the stored run is resumed by the approval.decided handler, with an agent built anew', async () => {
    // Process 1: the run stops at the tool call; the requests are opened and the run stored.
    const store = new Map<string, string>();
    const firstSent: unknown[] = [];
    const interrupted = await run(mailer(scripted('call_webhook'), firstSent), 'Send the Q3 report to ops');
    const pending = await openToolApprovals(interrupted, tb.agent);
    for (const a of pending.approvals) store.set(a.approvalId, JSON.stringify(pending));

    // Process 2: the webhook handler. It knows the stored string and builds the agent again.
    const sent: unknown[] = [];
    let finished!: (output: unknown) => void;
    const done = new Promise((r) => (finished = r));
    onWebhook = async (payload) => {
      if (payload.type !== 'approval.decided') return;
      const stored = store.get(payload.data.approval.id);
      if (!stored) return;
      const agent = mailer(new ScriptedModel([modelResponse({ output: [assistantMessage('sent it')], usage: new Usage({ requests: 1 }) })]), sent);
      const resumed = await resumeToolApprovals(agent, stored, tb.agent);
      if (!resumed) return; // another call of the run is still waiting
      finished((await run(agent, resumed.state)).finalOutput);
    };

    const seen = await inboxRequest(tb, 'call_webhook');
    await reviewer.editArguments(tb, seen, { to: 'finance@example.com', subject: 'Q3 report', body: 'Attached.' });
    expect(await done).toBe('sent it');
    const held = await decided(tb, seen.id);
    expect(sent).toEqual([held.action.data.arguments]);
    expect(firstSent).toEqual([]);
  });
});
