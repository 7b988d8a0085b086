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
  /** Checked in order as the subscriber reads: an event it refuses is skipped. */
  visible?: (e: E) => boolean | Promise<boolean>;
}

const DONE = Object.freeze({ value: undefined, done: true }) as IteratorReturnResult<undefined>;

/**
 * The events of one topic from this call on, in publication order. The caller reads it to
 * the end or calls `return()` (which stops listening at once, even while a read is waiting).
 */
function stream<E>(listeners: Set<(e: E) => void>, opts: SubscribeOptions<E>): AsyncIterableIterator<E> {
  const queue: E[] = [];
  let waiting: ((r: IteratorResult<E>) => void) | null = null;
  let ended = false;
  const onEvent = (e: E) => {
    if (opts.when && !opts.when(e)) return;
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve({ value: e, done: false });
    } else queue.push(e);
  };
  listeners.add(onEvent);
  const take = (): IteratorResult<E> | Promise<IteratorResult<E>> => {
    if (ended) return DONE;
    if (queue.length) return { value: queue.shift()!, done: false };
    return new Promise((resolve) => (waiting = resolve));
  };
  const end = () => {
    ended = true;
    listeners.delete(onEvent);
    queue.length = 0;
    const resolve = waiting;
    waiting = null;
    resolve?.(DONE);
  };
  const iterator: AsyncIterableIterator<E> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      for (;;) {
        const step = await take();
        if (step.done || !opts.visible) return step;
        const visible = opts.visible(step.value);
        if ((visible === true || (visible !== false && (await visible))) && !ended) return step;
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

export function createTaskbayPubSub() {
  const listeners: { [T in keyof Topics]: Set<(e: Topics[T]) => void> } = { approval: new Set(), task: new Set() };
  return {
    publish<T extends keyof Topics>(topic: T, payload: Topics[T]): void {
      for (const listener of listeners[topic]) (listener as (e: Topics[T]) => void)(payload);
    },
    subscribe<T extends keyof Topics>(topic: T, opts: SubscribeOptions<Topics[T]> = {}): AsyncIterableIterator<Topics[T]> {
      return stream(listeners[topic] as Set<(e: Topics[T]) => void>, opts);
    },
  };
}

export type TaskbayPubSub = ReturnType<typeof createTaskbayPubSub>;
