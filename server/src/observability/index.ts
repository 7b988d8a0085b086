import type { RequestListener } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { TaskList } from 'graphile-worker';
import type { Plugin } from 'graphql-yoga';
import { observeCommittedEvents } from '../audit/module.js';
import type { Config } from '../config.js';
import { setLogLevel } from '../log.js';
import type { TraceWork } from '../lib/in-flight.js';
import { withDeadline } from './deadline.js';
import { useOperationObservability } from './graphql.js';
import { observeRequests } from './http.js';
import { createMetrics, type InstanceMetrics } from './metrics.js';
import { startTracing, type Tracing } from './tracing.js';

// What one instance tells its operator: metrics (/metrics), readiness (/readyz), request-scoped
// JSON logs, and traces when configured. app.ts creates it first and hands it the parts it
// watches once they have started.

/** How long /readyz waits for the database's `select 1`. */
export const READINESS_TIMEOUT_MS = 1000;

type Check = 'ok' | 'failed' | 'off';
export interface Readiness {
  ready: boolean;
  checks: { database: Check; worker: Check; listener: Check };
  /** The checks that failed, by name. */
  failed: string[];
}

/** The started parts readiness and the gauges read. */
export interface WatchedParts {
  listener: { readonly connected: boolean };
  /** null: this instance runs no worker (startInstance's `worker: false`). */
  worker(): { readonly running: boolean } | null;
  ws: { liveConnections(): number; liveOperations(): number };
}

export interface Observability {
  metrics: InstanceMetrics;
  readiness(): Promise<Readiness>;
  yogaPlugin: Plugin;
  observeRequests(handler: RequestListener): RequestListener;
  /** Job handlers, traced when tracing is on. */
  wrapJobs(tasks: TaskList): TaskList;
  /** Work started in the background (lib/in-flight.ts), traced when tracing is on. */
  traceBackground: TraceWork;
  onListenerReconnect(): void;
  watch(parts: WatchedParts): void;
  stop(): Promise<void>;
}

export async function startObservability(config: Config, orm: MikroORM): Promise<Observability> {
  setLogLevel(config.logLevel);
  const tracing: Tracing | null = config.tracing ? await startTracing(config.tracing) : null;
  const metrics = createMetrics(orm);
  observeCommittedEvents(orm, metrics.onCommitted);
  let parts: WatchedParts | null = null;

  const databaseAnswers = async (): Promise<boolean> => {
    try {
      const query = orm.em.getKnex().raw('select 1').timeout(READINESS_TIMEOUT_MS, { cancel: true });
      await withDeadline(query, READINESS_TIMEOUT_MS, 'database');
      return true;
    } catch {
      return false;
    }
  };

  return {
    metrics,
    async readiness() {
      const worker = parts?.worker() ?? null;
      const checks: Readiness['checks'] = {
        database: (await databaseAnswers()) ? 'ok' : 'failed',
        worker: !worker ? 'off' : worker.running ? 'ok' : 'failed',
        listener: parts?.listener.connected ? 'ok' : 'failed',
      };
      const failed = Object.entries(checks)
        .filter(([, c]) => c === 'failed')
        .map(([name]) => name);
      return { ready: failed.length === 0, checks, failed };
    },
    yogaPlugin: useOperationObservability(tracing),
    observeRequests: (handler) => observeRequests(handler, tracing),
    wrapJobs: (tasks) => (tracing ? tracing.wrapJobs(tasks) : tasks),
    traceBackground: (span, work) => (tracing ? tracing.traceBackground(span, work) : work()),
    onListenerReconnect: () => metrics.listenerReconnected(),
    watch(p) {
      parts = p;
      metrics.watch({
        listenerConnected: () => p.listener.connected,
        wsConnections: () => p.ws.liveConnections(),
        wsOperations: () => p.ws.liveOperations(),
      });
    },
    async stop() {
      await tracing?.shutdown();
    },
  };
}
