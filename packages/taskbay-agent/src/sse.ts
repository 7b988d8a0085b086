import { apiError, type GqlError, graphqlUrl, headers, type TaskbayConnection } from './connection.js';
import { TaskbayAgentError } from './errors.js';

// A GraphQL subscription over Server-Sent Events, as graphql-yoga serves it: POST /graphql with
// `accept: text/event-stream`; each result is an `event: next` with the result as `data`, and
// `event: complete` ends the stream (https://the-guild.dev/graphql/yoga-server/docs/features/subscriptions).

/** One event of an event stream (the WHATWG rules: fields per line, a blank line dispatches). */
export interface SseEvent {
  event: string;
  data: string;
}

/** At most this much of one event is buffered; a longer one ends the stream. */
const MAX_EVENT_CHARS = 1 << 20;

/** The events of a response body, as they arrive. */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const m = /\r\n|\r|\n/.exec(buffer);
        // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
        if (!m || (m[0] === '\r' && m.index === buffer.length - 1 && !done)) break;
        const line = buffer.slice(0, m.index);
        buffer = buffer.slice(m.index + m[0].length);
        if (line === '') {
          if (data.length) yield { event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          size = 0;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        size += value.length;
        if (size > MAX_EVENT_CHARS) throw new TaskbayAgentError('NETWORK_ERROR', `an event of the stream is over ${MAX_EVENT_CHARS} characters`);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (buffer.length > MAX_EVENT_CHARS) throw new TaskbayAgentError('NETWORK_ERROR', `a line of the stream is over ${MAX_EVENT_CHARS} characters`);
      if (done) return;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * Opens a subscription; resolves once Taskbay answered with a stream (graphql-yoga has run the
 * subscription's resolver by then, so events from here on reach it), with its results (a refused
 * subscription's are its errors). Throws a TaskbayApiError when Taskbay answers GraphQL errors
 * as JSON, and NETWORK_ERROR when it answers no stream at all.
 */
export async function subscribe(
  conn: TaskbayConnection,
  query: string,
  variables: Record<string, unknown>,
  signal: AbortSignal,
): Promise<AsyncGenerator<{ data?: unknown; errors?: GqlError[] }>> {
  const res = await (conn.fetch ?? fetch)(graphqlUrl(conn.url), {
    method: 'POST',
    headers: headers(conn, 'text/event-stream'),
    body: JSON.stringify({ query, variables }),
    signal,
  });
  const type = res.headers.get('content-type') ?? '';
  // A refusal comes as a stream too (graphql-yoga answers HTTP 400 with the errors as a `next`
  // event): its events are read like any others, so the caller sees the GraphQL errors.
  if (!type.startsWith('text/event-stream') || !res.body) {
    const text = await res.text().catch(() => '');
    let errors: GqlError[] | undefined;
    try {
      errors = (JSON.parse(text) as { errors?: GqlError[] }).errors;
    } catch {
      // Not GraphQL.
    }
    if (errors?.length) throw apiError(errors, res.status);
    throw new TaskbayAgentError('NETWORK_ERROR', `Taskbay answered the subscription with HTTP ${res.status} ${type || '(no content type)'}`);
  }
  const body = res.body;
  return (async function* results() {
    for await (const e of sseEvents(body)) {
      if (e.event === 'complete') return;
      if (e.event !== 'next' && e.event !== 'message') continue;
      let result: { data?: unknown; errors?: GqlError[] };
      try {
        result = JSON.parse(e.data);
      } catch {
        throw new TaskbayAgentError('NETWORK_ERROR', 'an event of the subscription is not JSON');
      }
      yield result;
    }
  })();
}
