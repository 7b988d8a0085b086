import { describe, expect, it } from 'vitest';
import { A2AClient, A2AError, A2A_RESPONSE_MAX_BYTES, parseStreamEvent } from '../../src/a2a/client.js';
import { readSseData } from '../../src/a2a/sse.js';
import type { StreamEvent } from '../../src/a2a/types.js';
import { parseA2uiAction, parseA2uiEnvelopes } from '../../src/forms/a2ui.js';
import { A2UI_LIMITS } from '../../src/limits.js';
import { a2uiSurface } from '../../src/fixture-agent/content.js';

// The SSE binding of SendStreamingMessage / SubscribeToTask ("one JSON-RPC response per data:
// line", seed 003) and the A2UI parsers, without a network.

const task = { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } };
const update = {
  taskId: 't1',
  contextId: 'c1',
  status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } },
};

function sseFetch(
  chunks: (string | Uint8Array)[],
  opts: { contentType?: string; status?: number; breakAfter?: number } = {},
): { fetchImpl: typeof fetch; bodies: any[] } {
  const bodies: any[] = [];
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    const id = bodies.at(-1).id;
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (opts.breakAfter !== undefined && i === opts.breakAfter) {
          controller.error(Object.assign(new TypeError('terminated'), { cause: { code: 'ECONNRESET' } }));
          return;
        }
        if (i >= chunks.length) return controller.close();
        const chunk = chunks[i++]!;
        controller.enqueue(typeof chunk === 'string' ? new TextEncoder().encode(chunk.replaceAll('$ID', JSON.stringify(id))) : chunk);
      },
    });
    return new Response(stream, { status: opts.status ?? 200, headers: { 'content-type': opts.contentType ?? 'text/event-stream' } });
  }) as unknown as typeof fetch;
  return { fetchImpl, bodies };
}
const rpc = (result: unknown) => `{"jsonrpc":"2.0","id":$ID,"result":${JSON.stringify(result)}}`;

