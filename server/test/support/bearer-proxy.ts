import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// Loopback HTTP relays for the MCP tests. `loopbackRelay` passes everything through unchanged
// (Host and Origin included, so DNS-rebinding checks still see what the caller sent; responses
// stream, SSE included), with headers of its own added, and can end a response right after its
// headers (as a proxy in between closes an idle stream). `bearerProxy` adds
// `Authorization: Bearer <token>` to every request: for a client that cannot send a header, such
// as the MCP conformance runner.

export interface Relay {
  url: string;
  close(): Promise<void>;
}

export async function loopbackRelay(
  target: string,
  opts: { headers?: Record<string, string>; endAfterHeaders?: (req: IncomingMessage) => boolean } = {},
): Promise<Relay> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const cut = opts.endAfterHeaders?.(req) ?? false;
    const upstream = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, ...opts.headers } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (cut) {
          res.end();
          upstream.destroy();
        } else answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function bearerProxy(target: string, token: string): Promise<Relay> {
  return loopbackRelay(target, { headers: { authorization: `Bearer ${token}` } });
}
