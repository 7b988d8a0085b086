import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A loopback relay that adds `Authorization: Bearer <token>` to every request and passes
// everything else through unchanged (Host and Origin included, so DNS-rebinding checks still see
// what the caller sent; responses stream, SSE included): for a client that cannot send a header,
// such as the MCP conformance runner.

export async function bearerProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const upstream = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${token}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
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
