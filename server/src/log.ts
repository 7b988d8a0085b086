import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// The one logging module: JSON lines (pino) on stdout. A line written while an HTTP request or a
// GraphQL operation is handled carries that request's id (reqId), from the scope opened where the
// request arrives (observability/http.ts, graphql/ws.ts). Every string is clipped: a database
// error's message carries the whole SQL with its parameters, and an agent's text may be megabytes.

/** Characters of one logged string (a message, an error, a field) kept in the log. */
export const LOG_MESSAGE_MAX = 2048;
const STACK_FRAMES_MAX = 12;
/** Nesting of a logged object kept; deeper values are replaced by a marker. */
const FIELD_DEPTH_MAX = 4;

function clip(s: string, max = LOG_MESSAGE_MAX): string {
  return s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters]`;
}

function clipFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return clip(value);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (depth >= FIELD_DEPTH_MAX) return '[nested too deep]';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => clipFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = clipFields(v, depth + 1);
  return out;
}

/** "Name: message" (clipped) and the first stack frames: the `err` field of an error line. */
export function errorForLog(e: unknown, max = LOG_MESSAGE_MAX): string {
  if (!(e instanceof Error)) return clip(typeof e === 'string' ? e : String(JSON.stringify(e) ?? e), max);
  const frames = (e.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, STACK_FRAMES_MAX);
  const cause = e.cause !== undefined ? `\n  cause: ${clip(e.cause instanceof Error ? `${e.cause.name}: ${e.cause.message}` : String(e.cause), max)}` : '';
  return [clip(`${e.name}: ${e.message}`, max), ...frames].join('\n') + cause;
}

/** What is known about the request being handled; `operation` is filled in by the GraphQL layer. */
export interface RequestScope {
  readonly reqId: string;
  /** "mutation createApproval": the GraphQL operation this request ran (for the request's own line). */
  operation?: string;
  /** The route template that answered (http/routes.ts), for the request's line and span. */
  route?: string;
  /**
   * An HTTP request's freshness proofs (lib/fresh-cache.ts): the first round trip on a LISTEN
   * connection begun within the request serves every cache the request asks later. Absent from
   * scopes that outlive a request (a subscription's events each prove freshness anew).
   */
  freshness?: Map<object, Promise<number | null>>;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs fn (and everything it starts) in a request's scope: its log lines carry reqId. */
export function inRequestScope<T>(s: RequestScope, fn: () => T): T {
  return scope.run(s, fn);
}

export function requestScope(): RequestScope | undefined {
  return scope.getStore();
}

/** A caller's X-Request-Id when it is a short token of safe characters; otherwise a new one. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * Where the lines go: stdout, written asynchronously (a synchronous write per line costs ~100 µs
 * when stdout is a pipe, ~6 µs this way); what is buffered is written out when the process exits.
 */
export const logDestination = pino.destination({ dest: 1, sync: false });

export const log: Logger = pino(
  {
    level: 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => clipFields(object) as Record<string, unknown>,
    },
    mixin: () => {
      const s = scope.getStore();
      return s ? { reqId: s.reqId } : {};
    },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? clip(a) : a)) as Parameters<typeof method>);
      },
    },
  },
  logDestination,
);

/** TASKBAY_LOG_LEVEL; the logger is one per process, so the last instance started sets it. */
export function setLogLevel(level: LogLevel) {
  log.level = level;
}
