import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** TASKBAY_LOG_FORMAT: `auto` is text on a terminal, JSON otherwise (main.ts decides). */
export const LOG_FORMATS = ['auto', 'json', 'text'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];
export type LogFormat = Exclude<LogFormatSetting, 'auto'>;

// The one logging module: JSON lines (pino) on stdout, or the same lines made readable for a
// terminal (setLogFormat('text')). A line written while an HTTP request or a
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
 * stdout, written asynchronously (a synchronous write per line costs ~100 µs when stdout is a
 * pipe, ~6 µs this way); what is buffered is written out when the process exits.
 */
const stdout = pino.destination({ dest: 1, sync: false });
let format: LogFormat = 'json';

/**
 * Where pino writes its JSON lines (tests spy on it): passed on as they are, or as readable text
 * in the text format. The one way to stdout, so start-up text (writeOut) and log lines keep their order.
 */
export const logDestination = {
  write(line: string): boolean {
    return stdout.write(format === 'text' ? textLine(line) : line);
  },
};

/** Text for stdout as it is (the start-up lines of a terminal), in order with the log lines. */
export function writeOut(text: string): void {
  stdout.write(text);
}

/** The format of the lines from now on; the logger is one per process, as for the level. */
export function setLogFormat(f: LogFormat) {
  format = f;
}

const OMITTED_IN_TEXT = new Set(['level', 'time', 'pid', 'hostname', 'msg']);
const BARE = /^[\w.:/@+-]{1,200}$/;
// Control characters, newlines included: an agent's text in a message must not move the cursor,
// recolour or retitle the operator's terminal, nor forge a line of its own.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const printable = (s: string) => s.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * A JSON log line as a person reads it: `14:03:07 WARN  message  key=value …`, local time, an
 * error's lines indented below. A line that is not JSON passes unchanged.
 */
export function textLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === 'string' ? new Date(entry.time).toTimeString().slice(0, 8) : '';
  const level = String(entry.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const stack = typeof entry.err === 'string' ? entry.err : null;
  const fields = Object.entries(entry)
    .filter(([k]) => !OMITTED_IN_TEXT.has(k) && !(k === 'err' && stack !== null))
    .map(([k, v]) => `${printable(k)}=${typeof v === 'string' && BARE.test(v) ? v : printable(JSON.stringify(v) ?? String(v))}`);
  const head = `${time} ${level} ${printable(String(entry.msg ?? ''))}${fields.length ? `  ${fields.join(' ')}` : ''}`;
  const below =
    stack === null
      ? ''
      : stack
          .split('\n')
          .map((l) => `\n    ${printable(l)}`)
          .join('');
  return `${head}${below}\n`;
}

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