describe('SendStreamingMessage over SSE', () => {
  it('each data: line is one JSON-RPC response; events split across chunks, CRLF and comments are handled in order', async () => {
    const a = `data: ${rpc({ task })}\n\n`;
    const b = `: keep-alive\r\ndata: ${rpc({ statusUpdate: update })}\r\n\r\n`;
    const { fetchImpl, bodies } = sseFetch([a.slice(0, 10), a.slice(10) + b.slice(0, 30), b.slice(30)]);
    const client = new A2AClient({ url: 'http://agent.test/a2a', extensions: ['urn:x'], fetchImpl });
    const seen: StreamEvent[] = [];
    const n = await client.sendStreamingMessage({ message: { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'x' }] } }, async (e) => {
      seen.push(e);
    });
    expect(n).toBe(2);
    expect(bodies[0].method).toBe('SendStreamingMessage');
    expect(seen[0]).toEqual({ task });
    expect(seen[1]).toEqual({ statusUpdate: update });
  });

  // The SSE line rules (WHATWG HTML, "Parsing an event stream"): a line ends with CRLF, LF or a
  // lone CR; a leading U+FEFF is dropped; an event ends with a blank line.
  const twoEvents = async (chunks: (string | Uint8Array)[]) => {
    const { fetchImpl } = sseFetch(chunks);
    const seen: StreamEvent[] = [];
    const n = await new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl }).subscribeToTask({ id: 't1' }, async (e) => {
      seen.push(e);
    });
    return { n, seen };
  };

  it('lone CR line endings end lines and events', async () => {
    const { n, seen } = await twoEvents([`data: ${rpc({ task })}\r\r: comment\rdata: ${rpc({ statusUpdate: update })}\r\r`]);
    expect(n).toBe(2);
    expect(seen).toEqual([{ task }, { statusUpdate: update }]);
  });

  it('CRLF, LF and CR mixed, with the blank line split across chunks and a CRLF cut between CR and LF', async () => {
    const a = `data: ${rpc({ task })}\r\n\r`;
    const b = `event: message\ndata: ${rpc({ statusUpdate: update })}\r\n\n`;
    const { n, seen } = await twoEvents([a.slice(0, -2), a.slice(-2), b.slice(0, -3), b.slice(-3, -2), b.slice(-2)]);
    expect(n).toBe(2);
    expect(seen).toEqual([{ task }, { statusUpdate: update }]);
  });

  it('a byte order mark before the first line is dropped, also when its bytes arrive in two chunks', async () => {
    const body = `data: ${rpc({ task })}\n\ndata: ${rpc({ statusUpdate: update })}\n\n`;
    expect((await twoEvents([`\uFEFF${body}`])).seen).toEqual([{ task }, { statusUpdate: update }]);
    expect((await twoEvents([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf), body])).seen).toEqual([{ task }, { statusUpdate: update }]);
  });

  it('a data: field split across chunks, inside its name, its value and a multi-byte character, and over two data: lines', async () => {
    const json = rpc({
      statusUpdate: { ...update, status: { ...update.status, message: { ...update.status.message, parts: [{ text: 'h\u00e9 \u{1F600}' }] } } },
    });
    const bytes = new TextEncoder().encode(`da`);
    // Two data: lines are joined with a line feed: cut the JSON between two members.
    const cut = json.indexOf('"id"');
    const rest = new TextEncoder().encode(`ta: ${json.slice(0, cut)}\ndata:${json.slice(cut)}\n\n`.replaceAll('$ID', 'null'));
    const emoji = Buffer.from(rest).indexOf(0xf0);
    const { fetchImpl } = sseFetch([bytes, rest.subarray(0, emoji + 2), rest.subarray(emoji + 2)]);
    const seen: StreamEvent[] = [];
    // The id is null here (the chunks are bytes): an event answers no request id, so it is not checked.
    await new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl }).subscribeToTask({ id: 't1' }, async (e) => {
      seen.push(e);
    });
    expect(seen).toHaveLength(1);
    expect('statusUpdate' in seen[0]! && seen[0].statusUpdate.status.message!.parts).toEqual([{ text: 'h\u00e9 \u{1F600}' }]);
  });

  it('an event larger than A2A_RESPONSE_MAX_BYTES is refused without waiting for its end', async () => {
    const { fetchImpl } = sseFetch(['data: "', 'x'.repeat(A2A_RESPONSE_MAX_BYTES), 'never read']);
    await expect(new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl }).subscribeToTask({ id: 'x' }, async () => {})).rejects.toMatchObject({
      kind: 'invalid_answer',
      message: expect.stringMatching(/larger than/),
    });
  });

  /** The data of one status-update event, its text padded with two-byte characters to exactly `bytes` UTF-8 bytes. */
  const dataOfBytes = (bytes: number) => {
    const withText = (text: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        result: { statusUpdate: { ...update, status: { ...update.status, message: { ...update.status.message, parts: [{ text }] } } } },
      });
    const rest = bytes - Buffer.byteLength(withText(''));
    const data = withText('\u00e9'.repeat(Math.floor(rest / 2)) + 'x'.repeat(rest % 2));
    expect(Buffer.byteLength(data)).toBe(bytes);
    return data;
  };
  const textsSeen = async (chunks: string[]) => {
    const { fetchImpl } = sseFetch(chunks);
    // What onEvent received: the length of a status update's text, -1 for a task.
    const texts: number[] = [];
    const outcome = await new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl })
      .subscribeToTask({ id: 't1' }, async (e) => {
        texts.push('statusUpdate' in e ? (e.statusUpdate.status.message?.parts[0]?.text?.length ?? 0) : -1);
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    return { texts, outcome };
  };

  it('an event of exactly A2A_RESPONSE_MAX_BYTES bytes is accepted, in one chunk or split across chunks', async () => {
    const event = `data: ${dataOfBytes(A2A_RESPONSE_MAX_BYTES)}\n\n`;
    const whole = await textsSeen([event]);
    expect(whole.outcome).toBeNull();
    expect(whole.texts).toHaveLength(1);
    expect(whole.texts[0]).toBeGreaterThan(A2A_RESPONSE_MAX_BYTES / 2 - 1000);
    const cut = Math.floor(event.length / 3);
    const split = await textsSeen([event.slice(0, cut), event.slice(cut, 2 * cut), event.slice(2 * cut)]);
    expect(split).toEqual(whole);
  });

  it('an event one byte over A2A_RESPONSE_MAX_BYTES that arrives in one chunk is refused: the event before it is delivered, it and those after are not', async () => {
    const before = `data: ${JSON.stringify({ jsonrpc: '2.0', id: null, result: { task } })}\n\n`;
    const big = `data: ${dataOfBytes(A2A_RESPONSE_MAX_BYTES + 1)}\n\n`;
    const { texts, outcome } = await textsSeen([before + big + before]);
    expect(outcome).toBeInstanceOf(A2AError);
    expect(outcome).toMatchObject({ kind: 'invalid_answer', message: expect.stringContaining(`larger than ${A2A_RESPONSE_MAX_BYTES} bytes`) });
    expect(texts).toEqual([-1]);
  });

  it('a JSON-RPC error event or an agent answering JSON instead of a stream throws rpc errors', async () => {
    const err = sseFetch([`data: {"jsonrpc":"2.0","id":$ID,"error":{"code":-32001,"message":"Task not found"}}\n\n`]);
    await expect(
      new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl: err.fetchImpl }).subscribeToTask({ id: 'x' }, async () => {}),
    ).rejects.toMatchObject({
      kind: 'rpc',
      rpcCode: -32001,
    });
    const json = sseFetch([`{"jsonrpc":"2.0","id":$ID,"error":{"code":-32004,"message":"no streaming"}}`], { contentType: 'application/json' });
    await expect(
      new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl: json.fetchImpl }).subscribeToTask({ id: 'x' }, async () => {}),
    ).rejects.toMatchObject({
      kind: 'rpc',
      rpcCode: -32004,
    });
  });

  it('a dropped connection throws an unreachable error that says how many events arrived', async () => {
    const { fetchImpl } = sseFetch([`data: ${rpc({ task })}\n\n`, `data: ${rpc({ statusUpdate: update })}\n\n`], { breakAfter: 1 });
    const seen: StreamEvent[] = [];
    const e = await new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl })
      .sendStreamingMessage({ message: { messageId: 'u', role: 'ROLE_USER', parts: [] } }, async (ev) => {
        seen.push(ev);
      })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(A2AError);
    expect((e as A2AError).kind).toBe('unreachable');
    expect((e as A2AError & { eventsSeen: number }).eventsSeen).toBe(1);
    expect(seen).toHaveLength(1);
  });

  it('an invalid event (two members, unknown state, not JSON) is refused', async () => {
    expect(() => parseStreamEvent({ task, statusUpdate: update })).toThrow(/exactly one/);
    expect(() => parseStreamEvent({ statusUpdate: { ...update, status: { state: 'DONE' } } })).toThrow(/state/);
    expect(() => parseStreamEvent({ statusUpdate: { ...update, taskId: '' } })).toThrow(/taskId/);
    expect(parseStreamEvent({ artifactUpdate: { taskId: 't', contextId: 'c', artifact: { parts: [] } } })).toEqual({
      artifactUpdate: { taskId: 't', contextId: 'c', artifact: { parts: [] } },
    });
    const { fetchImpl } = sseFetch(['data: {not json\n\n']);
    await expect(new A2AClient({ url: 'http://a.test/', extensions: [], fetchImpl }).subscribeToTask({ id: 'x' }, async () => {})).rejects.toMatchObject({
      kind: 'invalid_answer',
    });
  });
});

