import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

// The HTTP helpers every plain route shares (no imports, so any route module can use them).

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
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

/**
 * Reads a JSON body of at most maxBytes. A larger body (by its Content-Length, before reading,
 * or while reading a chunked one) is refused with tooLarge and reading stops there: the request
 * is paused, not drained, so the caller answers and closes the connection.
 */
export async function readJsonBody(
  req: IncomingMessage,
  maxBytes = 1024 * 1024,
): Promise<{ ok: true; value: unknown } | { ok: false; error: string; tooLarge?: true }> {
  const tooLarge = { ok: false as const, error: `body larger than ${maxBytes} bytes`, tooLarge: true as const };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge;
  if (req.destroyed) return { ok: false, error: 'the request was aborted' };
  const chunks: Buffer[] = [];
  let size = 0;
  const outcome = await new Promise<'end' | 'too-large' | 'aborted'>((resolve) => {
    const done = (how: 'end' | 'too-large' | 'aborted') => {
      req.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onAbort);
      resolve(how);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        done('too-large');
      } else chunks.push(chunk);
    };
    const onEnd = () => done('end');
    const onAbort = () => done('aborted');
    req.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onAbort);
  });
  if (outcome === 'too-large') return tooLarge;
  if (outcome === 'aborted') return { ok: false, error: 'the request was aborted' };
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, error: 'body is not JSON' };
  }
}
