import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import { expireIfDue } from '../approvals/module.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { MCP_LIMITS } from '../limits.js';
import { localWakesOf } from './local-wake.js';

// Waiting for a person: until the request leaves PENDING, the wait ends, or the client goes.
// Woken by the request's own events: at once when they committed on this instance (local-wake.ts),
// else through the LISTEN loop's pub/sub; and every progressSeconds, when the client is told it
// is still waiting (a progress notification resets a patient client's request timeout) and the
// row is read again in case an event was missed.

export interface WaitOptions {
  until: number;
  signal: AbortSignal;
  /** Called every MCP_LIMITS.progressSeconds while it waits, with the seconds waited. */
  onProgress: (waitedSeconds: number) => void;
}

export async function waitForDecision(
  orm: MikroORM,
  pubsub: TaskbayPubSub,
  approval: ApprovalRow,
  read: (em: EntityManager) => Promise<ApprovalRow | null>,
  opts: WaitOptions,
): Promise<ApprovalRow> {
  const events = pubsub.subscribe('approval', { when: (e) => e.approvalId === approval.id });
  // A commit here that appended an event of the request: read again now (set before each read, so none is missed).
  let woken = false;
  let nudge: () => void = () => {};
  const unwatch =
    localWakesOf(orm)?.watch(approval.id, () => {
      woken = true;
      nudge();
    }) ?? (() => {});
  // One pending read of the pub/sub at a time, kept across turns that something else ended.
  let nextEvent: Promise<unknown> | null = null;
  const started = Date.now();
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
    opts.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  let nextProgress = started + MCP_LIMITS.progressSeconds * 1000;
  try {
    for (;;) {
      // Subscribed first, then read: a decision made before the subscription is seen here.
      woken = false;
      let current = (await read(orm.em.fork() as unknown as EntityManager)) ?? approval;
      const now = Date.now();
      // Past its expiry and still pending: expired now rather than when the sweeper comes by.
      if (current.status === 'PENDING' && current.expiresAt && current.expiresAt.getTime() <= now) {
        // The row's expiry is read in milliseconds; the database keeps microseconds.
        await expireIfDue(orm.em.fork() as unknown as EntityManager, current.id, new Date(current.expiresAt.getTime() + 1));
        current = (await read(orm.em.fork() as unknown as EntityManager)) ?? current;
      }
      if (current.status !== 'PENDING' || opts.signal.aborted) return current;
      // Still pending past its expiry: another transaction (a sweeper) holds it and is expiring it; its event comes.
      const expiring = !!current.expiresAt && current.expiresAt.getTime() <= now;
      if (now >= opts.until && !expiring) return current;
      if (now >= nextProgress) {
        opts.onProgress(Math.floor((now - started) / 1000));
        nextProgress = now + MCP_LIMITS.progressSeconds * 1000;
      }
      if (woken) continue;
      let timer: NodeJS.Timeout | undefined;
      nextEvent ??= events.next().then(() => {
        nextEvent = null;
      });
      await Promise.race([
        nextEvent,
        new Promise<void>((resolve) => (nudge = resolve)),
        stopped,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, expiring ? 50 : Math.max(0, Math.min(opts.until, nextProgress, current.expiresAt?.getTime() ?? Infinity) - now));
        }),
      ]);
      clearTimeout(timer);
      nudge = () => {};
    }
  } finally {
    unwatch();
    stop();
    await events.return!();
  }
}
