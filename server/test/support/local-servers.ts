import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';

// What the agent-network tests stand up on loopback in front of the fixture agent: servers on
// free ports, closed together; JSON answers that close their connection; a trap that counts
// connections; and A2A passed through to the fixture agent.

/** Listens on a free port of 127.0.0.1, keeps the server in `servers` (for closeAll) and returns the port. */
export async function listenLocal(servers: Server[], server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

/** Closes every server listenLocal kept. */
export async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
}

/** A local TCP server that only counts connections (and drops each): a connection means something got through. */
export async function connectionTrap(servers: Server[]): Promise<{ port: number; connections: number }> {
  const trap = { port: 0, connections: 0 };
  trap.port = await listenLocal(
    servers,
    createTcpServer((s) => {
      trap.connections += 1;
      s.destroy();
    }),
  );
  return trap;
}

/** The whole body of a request. */
export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A JSON answer that closes its connection, so each request is a new connection the policy judges. */
export function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers });
  res.end(body);
}

/** Passes an A2A POST (its body read already) on to `a2aUrl` with the headers A2A uses, and returns the answer. */
export async function passA2a(req: IncomingMessage, body: Buffer, a2aUrl: string): Promise<{ status: number; text: string }> {
  const upstream = await fetch(a2aUrl, {
    method: 'POST',
    headers: Object.fromEntries(
      ['content-type', 'accept', 'a2a-version', 'a2a-extensions'].flatMap((h) => (req.headers[h] ? [[h, String(req.headers[h])]] : [])),
    ),
    body: new Uint8Array(body),
  });
  return { status: upstream.status, text: await upstream.text() };
}
