import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BaseEvent, Interrupt, ResumeEntry, RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import { readJsonBody } from '../http/json.js';
import { AGUI_LIMITS } from '../limits.js';
import { fetchJwks, jwksUrl, verifyResumeEntry, type Jwks } from '../verify-approval/index.js';
import { AGUI_SCENARIOS, firstRun, say, type AgUiScenario, type ToolCallPlan } from './agui-scenarios.js';

// The AG-UI fixture agent (docs/AG-UI.md): a test fixture and demo, not product code. One
// node:http server, POST /<scenario> takes a RunAgentInput and streams the run's events as SSE
// with @ag-ui/encoder. A first run ends with the interrupt outcome (approval: one tool call to
// approve; form: an input_required interrupt with a response schema; multi: three tool calls);
// the run that resumes it must answer every open interrupt of the thread (AG-UI 1.0), and each
// resolved entry must verify (verify-approval/index.ts) against the Taskbay it trusts; it then
// "executes" the approved calls (TOOL_CALL_RESULT against the original ids), says what it did,
// and finishes with success. A violation ends the run with RUN_ERROR. The same resume runId
// again replays the recorded answer and executes nothing (AG-UI: a resume must be safe to replay).

export interface AgUiResume {
  threadId: string;
  runId: string;
  entries: ResumeEntry[];
  /** Per entry: 'verified', 'cancelled', or why verification failed. */
  verdicts: string[];
}

export interface AgUiFixture {
  url(scenario: AgUiScenario): string;
  /** hostile-comments runs, settled: bytes written, and whether the reader left before the agent was done. */
  floods: { written: number; closedEarly: boolean }[];
  /** Resume runs executed (a replayed runId is not counted again). */
  resumes: AgUiResume[];
  /** Every POST received with a valid RunAgentInput, in order. */
  inputs: RunAgentInput[];
  /** The next `count` POSTs answer HTTP 503 without reading the input (an outage). */
  failNext(count: number): void;
  /** Resolved entries must carry a valid signature of this Taskbay (its public URL; its JWKS at jwksUrl, default below the issuer). */
  trust(issuer: string, jwksAt?: string): void;
  close(): Promise<void>;
}

interface Thread {
  scenario: AgUiScenario;
  open: Interrupt[];
  calls: ToolCallPlan[];
}

const encoder = new EventEncoder();

