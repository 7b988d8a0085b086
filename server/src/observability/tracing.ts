import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type * as OtelApi from '@opentelemetry/api';
import type { TaskList } from 'graphile-worker';
import type { TracingConfig } from '../config.js';
import type { BackgroundSpan } from '../lib/in-flight.js';

// OpenTelemetry traces, only when an OTLP endpoint is configured: then, and only then, the SDK is
// loaded (dynamic imports below) and spans are recorded, one per HTTP request (named by its
// route), per GraphQL operation (observability/graphql.ts) and per job run, exported over
// OTLP/HTTP as JSON in batches. The provider is the instance's own (not registered globally);
// parents are carried in this module's AsyncLocalStorage, and an incoming W3C `traceparent`
// continues the caller's trace.

export interface SpanHandle {
  /** Runs fn (and what it starts) with this span as the parent of new spans. */
  run<T>(fn: () => T): T;
  end(opts?: { name?: string; attributes?: Record<string, string | number | string[]>; error?: string }): void;
}

export interface Tracing {
  startHttpSpan(req: IncomingMessage, path: string): SpanHandle;
  startOperationSpan(type: string, name: string | null): SpanHandle;
  wrapJobs(tasks: TaskList): TaskList;
  /** Work started in the background (lib/in-flight.ts), a child of the span that started it. */
  traceBackground(span: BackgroundSpan, work: () => Promise<unknown>): Promise<unknown>;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZEROS = /^0+$/;

export async function startTracing(config: TracingConfig): Promise<Tracing> {
  const [api, sdk, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new sdk.NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }))],
  });
  const tracer = provider.getTracer('taskbay');
  const active = new AsyncLocalStorage<OtelApi.Context>();

  /** The caller's span from `traceparent` (W3C trace context, version 00), if well-formed. */
  const remoteParent = (header: string | string[] | undefined): OtelApi.Context => {
    const m = typeof header === 'string' ? TRACEPARENT.exec(header.trim()) : null;
    if (!m || ZEROS.test(m[1]!) || ZEROS.test(m[2]!)) return api.ROOT_CONTEXT;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 1, isRemote: true });
  };

  const handle = (span: OtelApi.Span, parent: OtelApi.Context): SpanHandle => {
    const ctx = api.trace.setSpan(parent, span);
    return {
      run: (fn) => active.run(ctx, fn),
      end({ name, attributes, error } = {}) {
        if (name) span.updateName(name);
        if (attributes) span.setAttributes(attributes);
        if (error) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error });
        span.end();
      },
    };
  };
  const start = (name: string, kind: OtelApi.SpanKind, attributes: OtelApi.Attributes, parent = active.getStore() ?? api.ROOT_CONTEXT) =>
    handle(tracer.startSpan(name, { kind, attributes }, parent), parent);
  /** Runs fn as the span's work: the span ends with it, marked an error when it throws. */
  const within = async <T>(span: SpanHandle, fn: () => Promise<T>): Promise<T> => {
    try {
      const result = await span.run(fn);
      span.end();
      return result;
    } catch (e) {
      span.end({ error: e instanceof Error ? e.message.slice(0, 500) : 'failed' });
      throw e;
    }
  };

  return {
    startHttpSpan: (req, path) =>
      start(req.method ?? 'HTTP', api.SpanKind.SERVER, { 'http.request.method': req.method ?? '', 'url.path': path }, remoteParent(req.headers.traceparent)),
    startOperationSpan: (type, name) =>
      start(name ? `${type} ${name}` : type, api.SpanKind.INTERNAL, { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) }),
    wrapJobs: (tasks) =>
      Object.fromEntries(
        Object.entries(tasks).map(([task, run]) => [
          task,
          ((payload, helpers) => {
            const span = start(
              `job ${task}`,
              api.SpanKind.CONSUMER,
              { 'taskbay.job.task': task, 'taskbay.job.id': String(helpers.job.id), 'taskbay.job.attempt': helpers.job.attempts },
              api.ROOT_CONTEXT,
            );
            return within(span, async () => run!(payload, helpers));
          }) as NonNullable<TaskList[string]>,
        ]),
      ),
    // It may outlive its parent (the request answers first): a child span that ends later.
    traceBackground: ({ name, attributes }, work) => within(start(name, api.SpanKind.INTERNAL, attributes ?? {}), work),
    shutdown: () => provider.shutdown(),
  };
}
