import { connections, operations } from './gql/functions.js';
import type { ApprovalFieldsFragment } from './gql/graphql.js';
import { TaskbayError } from './errors.js';
import { createRunner, type Runner, type TaskbayClientOptions } from './runner.js';

export interface WaitForDecisionOptions {
  signal?: AbortSignal;
  /** Called with the request each time it changes while it waits (also for changes that decide nothing). */
  onChange?: (approval: ApprovalFieldsFragment) => void;
  /**
   * Reads the request again every this many milliseconds besides listening (default 30,000; 0:
   * never). It covers a decision made before the subscription was live, or while the connection
   * was down.
   */
  recheckEveryMs?: number;
}

export type TaskbayClient = ReturnType<typeof operations> &
  Pick<Runner, 'request' | 'stream' | 'close'> & {
    /** Every node of a connection, page after page: `for await (const a of client.all.approvals({ status: ['PENDING'] }))`. */
    all: ReturnType<typeof connections>;
    /**
     * Resolves with the request once it is no longer PENDING (APPROVED, REJECTED,
     * CHANGES_REQUESTED, EXPIRED or SUPERSEDED): listens to approvalChanged and reads it once
     * first. A delegation leaves it PENDING.
     */
    waitForDecision(approvalId: string, options?: WaitForDecisionOptions): Promise<ApprovalFieldsFragment>;
  };

/** A client of one Taskbay server with one API token. `close()` ends its WebSocket (subscriptions). */
export function createTaskbayClient(options: TaskbayClientOptions): TaskbayClient {
  const run = createRunner(options);
  const ops = operations(run);

  async function waitForDecision(approvalId: string, opts: WaitForDecisionOptions = {}): Promise<ApprovalFieldsFragment> {
    const { signal, onChange, recheckEveryMs = 30_000 } = opts;
    const stop = new AbortController();
    const abort = () => stop.abort();
    signal?.addEventListener('abort', abort, { once: true });
    const changes = ops.approvalChanged({ approvalId }, { signal: stop.signal });
    let timer: ReturnType<typeof setInterval> | undefined;
    try {
      return await new Promise<ApprovalFieldsFragment>((resolve, reject) => {
        const settle = (a: ApprovalFieldsFragment): boolean => {
          if (a.status === 'PENDING') return false;
          resolve(a);
          return true;
        };
        // A recheck that finds the server unreachable waits for the next one (the first read does not).
        const read = (first: boolean) =>
          ops.approval({ id: approvalId }, { signal: stop.signal }).then(
            (a) => {
              if (!a) reject(new TaskbayError('NOT_FOUND', `approval ${approvalId} not found`));
              else settle(a);
            },
            (e) => (first || !(e instanceof TaskbayError && e.code === 'NETWORK_ERROR')) && reject(e),
          );
        signal?.addEventListener('abort', () => reject(signal.reason ?? new Error('aborted')), { once: true });
        if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
        (async () => {
          for await (const a of changes) {
            onChange?.(a);
            if (settle(a)) return;
          }
        })().catch(reject);
        void read(true);
        if (recheckEveryMs > 0) timer = setInterval(() => void read(false), recheckEveryMs);
      });
    } finally {
      clearInterval(timer);
      signal?.removeEventListener('abort', abort);
      stop.abort();
      await changes.return?.();
    }
  }

  return { ...ops, all: connections(run), request: run.request, stream: run.stream, close: run.close, waitForDecision };
}
