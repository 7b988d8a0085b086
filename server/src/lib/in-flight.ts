import { errorForLog, log } from '../log.js';

/** A span for work started in the background: its name and attributes. */
export interface BackgroundSpan {
  name: string;
  attributes?: Record<string, string | number>;
}
export type TraceWork = (span: BackgroundSpan, work: () => Promise<unknown>) => Promise<unknown>;

/**
 * Work an instance starts without awaiting it (a delivery sent right after its decision
 * committed, decisions/service.ts): a failure is logged, never an unhandled rejection, and a
 * graceful stop waits for what is still running (app.ts). Once stopping, nothing new starts: what
 * would have started is left to its fallback (the delivery's job).
 */
export class InFlightWork {
  private readonly running = new Set<Promise<void>>();
  private draining = false;
  private traced: TraceWork = (_span, work) => work();

  /** How each piece of work is traced (observability: a span of its own when tracing is on). */
  traceWith(trace: TraceWork): void {
    this.traced = trace;
  }

  /**
   * Starts work unless stopping; whether it started. `span` names it in traces (low cardinality;
   * `what` is for the log and may hold ids).
   */
  start(what: string, work: () => Promise<unknown>, span: BackgroundSpan): boolean {
    if (this.draining) return false;
    // Called at once (a synchronous throw included), so what it sends first goes out now.
    const p: Promise<void> = (async () => this.traced(span, work))().then(
      () => {},
      (e: unknown) => log.error({ err: errorForLog(e) }, `${what} failed`),
    );
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
    return true;
  }

  get size(): number {
    return this.running.size;
  }

  /** Whether drain() was called: nothing new starts. */
  get stopping(): boolean {
    return this.draining;
  }

  /** Refuses new work and resolves once what is running has ended. */
  async drain(): Promise<void> {
    this.draining = true;
    while (this.running.size) await Promise.all([...this.running]);
  }
}
