import type { ExecutionArgs } from 'graphql';
import { GraphQLError } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import type { Extra } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { sessionFromCookie } from '../auth/session.js';
import { sameOrigin } from '../http/console.js';
import { connectionToken } from '../http/json.js';
import type { Context } from './context.js';
import { checkRequestNesting, limitError } from './limits.js';
import { maskError } from './mask-error.js';
import { sendNextDirectly } from './shared-events.js';
import { checkStorableInput } from './storable-input.js';

// GraphQL over WebSocket (graphql-ws) with the same plugins, context and parse/validate cache
// as HTTP (Yoga's graphql-ws recipe), plus what only a long-lived connection needs: a cap on
// operations running at once and on operations started per second, per socket.

export interface WsLimits {
  maxSubscriptions: number;
  operationsPerSecond: number;
  maxInputDepth: number;
}

type WsServerOptions = ServerOptions<Record<string, unknown> | undefined, Extra>;

/** Errors go out as graphql-ws error messages; `http` means nothing there. */
function forSocket(error: unknown): GraphQLError {
  const masked = maskError(error, 'Unexpected error.') as GraphQLError;
  const { http: _http, ...extensions } = masked.extensions ?? {};
  return new GraphQLError(masked.message, { extensions });
}

export function graphqlWsOptions(opts: {
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  limits: WsLimits;
  /** True when an API token names an active token. */
  tokenIsValid(token: string): Promise<boolean>;
}): WsServerOptions {
  const { yoga, limits } = opts;
  const rate = new RateLimiterMemory({ points: limits.operationsPerSecond, duration: 1 });
  const socketKeys = new WeakMap<object, string>();
  let sockets = 0;
  const keyOf = (socket: object) => {
    let key = socketKeys.get(socket);
    if (!key) socketKeys.set(socket, (key = `ws-${++sockets}`));
    return key;
  };

  return {
    execute: (args: any) => args.rootValue.execute(args),
    subscribe: (args: any) => args.rootValue.subscribe(args),
    onConnect: async (ctx) => {
      const token = connectionToken(ctx.connectionParams, ctx.extra.request.headers);
      if (token === false) return false;
      if (token && !(await opts.tokenIsValid(token))) return false;
      if (!token) {
        // A cookie session over WebSocket only from the console's own origin (browsers send
        // cookies on cross-site upgrades; this refuses cross-site WebSocket hijacking).
        const req = ctx.extra.request;
        const session = sessionFromCookie(req.headers.cookie ?? null);
        if (session && !sameOrigin(req.headers.origin, req.headers.host)) return false;
      }
      return true;
    },
    onSubscribe: async (ctx, id, params) => {
      // graphql-ws registers an operation and calls this synchronously as its message arrives:
      // counted before the first await, a burst is counted in order.
      if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptions) {
        return [forSocket(limitError('TOO_MANY_OPERATIONS', `this connection already runs ${limits.maxSubscriptions} operations; the limit is ${limits.maxSubscriptions}`))];
      }
      try {
        await rate.consume(keyOf(ctx.extra.socket));
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        return [forSocket(limitError('RATE_LIMITED', `more than ${limits.operationsPerSecond} operations a second on this connection; the limit is ${limits.operationsPerSecond}`))];
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
          rootValue: { execute, subscribe },
        };
        // Shared subscription results go out as one frame per subscriber, serialized once
        // (shared-events.ts); the same frame graphql-ws would send, as long as no onNext hook
        // or jsonMessageReplacer is configured here.
        const socket = ctx.extra.socket;
        sendNextDirectly(args.contextValue as object, (payloadJson) => {
          if (id in ctx.subscriptions && socket.readyState === socket.OPEN) socket.send(`{"id":${JSON.stringify(id)},"type":"next","payload":${payloadJson}}`);
        });
        return args;
      } catch (e) {
        // A limit refused while parsing or validating: an error for this operation, the socket stays.
        return [forSocket(e)];
      }
    },
  };
}
