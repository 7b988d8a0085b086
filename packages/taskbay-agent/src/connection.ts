import { TaskbayAgentError, TaskbayApiError } from './errors.js';

// How the package talks to Taskbay: GraphQL as POST <url>/graphql with the API token as a bearer
// token (fetch), subscriptions as Server-Sent Events on the same endpoint (graphql-yoga answers a
// POST with `accept: text/event-stream` as a stream of `next` events): no WebSocket, no GraphQL
// client, nothing but fetch.

/** Which Taskbay to ask, as whom, and whose signatures to trust. */
export interface TaskbayConnection {
  /** Taskbay's address, e.g. https://taskbay.example.com (its /graphql is used), or the /graphql endpoint itself. */
  url: string;
  /**
   * The agent's API token. Its owner is the requester, and a requester never decides their own
   * request (separation of duties): a person with another account approves.
   */
  token: string;
  /**
   * The issuer Taskbay's signatures must name: its TASKBAY_PUBLIC_URL. Default: `url` without
   * /graphql. Configure it; never take it from what Taskbay sends.
   */
  issuer?: string;
  /** Where Taskbay's public keys are. Default: `<url>/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * How often the request is read while waiting, besides the live stream, in case the stream
   * dropped without a sign. Default 15000 ms; 0 turns the reads off (the stream alone).
   */
  pollIntervalMs?: number;
}

export interface GqlError {
  message: string;
  extensions?: Record<string, unknown>;
}

/** The server's base URL (no trailing slash, no /graphql). */
export function baseUrl(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/graphql$/, '');
}

export function graphqlUrl(url: string): string {
  return `${baseUrl(url)}/graphql`;
}

export function headers(conn: TaskbayConnection, accept: string): Record<string, string> {
  return { 'content-type': 'application/json', accept, authorization: `Bearer ${conn.token}` };
}

/** One GraphQL request; answers `data` or throws a TaskbayApiError / NETWORK_ERROR. */
export async function gql<T>(
  conn: TaskbayConnection,
  query: string,
  variables: Record<string, unknown>,
  opts: { signal?: AbortSignal; approvalId?: string } = {},
): Promise<T> {
  const doFetch = conn.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(graphqlUrl(conn.url), {
      method: 'POST',
      headers: headers(conn, 'application/graphql-response+json, application/json'),
      body: JSON.stringify({ query, variables }),
      signal: opts.signal,
    });
  } catch (e) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new TaskbayAgentError('NETWORK_ERROR', `Taskbay is unreachable: ${(e as Error)?.message ?? String(e)}`, { cause: e, approvalId: opts.approvalId });
  }
  let body: { data?: T; errors?: GqlError[] };
  const text = await res.text().catch((e) => {
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new TaskbayAgentError('NETWORK_ERROR', `the answer of Taskbay was cut: ${(e as Error)?.message}`, { cause: e, approvalId: opts.approvalId });
  });
  try {
    body = JSON.parse(text);
  } catch {
    throw new TaskbayAgentError('NETWORK_ERROR', `Taskbay answered HTTP ${res.status} without GraphQL: ${text.slice(0, 200)}`, { approvalId: opts.approvalId });
  }
  if (body.errors?.length) throw apiError(body.errors, res.status, opts.approvalId);
  if (!res.ok || body.data == null)
    throw new TaskbayApiError('INTERNAL_SERVER_ERROR', `Taskbay answered HTTP ${res.status} without data`, { status: res.status });
  return body.data;
}

export function apiError(errors: readonly GqlError[], status: number | undefined, approvalId?: string): TaskbayApiError {
  const first = errors[0]!;
  const code = typeof first.extensions?.code === 'string' ? first.extensions.code : 'INTERNAL_SERVER_ERROR';
  return new TaskbayApiError(code, `${code}: ${first.message}`, { status, errors, approvalId });
}

/** The row id inside a Relay global id (base64 of `Type:uuid`), or null when it is not one. */
export function rawId(globalId: string): string | null {
  let decoded: string;
  try {
    decoded = atob(globalId);
  } catch {
    return null;
  }
  const colon = decoded.indexOf(':');
  return colon > 0 ? decoded.slice(colon + 1) : null;
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
