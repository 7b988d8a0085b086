import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

// The HTTP helpers every plain route shares (no imports, so any route module can use them).

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers })
    .end(JSON.stringify(body));
}

/** The token of an `Authorization: Bearer <token>` value (header or graphql-ws connection param). */
export function bearer(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^Bearer\s+(\S+)$/i.exec(value.trim());
  return m ? m[1]! : null;
}

export function bearerToken(req: IncomingMessage): string | null {
  return bearer(req.headers.authorization);
}

/**
 * The API token of a graphql-ws connection: connectionParams.authorization (or .Authorization,
 * as some clients spell it), else a Bearer Authorization header on the upgrade request. null
 * when none is offered (a console session then rides on the cookie); false when the
 * connectionParams offer one that is not "Bearer <token>".
 */
export function connectionToken(params: Readonly<Record<string, unknown>> | null | undefined, headers: IncomingHttpHeaders): string | null | false {
  const offered = params?.authorization !== undefined ? params.authorization : params?.Authorization;
  if (offered !== undefined) return bearer(offered) ?? false;
  return bearer(headers.authorization);
}

/** Reads a JSON body of at most maxBytes. */
export async function readJsonBody(
  req: IncomingMessage,
  maxBytes = 1024 * 1024,
): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
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
