import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Viewer } from '../access.js';
import type { Context } from './context.js';
import { log } from '../log.js';

// A live subscription (a WebSocket, or a subscription over HTTP) keeps the viewer it started
// with; a token revoked or expired, a session ended, a person disabled or given another role
// must not keep receiving on it. Each instance's LISTEN loop hears of every change to a person
// and their credentials (taskbay_auth, Migration20261202000310_auth_changes): every live
// connection of that person on this instance checks its credential again, and at the
// credential's own expiry (nothing notifies of that). What no longer holds is ended; a viewer
// that changed (role, tenant, email) is ended too, so its next connection starts as who it is now.

export interface Credential {
  token: string | null;
  session: string | null;
}

export interface CredentialChecks {
  /** Who the credential is now (read afresh: the change has dropped it from the viewer cache). */
  viewerFor(credential: Credential): Promise<Viewer | null>;
  /** When the credential ends on its own, if it does. */
  expiryOf(credential: Credential): Promise<Date | null>;
}

/** Why a live connection is ended: its credential no longer holds, or it now names someone else. */
export type EndReason = 'revoked' | 'changed';

interface Watched {
  credential: Credential;
  viewer: Viewer;
  end(reason: EndReason): void;
  timer: NodeJS.Timeout | null;
}

/** setTimeout's longest delay; a later expiry is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const sameViewer = (a: Viewer, b: Viewer) => a.userId === b.userId && a.tenantId === b.tenantId && a.role === b.role && a.email === b.email;

export class CredentialWatch {
  private readonly byUser = new Map<string, Set<Watched>>();

  constructor(private readonly checks: CredentialChecks) {}

  /** Watches a live connection of `viewer` on `credential` until the returned function is called; `end` ends the connection. */
  async watch(credential: Credential, viewer: Viewer, end: (reason: EndReason) => void): Promise<() => void> {
    const w: Watched = { credential, viewer, end, timer: null };
    let set = this.byUser.get(viewer.userId);
    if (!set) {
      set = new Set();
      this.byUser.set(viewer.userId, set);
    }
    set.add(w);
    let watching = true;
    const unwatch = () => {
      if (!watching) return;
      watching = false;
      if (w.timer) clearTimeout(w.timer);
      const s = this.byUser.get(viewer.userId);
      s?.delete(w);
      if (s && !s.size) this.byUser.delete(viewer.userId);
    };
    // Checked once more now it is watched: a change notified between the viewer's resolution
    // and this point would otherwise be missed.
    const [expiry] = await Promise.all([this.checks.expiryOf(credential), this.recheck(w)]);
    if (watching && expiry) this.arm(w, expiry);
    return unwatch;
  }

  private arm(w: Watched, at: Date) {
    const delay = Math.max(0, at.getTime() - Date.now());
    w.timer = setTimeout(
      () => {
        w.timer = null;
        if (delay >= MAX_TIMER_MS) this.arm(w, at);
        else void this.recheck(w);
      },
      Math.min(delay + 1, MAX_TIMER_MS),
    );
    w.timer.unref();
  }

  private async recheck(w: Watched): Promise<void> {
    try {
      const now = await this.checks.viewerFor(w.credential);
      if (!now) w.end('revoked');
      else if (!sameViewer(now, w.viewer)) w.end('changed');
    } catch (e) {
      // Unknown now (the database is out of reach): the connection is ended rather than trusted.
      log.warn(`a live connection's credential could not be checked again; ending it: ${(e as Error).message}`);
      w.end('changed');
    }
  }

  /** The AUTH_CHANNEL notification: a person, or one of their tokens or sessions, changed. */
  userChanged(userId: string): void {
    for (const w of [...(this.byUser.get(userId) ?? [])]) void this.recheck(w);
  }

  /** Live connections watched on this instance. */
  get size(): number {
    let n = 0;
    for (const s of this.byUser.values()) n += s.size;
    return n;
  }
}

const isAsyncIterable = (v: unknown): v is AsyncIterable<ExecutionResult> =>
  v != null && typeof (v as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function';

/** The source stream, ended (done, its source returned) once `stop` is called; a pending next() ends too. */
function stoppable(source: AsyncIterable<ExecutionResult>): { stream: AsyncIterableIterator<ExecutionResult>; stop(): void } {
  const it = source[Symbol.asyncIterator]();
  let stop!: () => void;
  const stopped = new Promise<IteratorResult<ExecutionResult>>((resolve) => {
    stop = () => resolve({ done: true, value: undefined });
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    void it.return?.();
  };
  void stopped.then(end);
  const stream: AsyncIterableIterator<ExecutionResult> = {
    next: () => (ended ? stopped : Promise.race([it.next(), stopped])),
    return: (value?: unknown) => {
      stop();
      return Promise.resolve({ done: true, value } as IteratorResult<ExecutionResult>);
    },
    throw: (e?: unknown) => {
      stop();
      return Promise.reject(e);
    },
    [Symbol.asyncIterator]: () => stream,
  };
  return { stream, stop };
}

/**
 * Subscriptions over HTTP (SSE and multipart) under the same watch as sockets: the stream ends
 * when its credential stops holding or its viewer changes (an EventSource connects again, and is
 * then refused or answered as who it is now). graphql-ws operations pass untouched: ws.ts
 * watches their socket.
 */
export function useLiveCredentialsOverHttp(watch: CredentialWatch): Plugin {
  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const ctx = args.contextValue as Partial<Context> & { extra?: unknown };
      if (ctx.extra !== undefined || !ctx.viewer || !ctx.credential) return;
      const { viewer, credential } = ctx;
      setSubscribeFn(async (a) => {
        const result = await subscribeFn(a);
        if (!isAsyncIterable(result)) return result;
        const { stream, stop } = stoppable(result);
        const unwatch = await watch.watch(credential, viewer, stop);
        const ending = stream.return!.bind(stream);
        stream.return = (value?: unknown) => {
          unwatch();
          return ending(value);
        };
        const next = stream.next.bind(stream);
        stream.next = async () => {
          const r = await next();
          if (r.done) unwatch();
          return r;
        };
        return stream as never;
      });
    },
  };
}
