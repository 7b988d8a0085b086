import { errorForLog, log } from '../log.js';

// One timer per instance for the nearest deadline of some kind of row (a request's expiry, its
// escalation), shared by the sweepers that need one (approvals/expiry.ts,
// escalation/sweeper.ts). The timer is armed for the nearest deadline the database holds, and
// re-armed earlier by the deadlines the instance hears of (its LISTEN loop): when it fires, due
// rows are handled in batches (each sweeper locks its rows with SKIP LOCKED, so instances
// sweeping together handle each row once), and the timer is armed for the next deadline. It
// never waits longer than `safetyMs`, which bounds what a missed notification could delay.

export interface DeadlineSweeperOptions {
  /** For the log. */
  name: string;
  /** The nearest deadline (epoch ms) of a row still to handle, or null. */
  nextDeadline(): Promise<number | null>;
  /** Handles up to one batch of rows due at `now`; returns how many it handled (0: the due ones are locked by another instance). */
  sweepDue(now: Date): Promise<number>;
  /** The longest the timer waits, whatever the next deadline. */
  safetyMs: number;
  /** A due row this sweep could not lock: look again after this. */
  lockedRetryMs?: number;
}

export interface DeadlineSweeper {
  /** A deadline heard of: fires at it, unless the timer is already set to fire earlier. */
  arm(at: number): void;
  stop(): Promise<void>;
}

export function startDeadlineSweeper(opts: DeadlineSweeperOptions): DeadlineSweeper {
  const lockedRetryMs = opts.lockedRetryMs ?? 1000;
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Number.POSITIVE_INFINITY;
  let sweeping: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const arm = (at: number) => {
    if (stopped) return;
    const due = Math.min(at, Date.now() + opts.safetyMs);
    if (timer && due >= armedFor) return;
    if (timer) clearTimeout(timer);
    armedFor = due;
    timer = setTimeout(
      () => {
        timer = null;
        armedFor = Number.POSITIVE_INFINITY;
        void sweep();
      },
      Math.max(0, due - Date.now()),
    );
  };

  const sweepOnce = async () => {
    for (;;) {
      const next = await opts.nextDeadline();
      const now = Date.now();
      if (next === null || next > now) {
        arm(next ?? Number.POSITIVE_INFINITY);
        return;
      }
      const handled = await opts.sweepDue(new Date(now));
      if (stopped) return;
      if (handled === 0) {
        arm(now + lockedRetryMs);
        return;
      }
    }
  };

  // One sweep at a time; a request to sweep meanwhile runs another one after it.
  const sweep = (): Promise<void> => {
    if (sweeping) {
      again = true;
      return sweeping;
    }
    sweeping = (async () => {
      do {
        again = false;
        try {
          await sweepOnce();
        } catch (e) {
          log.warn({ err: errorForLog(e) }, `${opts.name} sweep failed; retrying`);
          arm(Date.now() + lockedRetryMs);
        }
      } while (again && !stopped);
    })().finally(() => {
      sweeping = null;
    });
    return sweeping;
  };

  void sweep();
  return {
    arm,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await sweeping;
    },
  };
}
