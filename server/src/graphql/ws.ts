import { randomUUID } from 'node:crypto';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { GraphQLError } from 'graphql';
import type { IncomingMessage } from 'node:http';
import { CloseCode, type OperationResult, type ServerOptions } from 'graphql-ws';
import type { Extra } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { VerifyClientCallbackAsync, WebSocket } from 'ws';
import { sessionFromCookie } from '../http/session-cookie.js';
import { sameOrigin } from '../http/console.js';
import { connectionToken } from '../http/json.js';
import { inRequestScope, type RequestScope } from '../log.js';
import type { ConnectionCounts } from './connection-caps.js';
import type { CredentialWatch } from './credential-watch.js';
import type { Viewer } from '../access.js';
import type { Context } from './context.js';
import { checkRequestNesting, limitError } from './limits.js';
import { maskError } from './mask-error.js';
import { sendNextDirectly } from './shared-events.js';
import { checkStorableInput } from './storable-input.js';

// GraphQL over WebSocket (graphql-ws) with the same plugins, context and parse/validate cache
// as HTTP (Yoga's graphql-ws recipe), plus what only a long-lived connection needs: a cap on
// operations running at once and on operations started per second, per socket. Each operation
// is handled in its own request scope (a new request id on its log lines), subscription events too.
//
// A socket must authenticate: its connection_init carries a valid API token, or its upgrade a
// valid console session cookie from the console's own origin. One without any credential is
// closed at once (4403); one that sends no connection_init within TASKBAY_WS_AUTH_GRACE_MS is
// closed by graphql-ws (4408). Until then it counts against its address's unauthenticated
// sockets (connection-caps.ts), and a new upgrade past that cap is answered 429, no WebSocket made.
// An open socket whose credential stops holding (revoked, expired, its person disabled) is closed
// (4401); one whose viewer changed (a new role) is closed so it connects again (credential-watch.ts).

/** A close code the client retries (RFC 6455 "Service Restart"): the viewer changed, its next connection starts as who it is now. */
const SERVICE_RESTART = 1012;

export interface WsLimits {
  maxSubscriptions: number;
  operationsPerSecond: number;
  maxInputDepth: number;
  /** TASKBAY_WS_AUTH_GRACE_MS: how long a socket may wait before its connection_init. */
  authGraceMs: number;
}

type WsServerOptions = ServerOptions<Record<string, unknown> | undefined, Extra>;

/** What the metrics read when scraped. */
export interface WsLiveCounts {
  liveConnections(): number;
  liveOperations(): number;
}

type Root = { execute: (args: ExecutionArgs) => OperationResult; subscribe: (args: ExecutionArgs) => OperationResult; scope: RequestScope };

