import { createParser, type EventSourceMessage } from 'eventsource-parser';

// Reading a text/event-stream body (the SSE binding of SendStreamingMessage and SubscribeToTask)
// with eventsource-parser: lines end with CRLF, LF or a lone CR, a leading byte order mark is
// dropped, an event ends with a blank line and its data: lines are joined with a line feed.

export interface SseReadOptions {
  /** Characters one event may buffer before it is complete. */
  maxEventChars: number;
  /** The error for an event over maxEventChars. */
  tooLarge: () => Error;
  /** The error for a body that failed while being read (the connection dropped). */
  dropped: (err: unknown) => Error;
}

/**
 * Awaits `onData` with the data of each event, in order, as it arrives; events without data are
 * skipped. An event the agent did not end with a blank line before closing still counts. When
 * `onData` throws, the body is cancelled and the error thrown.
 */
export async function readSseData(body: ReadableStream<Uint8Array>, onData: (data: string) => Promise<void>, opts: SseReadOptions): Promise<void> {
  const reader = body.getReader();
  // A TextDecoder drops a leading U+FEFF, also when its bytes arrive in two chunks.
  const decoder = new TextDecoder();
  const ready: EventSourceMessage[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: opts.maxEventChars,
    onEvent: (event) => ready.push(event),
    // Unknown fields and invalid retry values are ignored, as the SSE rules say.
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded') overflow = true;
    },
  });
  const deliver = async () => {
    if (overflow) throw opts.tooLarge();
    while (ready.length > 0) {
      const { data } = ready.shift()!;
      if (data !== '') await onData(data);
    }
  };
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw opts.dropped(err);
      }
      if (chunk.done) break;
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      await deliver();
    }
    parser.feed(`${decoder.decode()}\n\n`);
    await deliver();
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    throw e;
  }
}
