import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type DocumentNode, type OperationDefinitionNode, print } from 'graphql';
import { type Client as WsClient, createClient } from 'graphql-ws';
import { type GraphQLErrorEntry, TaskbayError } from './errors.js';
import { type Connection, type NodeOf, paginate } from './paginate.js';

// How the client talks to Taskbay: queries and mutations as POST /graphql (fetch), subscriptions
// over graphql-ws on the same path, both with the API token as a bearer token (the HTTP
// Authorization header; on WebSocket the connection_init's `authorization` parameter).

export interface TaskbayClientOptions {
  /** The server's address, e.g. http://localhost:4000 (its /graphql endpoint is used), or the endpoint itself. */
  url: string;
  /** An API token (tb_...), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Headers added to every HTTP request. */
  headers?: Record<string, string>;
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * WebSocket implementation for subscriptions (default: the global one, else the `ws` package;
   * Node 20 has no global WebSocket: install `ws` or pass it here).
   */
  webSocketImpl?: unknown;
  /** The graphql-ws endpoint (default: the GraphQL endpoint with ws: or wss:). */
  wsUrl?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Headers for this request only. */
  headers?: Record<string, string>;
}

export interface PageOptions extends CallOptions {
  /** Nodes per request (`first`); default 50. */
  pageSize?: number;
}

export interface SubscribeOptions {
  /** Aborting ends the subscription (the iterator finishes). */
  signal?: AbortSignal;
}

/** A live subscription: iterate its events; `return()` (or `break` in for await) ends it. */
export type TaskbaySubscription<T> = AsyncIterableIterator<T>;

type Doc<R, V> = TypedDocumentNode<R, V>;

export interface Runner {
  execute<R, V, K extends keyof R>(document: Doc<R, V>, variables: V, field: K, options?: CallOptions): Promise<R[K]>;
  subscribe<R, V, K extends keyof R>(document: Doc<R, V>, variables: V, field: K, options?: SubscribeOptions): TaskbaySubscription<R[K]>;
  paginate<R, V, K extends keyof R>(
    document: Doc<R, V>,
    variables: Omit<V, 'first' | 'after' | 'last' | 'before'>,
    field: K,
    options?: PageOptions,
  ): AsyncIterableIterator<NodeOf<R[K]>>;
  /** Any typed document over HTTP: its whole `data`. */
  request<R, V>(document: Doc<R, V>, variables: V, options?: CallOptions): Promise<R>;
  /** Any typed subscription document over graphql-ws: each event's whole `data`. */
  stream<R, V>(document: Doc<R, V>, variables: V, options?: SubscribeOptions): TaskbaySubscription<R>;
  /** Closes the WebSocket, if one is open. */
  close(): Promise<void>;
}

const printed = new WeakMap<object, { query: string; operationName: string | undefined }>();

function source(document: DocumentNode): { query: string; operationName: string | undefined } {
  let s = printed.get(document);
  if (!s) {
    const op = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    s = { query: print(document), operationName: op?.name?.value };
    printed.set(document, s);
  }
  return s;
}

