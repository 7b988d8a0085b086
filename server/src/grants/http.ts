import type { IncomingMessage, ServerResponse } from 'node:http';

// Small HTTP helpers for the grants and contract routes. Kept here (not imported from
// http/routes.ts) so http/routes.ts can list these routes without an import cycle.

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

export function bearerToken(req: IncomingMessage): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec((req.headers.authorization ?? '').trim());
  return m ? m[1]! : null;
}

export async function readJson(req: IncomingMessage, maxBytes: number): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return { ok: false, error: `body larger than ${maxBytes} bytes` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, error: 'body is not JSON' };
  }
}
