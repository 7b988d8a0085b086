// The console's session cookie: its name, lifetime and shape. The session behind it is auth/session.ts;
// this is what the HTTP and WebSocket layers read from a request.

export const SESSION_COOKIE = 'taskbay_session';
export const SESSION_TTL_SECONDS = 7 * 24 * 3600;

/** The session secret from a Cookie header, or null. */
export function sessionFromCookie(header: string | null | undefined): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === SESSION_COOKIE) {
      const v = part.slice(i + 1).trim();
      return /^[A-Za-z0-9_-]{20,200}$/.test(v) ? v : null;
    }
  }
  return null;
}

export function sessionCookie(secret: string, opts: { secure: boolean }): string {
  return `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_SECONDS}${opts.secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(opts: { secure: boolean }): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${opts.secure ? '; Secure' : ''}`;
}