/** Each step of a subscription's stream (where its events are resolved) runs in the operation's scope. */
function inScopeEach(result: Awaited<OperationResult>, scope: RequestScope): Awaited<OperationResult> {
  if (!(Symbol.asyncIterator in result)) return result;
  const it = result[Symbol.asyncIterator]() as AsyncIterator<ExecutionResult>;
  const done = (value?: unknown): IteratorResult<ExecutionResult> => ({ done: true, value });
  const wrapped: Required<AsyncIterableIterator<ExecutionResult>> = {
    next: () => inRequestScope(scope, () => it.next()),
    return: (v?: unknown) => inRequestScope(scope, () => it.return?.(v) ?? Promise.resolve(done(v))),
    throw: (e?: unknown) => inRequestScope(scope, () => it.throw?.(e) ?? Promise.reject(e)),
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}

/** Errors go out as graphql-ws error messages; `http` means nothing there. */
function forSocket(error: unknown): GraphQLError {
  const masked = maskError(error, 'Unexpected error.') as GraphQLError;
  const { http: _http, ...extensions } = masked.extensions ?? {};
  return new GraphQLError(masked.message, { extensions });
}

/** What app.ts wires into the WebSocket server: checked before each upgrade, told of each socket. */
export interface WsAdmission {
  verifyClient: VerifyClientCallbackAsync<IncomingMessage>;
  socketOpened(socket: WebSocket, request: IncomingMessage): void;
}

export function graphqlWsOptions(opts: {
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  limits: WsLimits;
  connections: ConnectionCounts;
  /** Who the API token, else the console session, names now (null: no one who may sign in). */
  viewerFor(credential: { token: string | null; session: string | null }): Promise<Viewer | null>;
  /** Ends a socket whose credential stops holding while it is open (credential-watch.ts). */
  watch: CredentialWatch;
}): WsServerOptions & WsLiveCounts & WsAdmission {
  const { yoga, limits, connections } = opts;
  const admitted = new WeakMap<object, { authenticated(): void; closed(): void }>();
  // Acknowledged connections (graphql-ws's context of each): their `subscriptions` are the live operations.
  const live = new Set<{ subscriptions: Record<string, unknown> }>();
  const rate = new RateLimiterMemory({ points: limits.operationsPerSecond, duration: 1 });
  const socketKeys = new WeakMap<object, string>();
  let sockets = 0;
  const keyOf = (socket: object) => {
    let key = socketKeys.get(socket);
    if (!key) {
      key = `ws-${++sockets}`;
      socketKeys.set(socket, key);
    }
    return key;
  };

  return {
    connectionInitWaitTimeout: limits.authGraceMs,
    // Synchronous, so ws completes the upgrade (and emits the socket) in the same turn: a burst of
    // upgrades is counted one after another.
    verifyClient: (info, done) => {
      const refusal = connections.socketRefusal(info.req.socket.remoteAddress);
      if (refusal) done(false, 429, refusal, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '1' });
      else done(true);
    },
    socketOpened: (socket, request) => {
      const counted = connections.socketOpened(request.socket.remoteAddress);
      admitted.set(socket, counted);
      socket.once('close', counted.closed);
    },
    liveConnections: () => live.size,
    liveOperations: () => {
      let n = 0;
      for (const ctx of live) n += Object.keys(ctx.subscriptions).length;
      return n;
    },
    execute: (args: any) => {
      const root = args.rootValue as Root;
      return inRequestScope(root.scope, () => root.execute(args));
    },
    subscribe: (args: any) => {
      const root = args.rootValue as Root;
      return inRequestScope(root.scope, async () => inScopeEach(await root.subscribe(args), root.scope));
    },
    onClose: (ctx) => {
      live.delete(ctx);
    },
    onConnect: async (ctx) => {
      const req = ctx.extra.request;
      const token = connectionToken(ctx.connectionParams, req.headers);
      if (token === false) return false;
      const session = token ? null : sessionFromCookie(req.headers.cookie ?? null);
      // A cookie session over WebSocket only from the console's own origin (browsers send
      // cookies on cross-site upgrades; this refuses cross-site WebSocket hijacking).
      if (session && !sameOrigin(req.headers.origin, req.headers.host)) return false;
      if (!token && !session) {
        ctx.extra.socket.close(CloseCode.Forbidden, 'Forbidden: send an API token (connectionParams.authorization) or sign in to the console');
        return false;
      }
      const credential = { token, session };
      const viewer = await opts.viewerFor(credential);
      if (!viewer) return false;
      const socket = ctx.extra.socket;
      const unwatch = await opts.watch.watch(credential, viewer, (reason) =>
        reason === 'revoked'
          ? socket.close(CloseCode.Unauthorized, 'Unauthorized: the credential was revoked or has expired, or its person was disabled')
          : socket.close(SERVICE_RESTART, 'the viewer changed: connect again'),
      );
      socket.once('close', unwatch);
      if (socket.readyState !== socket.OPEN) {
        unwatch();
        return false;
      }
      admitted.get(ctx.extra.socket)?.authenticated();
      live.add(ctx);
      return true;
    },
    onSubscribe: (ctx, id, params) => {
      const scope: RequestScope = { reqId: randomUUID() };
      return inRequestScope(scope, async () => {
        // graphql-ws registers an operation and calls this synchronously as its message arrives:
        // counted before the first await, a burst is counted in order.
        if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptions) {
          return [
            forSocket(
              limitError('TOO_MANY_OPERATIONS', `this connection already runs ${limits.maxSubscriptions} operations; the limit is ${limits.maxSubscriptions}`),
            ),
          ];
        }
        try {
          await rate.consume(keyOf(ctx.extra.socket));
        } catch (e) {
          if (!(e instanceof RateLimiterRes)) throw e;
          return [
            forSocket(
              limitError(
                'RATE_LIMITED',
                `more than ${limits.operationsPerSecond} operations a second on this connection; the limit is ${limits.operationsPerSecond}`,
              ),
            ),
          ];
        }
        try {
          // What Yoga's onParams plugins check on HTTP (graphql-ws does not run them).
          checkRequestNesting(params, limits.maxInputDepth);
          checkStorableInput(params);
          const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            ...ctx,
            req: ctx.extra.request,
            socket: ctx.extra.socket,
            params,
          });
          const document = parse(params.query);
          const errors = validate(schema, document);
          if (errors.length) return errors;
          const args: ExecutionArgs = {
            schema,
            operationName: params.operationName,
            document,
            variableValues: params.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe, scope } satisfies Root,
          };
          // Shared subscription results go out as one frame per subscriber, serialized once
          // (shared-events.ts); the same frame graphql-ws would send, as long as no onNext hook
          // or jsonMessageReplacer is configured here.
          const socket = ctx.extra.socket;
          sendNextDirectly(args.contextValue as object, (payloadJson) => {
            if (id in ctx.subscriptions && socket.readyState === socket.OPEN)
              socket.send(`{"id":${JSON.stringify(id)},"type":"next","payload":${payloadJson}}`);
          });
          return args;
        } catch (e) {
          // A limit refused while parsing or validating: an error for this operation, the socket stays.
          return [forSocket(e)];
        }
      });
    },
  };
}
