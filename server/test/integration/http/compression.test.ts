import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESS_MIN_BYTES } from '../../../src/http/compression.js';
import { startTestInstance, type TestInstance } from '../../support/harness.js';

// Issue 11: GraphQL responses compressed when large (http/compression.ts). Real HTTP on
// loopback with node:http, which never decompresses on its own, so the bytes on the wire are seen.

let t: TestInstance;

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function post(body: unknown, headers: Record<string, string>, opts: { firstChunkOnly?: boolean } = {}): Promise<Raw> {
  const url = new URL(`${t.instance.url}/graphql`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}`, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const done = () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (opts.firstChunkOnly) {
            done();
            req.destroy();
          }
        });
        res.on('end', done);
        res.on('error', reject);
      },
    );
    req.on('error', (e) => (opts.firstChunkOnly ? undefined : reject(e)));
    req.end(JSON.stringify(body));
  });
}

// The schema's types and their fields: tens of kilobytes of JSON.
const LARGE = { query: '{ __schema { types { name description fields { name description } } } }' };
const SMALL = { query: '{ __typename }' };

beforeAll(async () => {
  t = await startTestInstance({ worker: false });
});

afterAll(async () => {
  await t?.stop();
});

describe('GraphQL responses over HTTP', () => {
  it('a large answer comes brotli-compressed for a client that accepts br, with Vary, and decodes to the same JSON', async () => {
    const plain = await post(LARGE, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(10 * COMPRESS_MIN_BYTES);
    expect(JSON.parse(plain.body.toString()).data.__schema.types.length).toBeGreaterThan(20);

    const br = await post(LARGE, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(plain.body.length / 4);
    expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(JSON.parse(plain.body.toString()));
  });

  it('gzip when that is what the client prefers (weights count); nothing when it accepts neither', async () => {
    const gz = await post(LARGE, { 'accept-encoding': 'br;q=0.5, gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    const plain = await post(LARGE, {});
    expect(JSON.parse(gunzipSync(gz.body).toString())).toEqual(JSON.parse(plain.body.toString()));

    for (const accept of ['identity', 'br;q=0, gzip;q=0', 'deflate']) {
      const none = await post(LARGE, { 'accept-encoding': accept });
      expect(none.headers['content-encoding'], accept).toBeUndefined();
      expect(none.headers.vary).toMatch(/accept-encoding/i);
      expect(JSON.parse(none.body.toString()).data.__schema).toBeTruthy();
    }
  });

  it('a small answer is sent as it is (below the threshold), still with Vary', async () => {
    const small = await post(SMALL, { 'accept-encoding': 'br, gzip' });
    expect(small.body.length).toBeLessThan(COMPRESS_MIN_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toMatch(/accept-encoding/i);
    expect(JSON.parse(small.body.toString())).toEqual({ data: { __typename: 'Query' } });
  });

  it('a subscription over SSE is not compressed (events leave as they happen)', async () => {
    const sse = await post(
      { query: 'subscription { approvalRequested { id } }' },
      { accept: 'text/event-stream', 'accept-encoding': 'br, gzip' },
      { firstChunkOnly: true },
    );
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toMatch(/text\/event-stream/);
    // Yoga marks its event streams 'none' so that proxies do not compress them either.
    expect([undefined, 'none']).toContain(sse.headers['content-encoding']);
    expect(sse.body.toString()).toMatch(/^:|^event|^data/m);
  });
});
