import type { BaseEvent, RunAgentInput } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { readSseData } from '../../a2a/sse.js';
import { AGUI_LIMITS } from '../../limits.js';
import { nestedDeeperThan } from '../../lib/untrusted.js';
import { classifyConnectFailure, httpDetail, httpStatusReason, readBodyExcerpt, truncateDetail } from '../../net/failure.js';
import type { AgentFailureKind } from '../../net/failure.js';

// One AG-UI run over HTTP (AG-UI 1.0, HTTP+SSE transport): POST the RunAgentInput as JSON with
// Accept: text/event-stream, read the events (eventsource-parser, through a2a/sse.ts), and check
// each one against @ag-ui/core's schemas. The agent is untrusted: every event (its size and
// depth) and the stream (its events and every byte read) are bounded, and the first event that
// is not JSON, not an AG-UI event of a known type, or over a limit stops the run with a
// protocol error that names the event (its index) and never echoes its content.

export type AgUiEvent = BaseEvent & { type: string };

/** A failed exchange with an AG-UI agent: a classified message callers see, and the upstream detail for admins. */
export class AgUiError extends Error {
  readonly kind: AgentFailureKind;
  readonly detail: string | undefined;
  constructor(kind: AgentFailureKind, message: string, detail?: string) {
    super(message);
    this.name = 'AgUiError';
    this.kind = kind;
    this.detail = detail;
  }
}

export interface RunStream {
  /** The valid events, in order. */
  events: AgUiEvent[];
  /** Set when reading stopped at an invalid event, a limit or a dropped connection; the events before it are kept. */
  error: AgUiError | null;
}

export interface RunOptions {
  url: string;
  /** The guarded agent network (deps.network.fetch). */
  fetchImpl: typeof fetch;
  timeoutMs?: number;
}

/** The agent's host, for messages: never the path or the query. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the agent';
  }
}

/** Why an event is not a valid AG-UI event, without its content. */
function eventProblem(json: unknown): string | null {
  const r = EventSchemas.safeParse(json);
  if (r.success) return null;
  const issue = r.error.issues[0];
  const path = issue?.path?.join('.') || '(event)';
  if (issue?.code === 'invalid_union' && path === 'type') {
    const type = typeof (json as { type?: unknown })?.type === 'string' ? JSON.stringify(String((json as { type: string }).type).slice(0, 60)) : 'missing';
    return `its type ${type} is not an AG-UI event type`;
  }
  return `${path}: ${issue?.message ?? 'invalid'}`;
}

/**
 * POSTs one RunAgentInput and reads the run's events. Throws AgUiError when the agent did not
 * accept the run (connection failed, HTTP error, not an event stream): nothing was started.
 * Resolves with the events read and, when the stream broke or carried an invalid event, why.
 */
export async function runAgent(opts: RunOptions, input: RunAgentInput, onEvent?: (e: AgUiEvent) => void): Promise<RunStream> {
  const host = hostOf(opts.url);
  const what = `RunAgent to ${host}`;
  const timeoutMs = opts.timeoutMs ?? AGUI_LIMITS.runTimeoutMs;
  let res: Response;
  try {
    res = await opts.fetchImpl(opts.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(input),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const f = classifyConnectFailure(err, timeoutMs);
    throw new AgUiError(f.kind, `${what} failed: ${f.reason}`, f.detail);
  }
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok) {
    const body = await readBodyExcerpt(res);
    throw new AgUiError('http_status', `${what} answered ${httpStatusReason(res.status)}`, httpDetail(res, opts.url, body));
  }
  if (!type.toLowerCase().startsWith('text/event-stream')) {
    await res.body?.cancel().catch(() => undefined);
    throw new AgUiError('invalid_answer', `${what} did not answer with text/event-stream`, truncateDetail(`content-type: ${type}`));
  }
  const events: AgUiEvent[] = [];
  const protocol = (message: string) => new AgUiError('invalid_answer', `${what}: event ${events.length + 1} ${message}`);
  if (!res.body) return { events, error: new AgUiError('invalid_answer', `${what}: the answer has no body`) };
  try {
    await readSseData(
      res.body,
      async (data) => {
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          throw protocol('is not JSON');
        }
        // Before the schemas or anything else walks it (iteratively: a value 40,000 levels deep
        // fits in one event and would overflow any recursive walk).
        if (nestedDeeperThan(json, AGUI_LIMITS.eventDepthMax)) throw protocol(`is nested more than ${AGUI_LIMITS.eventDepthMax} levels deep`);
        const problem = eventProblem(json);
        if (problem) throw protocol(`is not a valid AG-UI event: ${problem}`);
        const event = json as AgUiEvent;
        events.push(event);
        onEvent?.(event);
      },
      {
        maxEventBytes: AGUI_LIMITS.eventMaxBytes,
        tooLarge: () => protocol(`is larger than ${AGUI_LIMITS.eventMaxBytes} bytes`),
        maxStreamBytes: AGUI_LIMITS.streamMaxBytes,
        streamTooLarge: () => new AgUiError('invalid_answer', `${what}: the stream is larger than ${AGUI_LIMITS.streamMaxBytes} bytes`),
        maxEvents: AGUI_LIMITS.eventsMax,
        tooManyEvents: () => new AgUiError('invalid_answer', `${what}: the stream has more than ${AGUI_LIMITS.eventsMax} events`),
        dropped: (err) => {
          const f = classifyConnectFailure(err, timeoutMs);
          return new AgUiError(f.kind, `${what}: the stream broke after ${events.length} events (${f.reason})`, f.detail);
        },
      },
    );
  } catch (e) {
    if (e instanceof AgUiError) return { events, error: e };
    throw e;
  }
  return { events, error: null };
}
