import { codePointLength } from '../../../server/src/limits.js';

// Text boxes whose text the server limits (composer, comment, reason). The limit is counted as
// the server counts it, in Unicode code points (limits.ts codePointLength), never with HTML
// maxLength (UTF-16 units, which cuts an emoji-rich text at half its allowed length and
// truncates silently): the box keeps everything typed, says by how much it is over, and the
// button that would send it is disabled.

/** Why `what` cannot be sent: more than `max` characters as the server counts them; null when it fits. */
export function tooLong(what: string, text: string, max: number): string | null {
  const n = codePointLength(text);
  return n > max ? `${what} is too long to send: ${n} characters, at most ${max}. Remove ${n - max}.` : null;
}

/** The reason under a box whose text is over its limit (nothing when it fits). */
export function TooLongNote({ id, reason }: { id: string; reason: string | null }) {
  if (!reason) return null;
  return (
    <small className="error" id={id} role="status" data-testid="too-long">
      {reason}
    </small>
  );
}
