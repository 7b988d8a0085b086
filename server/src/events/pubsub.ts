// The local pub/sub of one instance. Only the LISTEN loop (events/listener.ts) publishes into
// it, and only events whose transaction committed. Every subscriber of a topic receives the
// same payload object (approvals/event-view.ts keys its per-event cache by it).
//
// Its own rather than graphql-yoga's createPubSub: a subscription here is one listener and a
// queue, with its filters applied in place, where Yoga's is an EventTarget listener feeding a
// Repeater and each filter another Repeater. At thousands of subscribers per event that
// difference is most of the fan-out's work besides sending (docs/PERFORMANCE.md, fan-out).

export interface ApprovalEventPayload {
  seq: number;
  type: string;
  tenantId: string;
  approvalId: string;
  agentId: string | null;
  supersededById: string | null;
}

export interface TaskEventPayload {
  seq: number;
  type: string;
  tenantId: string;
  taskId: string;
  agentId: string | null;
}

interface Topics {
  approval: ApprovalEventPayload;
  task: TaskEventPayload;
}

export interface SubscribeOptions<E> {
  /** Checked as the event is published: an event it refuses is never queued. */
  when?: (e: E) => boolean;
  /**
   * Called as the event is published, for every subscriber that accepts it, before any of them
   * receives it: loads that the subscribers of one event batch (the event, their grants). The
   * event is delivered once every subscriber's preparation has ended (well or not).
   */
  prepare?: (e: E) => unknown;
  /** Checked in order as the subscriber reads: an event it refuses is skipped. */
  visible?: (e: E) => boolean | Promise<boolean>;
}

interface Listener<E> {
  accepts(e: E): boolean;
  prepare?(e: E): unknown;
  deliver(e: E): void;
}

const DONE = Object.freeze({ value: undefined, done: true }) as IteratorReturnResult<undefined>;

/** A subscription's events; `alsoPrepare` adds work to each event's preparation (see below). */
export interface EventStream<E> extends AsyncIterableIterator<E> {
  /**
   * `fn` takes part in the preparation of every event this subscriber accepts: it gets the
   * subscriber's visibility check and what its own `prepare` returned, and returns what the
   * delivery is to wait for. The shared subscription results are computed there
   * (graphql/shared-events.ts), so the delivery finds them ready.
   */
  alsoPrepare(fn: (e: E, visible: () => boolean | Promise<boolean>, own: unknown) => unknown): void;
  /**
   * `handle` takes events at delivery, synchronously, while the reader waits with nothing
   * queued (so order holds) and the event is visible at once; it returns false to leave the
   * event to the reader. Thousands of subscribers of one event are then served one after the
   * other, each completely, rather than all of them step by step through promise callbacks.
   */
  handleAtOnce(handle: (e: E) => boolean): void;
}

/**
 * The events of one topic from this call on, in publication order. The caller reads it to
 * the end or calls `return()` (which stops listening at once, even while a read is waiting).
 */
function stream<E>(listeners: Set<Listener<E>>, opts: SubscribeOptions<E>): EventStream<E> {
  const queue: E[] = [];
  let waiting: ((r: IteratorResult<E>) => void) | null = null;
  let ended = false;
  let extra: ((e: E, visible: () => boolean | Promise<boolean>, own: unknown) => unknown) | null = null;
  let atOnce: ((e: E) => boolean) | null = null;
  const visible = (e: E) => (opts.visible ? opts.visible(e) : true);
  const listener: Listener<E> = {
    accepts: (e) => !opts.when || opts.when(e),
    prepare: (e) => {
      const own = opts.prepare?.(e);
      return extra ? extra(e, () => visible(e), own) : own;
    },
    deliver: (e) => {
      if (ended) return;
      if (atOnce && waiting && !queue.length) {
        try {
          const sees = visible(e);
          if (sees === false) return;
          if (sees === true && atOnce(e)) return;
        } catch {
          // Left to the reader, whose own check meets the failure.
        }
      }
      if (waiting) {
        const resolve = waiting;
        waiting = null;
        resolve({ value: e, done: false });
      } else queue.push(e);
    },
  };
  listeners.add(listener);
  const take = (): IteratorResult<E> | Promise<IteratorResult<E>> => {
    if (ended) return DONE;
    if (queue.length) return { value: queue.shift()!, done: false };
    return new Promise((resolve) => (waiting = resolve));
  };
  const end = () => {
    ended = true;
    listeners.delete(listener);
    queue.length = 0;
    const resolve = waiting;
    waiting = null;
    resolve?.(DONE);
  };
  const iterator: EventStream<E> = {
    [Symbol.asyncIterator]: () => iterator,
    alsoPrepare: (fn) => {
      extra = fn;
    },
    handleAtOnce: (handle) => {
      atOnce = handle;
    },
    async next() {
      for (;;) {
        const step = await take();
        if (step.done || !opts.visible) return step;
        const sees = opts.visible(step.value);
        if ((sees === true || (sees !== false && (await sees))) && !ended) return step;
        if (ended) return DONE;
      }
    },
    async return() {
      end();
      return DONE;
    },
    async throw(error: unknown) {
      end();
      throw error;
    },
  };
  return iterator;
}

/**
 * One topic: events reach its subscribers in publication order, each once the preparations it
 * started have ended; an event that needs none waits only for those before it.
 */
function topic<E>() {
  const listeners = new Set<Listener<E>>();
  let delivering: Promise<void> | null = null;
  let queued = 0;
  return {
    listeners,
    publish(e: E): void {
      const accepting: Listener<E>[] = [];
      for (const l of listeners) if (l.accepts(e)) accepting.push(l);
      if (!accepting.length) return;
      const preparing: unknown[] = [];
      const waitingFor = new Set<Promise<unknown>>();
      for (const l of accepting) {
        try {
          const p = l.prepare?.(e);
          // Handled at once: an earlier event may hold this one's delivery back for a while.
          // Subscribers mostly wait for the same few promises (the event's loads): once each.
          if (p instanceof Promise && !waitingFor.has(p)) {
            waitingFor.add(p);
            preparing.push(p.catch(() => {}));
          }
        } catch {
          // A preparation only loads ahead; the subscriber's own checks meet the failure.
        }
      }
      const deliver = () => {
        for (const l of accepting) {
          try {
            l.deliver(e);
          } catch {
            // Nothing of one subscriber stops the others.
          }
        }
      };
      if (!preparing.length && !queued) {
        deliver();
        return;
      }
      queued++;
      delivering = (delivering ?? Promise.resolve())
        .then(() => Promise.all(preparing))
        .then(deliver)
        .catch(() => {})
        .finally(() => void queued--);
    },
  };
}

export function createTaskbayPubSub() {
  const topics = { approval: topic<ApprovalEventPayload>(), task: topic<TaskEventPayload>() };
  return {
    publish<T extends keyof Topics>(name: T, payload: Topics[T]): void {
      (topics[name] as ReturnType<typeof topic<Topics[T]>>).publish(payload);
    },
    subscribe<T extends keyof Topics>(name: T, opts: SubscribeOptions<Topics[T]> = {}): EventStream<Topics[T]> {
      return stream((topics[name] as ReturnType<typeof topic<Topics[T]>>).listeners, opts);
    },
  };
}

export type TaskbayPubSub = ReturnType<typeof createTaskbayPubSub>;
