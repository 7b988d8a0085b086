// Unexpected errors are logged for the operator, bounded: a database error's message carries
// the whole SQL with its parameters, and a parameter may be megabytes a caller sent.

/** Characters of an error message kept in the log. */
export const LOG_MESSAGE_MAX = 2048;
const STACK_FRAMES_MAX = 12;

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters]`;
}

/** "Name: message" (clipped) and the first stack frames, for console.error. */
export function errorForLog(e: unknown, max = LOG_MESSAGE_MAX): string {
  if (!(e instanceof Error)) return clip(typeof e === 'string' ? e : String(JSON.stringify(e) ?? e), max);
  const frames = (e.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).slice(0, STACK_FRAMES_MAX);
  const cause = e.cause !== undefined ? `\n  cause: ${clip(e.cause instanceof Error ? `${e.cause.name}: ${e.cause.message}` : String(e.cause), max)}` : '';
  return [clip(`${e.name}: ${e.message}`, max), ...frames].join('\n') + cause;
}
