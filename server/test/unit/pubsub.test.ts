import { describe, expect, it } from 'vitest';
import { createTaskbayPubSub, type TaskEventPayload } from '../../src/events/pubsub.js';

// The instance's pub/sub (events/pubsub.ts): events reach each subscriber in publication order;
// an event is delivered only once every accepting subscriber's preparation has ended; events
// taken synchronously at delivery never overtake one the subscriber is still reading.

const event = (seq: number): TaskEventPayload => ({ seq, type: 'task.status', tenantId: 't', taskId: `task-${seq}`, agentId: null });

/** A promise and its resolve/reject, to end a preparation when the test says so. */
function gate() {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

/**
 * Once every promise callback already due has run: setImmediate runs after the microtask queue
 * is empty. The pub/sub delivers through promise callbacks only, so whatever the settled
 * preparations set off (a delivery included) has happened by then; no timer guesses at it.
 */
const callbacksRun = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Reads `n` events from the stream into `seqs`, each as it arrives (with a bound, so a missing event fails the test). */
async function read(stream: AsyncIterator<TaskEventPayload>, n: number, seqs: number[] = []): Promise<number[]> {
  for (let i = 0; i < n; i++) {
    const step = await Promise.race([
      stream.next(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${seqs.length} of ${n} events`)), 2000)),
    ]);
    if (step.done) break;
    seqs.push(step.value.seq);
  }
  return seqs;
}

describe('pub/sub', () => {
  it('delivers in publication order when a later event is prepared first, and only after every preparation ended (failed ones too)', async () => {
    const pubsub = createTaskbayPubSub();
    const gates = new Map([1, 2, 3].map((seq) => [seq, gate()]));
    const prepared: number[] = [];
    const slow = pubsub.subscribe('task', { prepare: (e) => gates.get(e.seq)!.promise.then(() => void prepared.push(e.seq)) });
    const other = pubsub.subscribe('task', {});
    const received: number[] = [];
    const reading = read(other, 3, received);

    for (const seq of [1, 2, 3]) pubsub.publish('task', event(seq));
    gates.get(3)!.open();
    gates.get(2)!.fail(new Error('this preparation failed'));
    // Wait for what happened: preparation 3 ended (the subscriber recorded it) and 2 failed.
    await gates.get(3)!.promise;
    await gates.get(2)!.promise.catch(() => {});
    await callbacksRun();
    expect(prepared).toEqual([3]);
    // Event 1 is not prepared yet: nothing reached the other subscriber either.
    expect(received).toEqual([]);
    gates.get(1)!.open();
    await reading;
    expect(received).toEqual([1, 2, 3]);
    expect(await read(slow, 3)).toEqual([1, 2, 3]);
    expect(prepared).toEqual([3, 1]);
    await slow.return!();
    await other.return!();
  });

  it('takes an event at delivery only while the reader waits with nothing queued; otherwise the reader gets it, in order', async () => {
    const pubsub = createTaskbayPubSub();
    const stream = pubsub.subscribe('task', { visible: (e) => (e.seq === 2 ? Promise.resolve(true) : e.seq !== 4) });
    const handled: number[] = [];
    stream.handleAtOnce((e) => {
      handled.push(e.seq);
      return e.seq !== 3;
    });
    // Nobody reads yet: events 1 and 2 queue for the reader.
    pubsub.publish('task', event(1));
    pubsub.publish('task', event(2));
    expect(await read(stream, 2)).toEqual([1, 2]);
    expect(handled).toEqual([]);

    // The reader waits, nothing queued (read() calls next() at once, and next() waits before it
    // returns): 5 is taken at once, 3 is declined (left to the reader), 4 is invisible (skipped);
    // 6 arrives while the reader still has 3, so it goes to the reader.
    const next = read(stream, 2);
    pubsub.publish('task', event(5));
    pubsub.publish('task', event(4));
    pubsub.publish('task', event(3));
    pubsub.publish('task', event(6));
    expect(await next).toEqual([3, 6]);
    expect(handled).toEqual([5, 3]);
    await stream.return!();
  });

  it('return() ends a waiting read at once and stops listening', async () => {
    const pubsub = createTaskbayPubSub();
    const stream = pubsub.subscribe('task', {});
    const pending = stream.next();
    await stream.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    pubsub.publish('task', event(1));
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});
