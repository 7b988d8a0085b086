import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';
import { negotiateEncoding } from './encoding.js';

// GraphQL responses over HTTP, compressed when large (docs/PERFORMANCE.md): brotli or gzip as the request's
// Accept-Encoding prefers (http/encoding.ts, as for the console's files), only for complete JSON
// bodies of at least COMPRESS_MIN_BYTES. Event streams (SSE subscriptions, incremental delivery)
// and WebSocket traffic are left alone: a compressor holds back what it has not filled a block
// with, and a live event must leave at once. Compression runs on libuv's thread pool (zlib's
// async API), not on the event loop; brotli at quality 5 compresses a page of the inbox about
// as well as gzip -9 in a fraction of brotli's default (11) time.
//
// Whatwg-node's own useContentEncoding was not used: it compresses every body including event
// streams, has no size threshold, sets no Vary, reads Accept-Encoding without weights, and also
// inflates compressed request bodies (a way around the request size limit).

export const COMPRESS_MIN_BYTES = 1024;

const JSON_TYPES = /^application\/(graphql-response\+)?json\b/i;

const compressors = {
  br: promisify(brotliCompress),
  gzip: promisify(gzip),
};
const OPTIONS = {
  br: { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } },
  gzip: { level: 6 },
};

function varyOn(headers: Headers) {
  const vary = headers.get('vary');
  if (!vary) headers.set('vary', 'Accept-Encoding');
  else if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(vary)) headers.set('vary', `${vary}, Accept-Encoding`);
}

export function useResponseCompression(minBytes = COMPRESS_MIN_BYTES): Plugin {
  return {
    async onResponse({ request, response, setResponse, fetchAPI }) {
      const type = response.headers.get('content-type');
      if (!type || !JSON_TYPES.test(type) || !response.body || response.headers.has('content-encoding')) return;
      // Every JSON answer varies with Accept-Encoding, compressed or not (a cache must not hand a
      // small uncompressed one and a large compressed one out alike).
      varyOn(response.headers);
      const length = Number(response.headers.get('content-length'));
      if (!Number.isFinite(length) || length < minBytes) return;
      const coding = negotiateEncoding(request.headers.get('accept-encoding') ?? undefined, ['br', 'gzip']);
      if (!coding) return;
      const body = Buffer.from(await response.arrayBuffer());
      const compressed = await compressors[coding](body, OPTIONS[coding]);
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-encoding', coding);
      headers.set('content-length', String(compressed.length));
      setResponse(new fetchAPI.Response(compressed, { status: response.status, statusText: response.statusText, headers }));
    },
  };
}
