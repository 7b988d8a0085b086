import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { addressKeyOf } from '../net/client-address.js';
import type { Context } from './context.js';
import { limitError } from './limits.js';

// What one client may hold open on this instance, counted in memory per instance:
// - per client address (an IPv4 address, or the /64 of an IPv6 one, as the sign-in limiter keys
//   them): WebSockets that have not authenticated yet, and all WebSockets and SSE subscription
//   streams (ws.ts wires the sockets, the plugin below the streams);
// - per viewer, for subscriptions over HTTP (SSE, `text/event-stream`, or multipart): the caps a
//   WebSocket has per socket (TASKBAY_WS_MAX_SUBSCRIPTIONS at once, TASKBAY_WS_OPERATIONS_PER_SECOND
//   started a second), since each SSE subscription is a request of its own.
// Behind a reverse proxy every client has the proxy's address: the per-address caps count it.

export interface ConnectionCaps {
  /** TASKBAY_WS_MAX_UNAUTHENTICATED_PER_ADDRESS: WebSockets of one address not yet authenticated, at once. */
  maxUnauthenticatedPerAddress: number;
  /** TASKBAY_WS_MAX_CONNECTIONS_PER_ADDRESS: WebSockets and SSE subscription streams of one address, at once. */
  maxConnectionsPerAddress: number;
  /** TASKBAY_WS_MAX_SUBSCRIPTIONS: SSE subscriptions of one viewer at once (operations of one socket). */
  maxSubscriptions: number;
  /** TASKBAY_WS_OPERATIONS_PER_SECOND: SSE subscriptions one viewer starts a second (operations of one socket). */
  operationsPerSecond: number;
}

class Counter {
  private readonly counts = new Map<string, number>();
  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }
  add(key: string): void {
    this.counts.set(key, this.get(key) + 1);
  }
  remove(key: string): void {
    const n = this.get(key) - 1;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }
}

export class ConnectionCounts {
  /** WebSockets and SSE subscription streams, per address key. */
  private readonly open = new Counter();
  /** WebSockets not yet authenticated, per address key. */
  private readonly unauthenticated = new Counter();
  /** SSE subscription streams, per viewer. */
  private readonly viewerStreams = new Counter();
  private readonly viewerRate: RateLimiterMemory;

  constructor(readonly caps: ConnectionCaps) {
    this.viewerRate = new RateLimiterMemory({ points: caps.operationsPerSecond, duration: 1 });
  }

  /** Why a new WebSocket from this address is refused (before the upgrade), or null. */
  socketRefusal(address: string | undefined): string | null {
    const key = addressKeyOf(address);
    if (this.unauthenticated.get(key) >= this.caps.maxUnauthenticatedPerAddress) {
      return `this address already holds ${this.caps.maxUnauthenticatedPerAddress} WebSockets that have not authenticated; the limit is ${this.caps.maxUnauthenticatedPerAddress}`;
    }
    if (this.open.get(key) >= this.caps.maxConnectionsPerAddress) return this.openRefusal();
    return null;
  }

  /** A WebSocket was opened (unauthenticated until `authenticated` is called); returns what to call when it closes or authenticates. */
  socketOpened(address: string | undefined): { authenticated(): void; closed(): void } {
    const key = addressKeyOf(address);
    this.open.add(key);
    this.unauthenticated.add(key);
    let pending = true;
    const authenticated = () => {
      if (pending) this.unauthenticated.remove(key);
      pending = false;
    };
    let open = true;
    return {
      authenticated,
      closed: () => {
        authenticated();
        if (open) this.open.remove(key);
        open = false;
      },
    };
  }

  private openRefusal(): string {
    const max = this.caps.maxConnectionsPerAddress;
    return `this address already holds ${max} WebSockets and subscription streams; the limit is ${max}`;
  }

  /**
   * Counts an SSE subscription of this viewer from this address: the refusal (a GraphQL error),
   * or the function that gives the room back when the stream ends.
   */
  async streamOpened(viewer: string | null, address: string | null | undefined): Promise<{ refused: ReturnType<typeof limitError> } | { release: () => void }> {
    const key = addressKeyOf(address);
    const { maxSubscriptions, operationsPerSecond } = this.caps;
    // Counted before the first await: a burst is counted in order.
    if (this.open.get(key) >= this.caps.maxConnectionsPerAddress) return { refused: limitError('TOO_MANY_OPERATIONS', this.openRefusal()) };
    if (viewer !== null && this.viewerStreams.get(viewer) >= maxSubscriptions) {
      return {
        refused: limitError('TOO_MANY_OPERATIONS', `this viewer already runs ${maxSubscriptions} subscriptions over HTTP; the limit is ${maxSubscriptions}`),
      };
    }
    this.open.add(key);
    if (viewer !== null) this.viewerStreams.add(viewer);
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      this.open.remove(key);
      if (viewer !== null) this.viewerStreams.remove(viewer);
    };
    if (viewer !== null) {
      try {
        await this.viewerRate.consume(viewer);
      } catch (e) {
        release();
        if (!(e instanceof RateLimiterRes)) throw e;
        return {
          refused: limitError(
            'RATE_LIMITED',
            `more than ${operationsPerSecond} subscriptions over HTTP a second by this viewer; the limit is ${operationsPerSecond}`,
          ),
        };
      }
    }
    return { release };
  }
}

/** The source stream with `release` called once when it ends, however it ends. */
function releasingAtEnd(source: AsyncIterable<ExecutionResult>, release: () => void): AsyncIterableIterator<ExecutionResult> {
  const it = source[Symbol.asyncIterator]();
  const ended = <T>(r: IteratorResult<T>) => {
    if (r.done) release();
    return r;
  };
  const wrapped: AsyncIterableIterator<ExecutionResult> = {
    next: () =>
      it.next().then(ended, (e: unknown) => {
        release();
        throw e;
      }),
    return: (value?: unknown) => {
      release();
      return it.return ? it.return(value) : Promise.resolve({ done: true, value } as IteratorResult<ExecutionResult>);
    },
    throw: (e?: unknown) => {
      release();
      return it.throw ? it.throw(e) : Promise.reject(e);
    },
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}

const isAsyncIterable = (v: unknown): v is AsyncIterable<ExecutionResult> =>
  v != null && typeof (v as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function';

/**
 * Subscriptions over HTTP under the caps above. After the shared-events plugin (it wraps the
 * subscribe function; this wraps each subscriber's). graphql-ws operations pass untouched: ws.ts
 * caps them per socket.
 */
export function useHttpSubscriptionCaps(counts: ConnectionCounts): Plugin {
  return {
    async onSubscribe({ args, subscribeFn, setSubscribeFn, setResultAndStopExecution }) {
      const ctx = args.contextValue as Partial<Context> & { extra?: unknown; clientAddress?: string | null };
      if (ctx.extra !== undefined) return;
      const opened = await counts.streamOpened(ctx.viewer ? ctx.viewer.userId : null, ctx.clientAddress);
      if ('refused' in opened) {
        setResultAndStopExecution({ errors: [opened.refused] });
        return;
      }
      const { release } = opened;
      setSubscribeFn(async (a) => {
        let result: Awaited<ReturnType<typeof subscribeFn>>;
        try {
          result = await subscribeFn(a);
        } catch (e) {
          release();
          throw e;
        }
        if (!isAsyncIterable(result)) {
          release();
          return result;
        }
        return releasingAtEnd(result, release) as never;
      });
    },
  };
}