describe('readSseData: the size of one event, in UTF-8 bytes of its data', () => {
  const bodyOf = (chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift();
        if (chunk === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(chunk));
      },
    });
  const read = async (chunks: string[], maxEventBytes: number, stream: { maxStreamBytes?: number; maxEvents?: number } = {}) => {
    const seen: string[] = [];
    const outcome = await readSseData(
      bodyOf(chunks),
      async (data) => {
        seen.push(data);
      },
      {
        maxEventBytes,
        tooLarge: () => new Error('too large'),
        maxStreamBytes: stream.maxStreamBytes ?? 1024 * 1024,
        streamTooLarge: () => new Error('stream too large'),
        maxEvents: stream.maxEvents ?? 1000,
        tooManyEvents: () => new Error('too many events'),
        dropped: () => new Error('dropped'),
      },
    ).then(
      () => 'done',
      (e: Error) => e.message,
    );
    return { seen, outcome };
  };

  it('counts bytes, not characters: eight two-byte characters fill 16 bytes, nine are over', async () => {
    expect(await read([`data: ${'\u00e9'.repeat(8)}\n\n`], 16)).toEqual({ seen: ['\u00e9'.repeat(8)], outcome: 'done' });
    expect(await read([`data: a\n\ndata: ${'\u00e9'.repeat(9)}\n\ndata: b\n\n`], 16)).toEqual({ seen: ['a'], outcome: 'too large' });
  });

  it('two data: lines count with the line feed that joins them; an event not ended before the close is measured too', async () => {
    expect(await read([`data: ${'x'.repeat(8)}\ndata: ${'y'.repeat(7)}\n\n`], 16)).toEqual({ seen: [`${'x'.repeat(8)}\n${'y'.repeat(7)}`], outcome: 'done' });
    expect(await read([`data: ${'x'.repeat(8)}\ndata: ${'y'.repeat(8)}\n\n`], 16)).toMatchObject({ seen: [], outcome: 'too large' });
    expect(await read([`data: ${'x'.repeat(17)}`], 16)).toMatchObject({ seen: [], outcome: 'too large' });
  });

  it('the framing does not count: an event of exactly the limit is accepted when its blank line comes in the next read', async () => {
    expect(await read([`event: message\nid: 7\ndata: ${'x'.repeat(16)}`, '\n\n'], 16)).toEqual({ seen: ['x'.repeat(16)], outcome: 'done' });
  });

  it('one read far larger than the limit, never ending its event, is refused with tooLarge (the parser is fed no further)', async () => {
    expect(await read([`data: ${'x'.repeat(64 * 1024)}`, 'never read\n\n'], 16)).toEqual({ seen: [], outcome: 'too large' });
  });
});

