import { createParser, type EventSourceMessage } from 'eventsource-parser';

// Reading a text/event-stream body (the SSE binding of SendStreamingMessage and SubscribeToTask,
// and AG-UI runs) with eventsource-parser: lines end with CRLF, LF or a lone CR, a leading byte
// order mark is dropped, an event ends with a blank line and its data: lines are joined with a
// line feed. The agent is untrusted, so each event and the stream as a whole are bounded here,
// once, for both: every byte read counts against the stream's bound (comments, framing, events
// without data included), so no part of a stream is read for free.

export interface SseReadOptions {
  /** UTF-8 bytes the data of one event may have (its data: lines joined, without the framing). */
  maxEventBytes: number;
  /** The error for an event over maxEventBytes. */
  tooLarge: () => Error;
  /** Bytes the whole body may have, as read: comments, framing and events without data count. */
  maxStreamBytes: number;
  /** The error for a body over maxStreamBytes. */
  streamTooLarge: () => Error;
  /** Events with data the stream may carry. */
  maxEvents: number;
  /** The error for the event after the first maxEvents. */
  tooManyEvents: () => Error;
  /** The error for a body that failed while being read (the connection dropped). */
  dropped: (err: unknown) => Error;
}

/**
 * Room for the framing of the event being buffered ("data: ", an event: or id: line) beyond its
 * data, so the parser's own bound never refuses an event whose data is within maxEventBytes.
 */
const FRAMING_CHARS = 1024;

/** Marks, in the queue of parsed events, where an event over the limit was met. */
const TOO_LARGE = Symbol('too large');
/** Marks, in the queue of parsed events, where the body went over maxStreamBytes. */
const STREAM_TOO_LARGE = Symbol('stream too large');

/**
 * Awaits `onData` with the data of each event, in order, as it arrives; events without data are
 * skipped. An event the agent did not end with a blank line before closing still counts. When
 * `onData` throws, the body is cancelled and the error thrown. An event over maxEventBytes is
 * never passed to `onData`: the events before it are, then `tooLarge()` is thrown. Likewise
 * the events within the first maxStreamBytes bytes of the body are passed, then
 * `streamTooLarge()` is thrown and nothing further is read; and an event after the first
 * maxEvents is not passed: `tooManyEvents()` is thrown.
 */
export async function readSseData(body: ReadableStream<Uint8Array>, onData: (data: string) => Promise<void>, opts: SseReadOptions): Promise<void> {
  const max = opts.maxEventBytes;
  const reader = body.getReader();
  // A TextDecoder drops a leading U+FEFF, also when its bytes arrive in two chunks.
  const decoder = new TextDecoder();
  const ready: (EventSourceMessage | typeof TOO_LARGE | typeof STREAM_TOO_LARGE)[] = [];
  let overflow = false;
  const refuse = () => {
    overflow = true;
    ready.push(TOO_LARGE);
  };
  const parser = createParser({
    // Bounds an event still incomplete at the end of a piece fed (UTF-8 never has fewer bytes than
    // UTF-16 code units, so the character count is a lower bound of the byte count).
    maxBufferSize: max + FRAMING_CHARS,
    // An event that is complete within one piece is not seen by that bound: it is measured here.
    onEvent: (event) => {
      if (overflow) return;
      if (event.data.length > max || Buffer.byteLength(event.data, 'utf8') > max) refuse();
      else ready.push(event);
    },
    // Unknown fields and invalid retry values are ignored, as the SSE rules say.
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded' && !overflow) refuse();
    },
  });
  // A chunk is fed in pieces of at most `max` bytes: however large one read is, the parser
  // checks its bound after each piece and reading stops at the first piece over it.
  const feedBytes = (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.length && !overflow; at += max) parser.feed(decoder.decode(bytes.subarray(at, at + max), { stream: true }));
  };
  // Only the bytes within maxStreamBytes are fed: the events they complete are delivered, then
  // the stream ends (an event cut by the bound is not delivered).
  let streamBytes = 0;
  const feedWithinStream = (bytes: Uint8Array) => {
    const room = opts.maxStreamBytes - streamBytes;
    streamBytes += bytes.length;
    if (bytes.length <= room) return feedBytes(bytes);
    feedBytes(bytes.subarray(0, room));
    if (!overflow) {
      overflow = true;
      ready.push(STREAM_TOO_LARGE);
    }
  };
  let events = 0;
  const deliver = async () => {
    while (ready.length > 0) {
      const event = ready.shift()!;
      if (event === TOO_LARGE) throw opts.tooLarge();
      if (event === STREAM_TOO_LARGE) throw opts.streamTooLarge();
      if (event.data === '') continue;
      events += 1;
      if (events > opts.maxEvents) throw opts.tooManyEvents();
      await onData(event.data);
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
      feedWithinStream(chunk.value);
      await deliver();
    }
    parser.feed(`${decoder.decode()}\n\n`);
    await deliver();
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    throw e;
  }
}
