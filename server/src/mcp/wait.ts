import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import type { TaskbayPubSub } from '../events/pubsub.js';
import { MCP_LIMITS } from '../limits.js';

// Waiting for a person: until the request leaves PENDING, the wait ends, or the client goes.
// Woken by the request's own events (the LISTEN loop's pub/sub), and every progressSeconds, when
// the client is told it is still waiting (a progress notification resets a patient client's
// request timeout) and the row is read again in case an event was missed.

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
      const current = (await read(orm.em.fork() as unknown as EntityManager)) ?? approval;
      const now = Date.now();
      if (current.status !== 'PENDING' || now >= opts.until || opts.signal.aborted) return current;
      if (now >= nextProgress) {
        opts.onProgress(Math.floor((now - started) / 1000));
        nextProgress = now + MCP_LIMITS.progressSeconds * 1000;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        events.next(),
        stopped,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.max(0, Math.min(opts.until, nextProgress) - now));
        }),
      ]);
      clearTimeout(timer);
    }
  } finally {
    stop();
    await events.return!();
  }
}