export function endpoints(url: string, wsUrl?: string): { http: string; ws: string } {
  const u = new URL(url);
  if (!/\/graphql\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/graphql`;
  const http = u.toString();
  if (wsUrl) return { http, ws: wsUrl };
  const w = new URL(http);
  w.protocol = w.protocol === 'https:' ? 'wss:' : 'ws:';
  return { http, ws: w.toString() };
}

function isCloseEvent(e: unknown): e is { code: number; reason: string } {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'number' && 'reason' in e;
}

/** A graphql-ws error (close event, errors array, Error) as a TaskbayError. */
function wsError(e: unknown, url: string): TaskbayError {
  if (e instanceof TaskbayError) return e;
  if (Array.isArray(e)) return TaskbayError.fromGraphQL(e as GraphQLErrorEntry[]);
  if (isCloseEvent(e)) {
    // Taskbay refuses a WebSocket whose token names no active token with 4403 (graphql-ws's Forbidden).
    if (e.code === 4403 || e.code === 4401) {
      return new TaskbayError('UNAUTHENTICATED', `Taskbay refused the WebSocket (${e.code} ${e.reason || 'Forbidden'}): send a valid API token`);
    }
    return new TaskbayError('NETWORK_ERROR', `the WebSocket to ${url} closed (${e.code}${e.reason ? ` ${e.reason}` : ''})`);
  }
  const message = e instanceof Error ? e.message : typeof e === 'object' && e && 'type' in e ? `WebSocket ${String((e as { type: unknown }).type)}` : String(e);
  return new TaskbayError('NETWORK_ERROR', `cannot reach Taskbay at ${url}: ${message}`, { cause: e });
}

async function webSocketImpl(given: unknown): Promise<unknown> {
  if (given) return given;
  if (typeof globalThis.WebSocket === 'function') return globalThis.WebSocket;
  try {
    return (await import('ws')).default;
  } catch {
    throw new TaskbayError(
      'NETWORK_ERROR',
      'no WebSocket implementation for subscriptions: this runtime has no global WebSocket (Node 20); install `ws` or pass webSocketImpl',
    );
  }
}

export function createRunner(options: TaskbayClientOptions): Runner {
  const { http, ws } = endpoints(options.url, options.wsUrl);
  const doFetch = options.fetch ?? globalThis.fetch;
  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  let wsClient: Promise<WsClient> | null = null;

  const connect = (): Promise<WsClient> => {
    wsClient ??= webSocketImpl(options.webSocketImpl).then((impl) =>
      createClient({
        url: ws,
        webSocketImpl: impl,
        connectionParams: { ...auth },
        // A refused token stays refused: no reconnect attempts after Forbidden.
        shouldRetry: (e) => !(isCloseEvent(e) && (e.code === 4403 || e.code === 4401)),
      }),
    );
    return wsClient;
  };

  async function request<R, V>(document: Doc<R, V>, variables: V, opts: CallOptions = {}): Promise<R> {
    const { query, operationName } = source(document);
    let res: Response;
    try {
      res = await doFetch(http, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json;q=0.9',
          ...auth,
          ...options.headers,
          ...opts.headers,
        },
        body: JSON.stringify({ query, operationName, variables }),
        signal: opts.signal,
      });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new TaskbayError('NETWORK_ERROR', `cannot reach Taskbay at ${http}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    const text = await res.text();
    let body: { data?: R | null; errors?: GraphQLErrorEntry[] };
    try {
      body = JSON.parse(text);
    } catch {
      throw new TaskbayError('NETWORK_ERROR', `Taskbay at ${http} answered HTTP ${res.status} without a GraphQL response`, { status: res.status });
    }
    if (body?.errors?.length) throw TaskbayError.fromGraphQL(body.errors, res.status);
    if (!body || body.data == null)
      throw new TaskbayError('NETWORK_ERROR', `Taskbay at ${http} answered HTTP ${res.status} without data`, { status: res.status });
    return body.data;
  }

  function stream<R, V>(document: Doc<R, V>, variables: V, opts: SubscribeOptions = {}): TaskbaySubscription<R> {
    const { query, operationName } = source(document);
    const queue: R[] = [];
    let failure: TaskbayError | null = null;
    let done = false;
    let wake: (() => void) | null = null;
    let unsubscribe: (() => void) | null = null;
    const settle = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const end = () => {
      done = true;
      unsubscribe?.();
      opts.signal?.removeEventListener('abort', end);
      settle();
    };
    opts.signal?.addEventListener('abort', end, { once: true });
    if (opts.signal?.aborted) done = true;
    if (!done) {
      connect().then(
        (client) => {
          if (done) return;
          unsubscribe = client.subscribe<R>(
            { query, operationName, variables: variables as Record<string, unknown> },
            {
              next: (result) => {
                if (result.errors?.length) {
                  failure ??= TaskbayError.fromGraphQL(result.errors as GraphQLErrorEntry[]);
                  end();
                } else if (result.data) {
                  queue.push(result.data as R);
                  settle();
                }
              },
              error: (e) => {
                failure ??= wsError(e, ws);
                done = true;
                settle();
              },
              complete: () => {
                done = true;
                settle();
              },
            },
          );
        },
        (e) => {
          failure ??= wsError(e, ws);
          done = true;
          settle();
        },
      );
    }
    const iterator: TaskbaySubscription<R> = {
      async next(): Promise<IteratorResult<R>> {
        for (;;) {
          if (queue.length) return { done: false, value: queue.shift()! };
          if (failure) {
            const f = failure;
            failure = null;
            end();
            throw f;
          }
          if (done) return { done: true, value: undefined };
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      },
      async return(): Promise<IteratorResult<R>> {
        queue.length = 0;
        end();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  return {
    request,
    stream,
    async execute(document, variables, field, opts) {
      return (await request(document, variables, opts))[field];
    },
    subscribe<R, V, K extends keyof R>(document: Doc<R, V>, variables: V, field: K, opts?: SubscribeOptions): TaskbaySubscription<R[K]> {
      const events = stream(document, variables, opts);
      const iterator: TaskbaySubscription<R[K]> = {
        async next() {
          const r = await events.next();
          return r.done ? { done: true, value: undefined } : { done: false, value: r.value[field] };
        },
        return: async () => {
          await events.return!();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]: () => iterator,
      };
      return iterator;
    },
    paginate<R, V, K extends keyof R>(document: Doc<R, V>, variables: Omit<V, 'first' | 'after' | 'last' | 'before'>, field: K, opts: PageOptions = {}) {
      const { pageSize = 50, ...call } = opts;
      return paginate(async (after) => (await request(document, { ...variables, first: pageSize, after } as V, call))[field] as Connection<NodeOf<R[K]>>);
    },
    async close() {
      const c = wsClient;
      wsClient = null;
      if (c) await (await c.catch(() => null))?.dispose();
    },
  };
}