export async function startAgUiFixture(opts: { port?: number; host?: string } = {}): Promise<AgUiFixture> {
  const threads = new Map<string, Thread>();
  const answered = new Map<string, BaseEvent[]>();
  const resumes: AgUiResume[] = [];
  const inputs: RunAgentInput[] = [];
  const floods: AgUiFixture['floods'] = [];
  let failures = 0;
  let issuer: string | null = null;
  let jwks: Jwks | null = null;
  let jwksAt: string | null = null;

  const stream = (res: ServerResponse, events: BaseEvent[]) => {
    res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache' });
    for (const e of events) res.write(encoder.encodeSSE(e));
    res.end();
  };

  async function resumeEvents(input: RunAgentInput, thread: Thread): Promise<BaseEvent[]> {
    const start = { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId } as BaseEvent;
    const fail = (message: string) => [start, { type: 'RUN_ERROR', message, code: 'RESUME_INVALID' } as BaseEvent];
    const entries = input.resume ?? [];
    const openIds = thread.open.map((i) => i.id);
    const ids = entries.map((e) => e.interruptId);
    if (new Set(ids).size !== ids.length) return fail('an interrupt is answered twice');
    if (ids.some((id) => !openIds.includes(id))) return fail('the resume answers an interrupt that is not open');
    if (openIds.some((id) => !ids.includes(id))) return fail('a resume must answer every open interrupt');
    if (issuer && !jwks) jwks = await fetchJwks(jwksAt ?? jwksUrl(issuer));
    const verdicts: string[] = [];
    const events: BaseEvent[] = [start];
    const done: string[] = [];
    for (const entry of entries) {
      const interrupt = thread.open.find((i) => i.id === entry.interruptId)!;
      const call = thread.calls.find((c) => c.id === interrupt.toolCallId);
      if (entry.status === 'cancelled') {
        verdicts.push('cancelled');
        done.push(call ? `did not email ${call.args.to}` : 'filed nothing');
        continue;
      }
      const verdict = issuer && jwks ? verifyResumeEntry(entry, { jwks, issuer, threadId: input.threadId }) : { ok: true as const };
      if (!verdict.ok) {
        verdicts.push(verdict.reason);
        resumes.push({ threadId: input.threadId, runId: input.runId, entries, verdicts });
        return fail(`the approval does not verify: ${verdict.reason}`);
      }
      verdicts.push('verified');
      const payload = entry.payload as Record<string, unknown>;
      if (call) {
        const args = (payload?.editedArgs as Record<string, unknown> | undefined) ?? call.args;
        events.push({
          type: 'TOOL_CALL_RESULT',
          messageId: `result-${call.id}`,
          toolCallId: call.id,
          content: JSON.stringify({ sent: true, to: args.to, subject: args.subject }),
        } as BaseEvent);
        done.push(`emailed ${args.to}`);
      } else {
        done.push(`filed ${payload.quarter} ${payload.year} with revenue ${payload.revenue}`);
      }
    }
    resumes.push({ threadId: input.threadId, runId: input.runId, entries, verdicts });
    thread.open = [];
    events.push(...say(`msg-${input.runId}`, `Done: ${done.join('; ')}.`));
    events.push({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, outcome: { type: 'success' }, result: { done } } as BaseEvent);
    return events;
  }

  /** JSON text of arrays nested `depth` levels deep (JSON.stringify of such a value would overflow the stack). */
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  async function hostile(scenario: AgUiScenario, input: RunAgentInput, res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(encoder.encodeSSE({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId } as BaseEvent));
    if (scenario === 'hostile-json') res.write('data: {"type":"TEXT_MESSAGE_START",\n\n');
    if (scenario === 'hostile-big') res.write(`data: ${JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'x'.repeat(300 * 1024) })}\n\n`);
    if (scenario === 'hostile-unknown') res.write(encoder.encodeSSE({ type: 'SURPRISE', threadId: input.threadId } as unknown as BaseEvent));
    if (scenario === 'hostile-state-3000') res.write(`data: {"type":"STATE_SNAPSHOT","snapshot":{"levels":${nested(3000)}}}\n\n`);
    if (scenario === 'hostile-state-40000') res.write(`data: {"type":"STATE_SNAPSHOT","snapshot":{"levels":${nested(40_000)}}}\n\n`);
    if (scenario === 'hostile-delta-40000') {
      res.write(`data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/levels","value":${nested(40_000)}}]}\n\n`);
    }
    if (scenario === 'hostile-args-40000') {
      // The arguments arrive as text, in deltas: only their assembled text nests 40,000 deep.
      const call = { toolCallId: 'deep-call', parentMessageId: 'deep-message' };
      res.write(encoder.encodeSSE({ type: 'TOOL_CALL_START', ...call, toolCallName: 'deep' } as BaseEvent));
      for (const delta of ['['.repeat(40_000), ']'.repeat(40_000)])
        res.write(encoder.encodeSSE({ type: 'TOOL_CALL_ARGS', toolCallId: call.toolCallId, delta } as BaseEvent));
      res.write(encoder.encodeSSE({ type: 'TOOL_CALL_END', toolCallId: call.toolCallId } as BaseEvent));
    }
    if (scenario === 'hostile-comments') {
      // SSE comments (no event at all), three times the stream bound, written as the reader takes them.
      const comment = `: ${'k'.repeat(65_533)}\n`;
      let gone = false;
      res.once('close', () => (gone = !res.writableFinished));
      let written = 0;
      while (written < 3 * AGUI_LIMITS.streamMaxBytes && !gone) {
        written += comment.length;
        if (!res.write(comment)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          });
        }
      }
      floods.push({ written, closedEarly: gone });
      if (gone) return;
    }
    res.write(encoder.encodeSSE({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId } as BaseEvent));
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const scenario = (req.url ?? '').replace(/^\/+|\/+$/g, '') as AgUiScenario;
    if (req.method !== 'POST' || !AGUI_SCENARIOS.includes(scenario)) return void res.writeHead(404).end();
    if (failures > 0) {
      failures -= 1;
      return void res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
    }
    const body = await readJsonBody(req);
    const parsed = body.ok ? RunAgentInputSchema.safeParse(body.value) : null;
    if (!parsed?.success) return void res.writeHead(400, { 'content-type': 'text/plain' }).end('not a RunAgentInput');
    const input = parsed.data as RunAgentInput;
    inputs.push(input);
    if (scenario.startsWith('hostile')) return hostile(scenario, input, res);
    const replay = answered.get(`${input.threadId}:${input.runId}`);
    if (replay) return stream(res, replay);
    const thread = threads.get(input.threadId);
    let events: BaseEvent[];
    if (thread && thread.open.length > 0) {
      // AG-UI 1.0: pending interrupts block new input; only a resume answering them continues.
      events = input.resume?.length
        ? await resumeEvents(input, thread)
        : [
            { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId } as BaseEvent,
            { type: 'RUN_ERROR', message: 'the thread has open interrupts: resume them', code: 'INTERRUPTS_PENDING' } as BaseEvent,
          ];
    } else {
      const plan = firstRun(scenario as 'approval' | 'form' | 'multi', input.runId);
      threads.set(input.threadId, { scenario, open: plan.interrupts, calls: plan.toolCalls });
      events = [
        { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId } as BaseEvent,
        ...plan.events,
        { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, outcome: { type: 'interrupt', interrupts: plan.interrupts } } as BaseEvent,
      ];
    }
    answered.set(`${input.threadId}:${input.runId}`, events);
    stream(res, events);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String((e as Error).message));
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  return {
    url: (scenario) => `${base}/${scenario}`,
    floods,
    resumes,
    inputs,
    failNext(count) {
      failures = count;
    },
    trust(url, at) {
      issuer = url;
      jwksAt = at ?? null;
      jwks = null;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