describe('readSseData: the stream as a whole, every byte read', () => {
  const bodyOf = (chunks: string[], read: number[]) =>
    new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift();
        if (chunk === undefined) return controller.close();
        read.push(chunk.length);
        controller.enqueue(new TextEncoder().encode(chunk));
      },
    });
  const read = async (chunks: string[], limits: { maxStreamBytes: number; maxEvents: number }) => {
    const seen: string[] = [];
    const pulled: number[] = [];
    const outcome = await readSseData(
      bodyOf(chunks, pulled),
      async (data) => {
        seen.push(data);
      },
      {
        maxEventBytes: 1024,
        tooLarge: () => new Error('too large'),
        ...limits,
        streamTooLarge: () => new Error('stream too large'),
        tooManyEvents: () => new Error('too many events'),
        dropped: () => new Error('dropped'),
      },
    ).then(
      () => 'done',
      (e: Error) => e.message,
    );
    return { seen, outcome, pulled: pulled.length };
  };

  it('comments count: a stream of nothing but comments ends at the byte bound, and nothing after the bound is read', async () => {
    const comment = `: ${'k'.repeat(98)}\n`; // 100 bytes
    const r = await read([`data: a\n\n`, ...Array.from({ length: 50 }, () => comment), 'data: b\n\n'], { maxStreamBytes: 1000, maxEvents: 10 });
    expect(r).toMatchObject({ seen: ['a'], outcome: 'stream too large' });
    // The 11th chunk crossed the bound; a ReadableStream asks for one chunk ahead, no more.
    expect(r.pulled).toBeLessThanOrEqual(12);
  });

  it('events without data and the framing count too; an event cut by the bound is not delivered', async () => {
    expect(await read(['\n\n'.repeat(400), 'data: late\n\n'], { maxStreamBytes: 804, maxEvents: 10 })).toMatchObject({ seen: [], outcome: 'stream too large' });
    // The first 12 bytes hold "data: a\n\n" whole and "da" of the next event.
    expect(await read(['data: a\n\ndata: b\n\n'], { maxStreamBytes: 12, maxEvents: 10 })).toMatchObject({ seen: ['a'], outcome: 'stream too large' });
    expect(await read(['data: a\n\ndata: b\n\n'], { maxStreamBytes: 18, maxEvents: 10 })).toMatchObject({ seen: ['a', 'b'], outcome: 'done' });
  });

  it('the event after the first maxEvents is not delivered', async () => {
    expect(await read(['data: 1\n\ndata: 2\n\n: x\n\ndata: 3\n\n'], { maxStreamBytes: 1000, maxEvents: 2 })).toMatchObject({
      seen: ['1', '2'],
      outcome: 'too many events',
    });
    expect(await read(['data: 1\n\ndata: 2\n\n'], { maxStreamBytes: 1000, maxEvents: 2 })).toMatchObject({ seen: ['1', '2'], outcome: 'done' });
  });
});

describe('A2UI parsers', () => {
  it('the fixture surface is a valid envelope array; anything else is ordinary data', () => {
    expect(parseA2uiEnvelopes(a2uiSurface())).toEqual(a2uiSurface());
    expect(parseA2uiEnvelopes([])).toBeNull();
    expect(parseA2uiEnvelopes({ createSurface: { surfaceId: 's' } })).toBeNull();
    expect(parseA2uiEnvelopes([{ version: 'v0.8', createSurface: { surfaceId: 's' } }])).toBeNull();
    expect(parseA2uiEnvelopes([{ version: 'v0.9', createSurface: { surfaceId: 's' }, deleteSurface: { surfaceId: 's' } }])).toBeNull();
    expect(parseA2uiEnvelopes([{ version: 'v0.9', updateComponents: { components: [] } }])).toBeNull();
    const one = { version: 'v0.9', deleteSurface: { surfaceId: 's' } };
    expect(parseA2uiEnvelopes(Array(A2UI_LIMITS.envelopesMax).fill(one))).toHaveLength(100);
    expect(parseA2uiEnvelopes(Array(A2UI_LIMITS.envelopesMax + 1).fill(one))).toBeNull();
  });

  it('an action keeps name, surfaceId, sourceComponentId, timestamp and context; drops the rest', () => {
    const r = parseA2uiAction({ name: 'go', surfaceId: 's', sourceComponentId: 'b', timestamp: '2026-01-01T00:00:00Z', context: { a: 1 }, evil: true });
    expect(r).toEqual({ ok: true, action: { name: 'go', surfaceId: 's', sourceComponentId: 'b', timestamp: '2026-01-01T00:00:00Z', context: { a: 1 } } });
    expect(parseA2uiAction({ surfaceId: 's' }).ok).toBe(false);
    expect(parseA2uiAction({ name: 'go' }).ok).toBe(false);
    expect(parseA2uiAction({ name: 'go', surfaceId: 's', context: [1] }).ok).toBe(false);
    expect(parseA2uiAction({ name: 'go', surfaceId: 's', context: { big: 'x'.repeat(A2UI_LIMITS.actionBytesMax) } }).ok).toBe(false);
    const proto = parseA2uiAction(JSON.parse('{"name":"go","surfaceId":"s","context":{"__proto__":{"polluted":1},"ok":2}}'));
    expect(proto.ok && proto.action.context).toEqual({ ok: 2 });
  });

  it('names count characters (code points), not UTF-16 units: 200 emoji fit, 201 do not', () => {
    const emoji = '\u{1F600}'; // one code point, two UTF-16 units
    const fits = emoji.repeat(A2UI_LIMITS.nameMax);
    const over = emoji.repeat(A2UI_LIMITS.nameMax + 1);
    expect(fits.length).toBe(2 * A2UI_LIMITS.nameMax);
    expect(parseA2uiAction({ name: fits, surfaceId: fits, sourceComponentId: fits }).ok).toBe(true);
    expect(parseA2uiAction({ name: over, surfaceId: 's' })).toEqual({ ok: false, error: `action.name must be 1..${A2UI_LIMITS.nameMax} characters` });
    expect(parseA2uiAction({ name: 'go', surfaceId: over }).ok).toBe(false);
    expect(parseA2uiAction({ name: 'go', surfaceId: 's', sourceComponentId: over }).ok).toBe(false);
  });
});
