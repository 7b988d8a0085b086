import { NetworkPolicyRefusal } from './agent-network.js';

// How a failed exchange with an agent is described. Callers (GraphQL errors, a delivery's
// lastError shown to reviewers) get the classification and the agent's host only; what the agent
// or the network actually said (status, the start of the body, the low-level error) is the
// admin-only detail, stored on the agent (Agent.lastError) and never put in a message.

export type AgentFailureKind = 'refused' | 'unreachable' | 'timeout' | 'http_status' | 'invalid_answer' | 'rpc';

/** How much of an upstream body the admin-only detail keeps. */
export const UPSTREAM_DETAIL_MAX_BYTES = 2048;
/** The whole admin-only detail is cut to this many characters. */
export const FAILURE_DETAIL_MAX_CHARS = 4096;

/**
 * The admin-only detail as kept: cut to FAILURE_DETAIL_MAX_CHARS, and without the `user:password@`
 * of any URL in it (fetch names the URL it refuses for carrying credentials, a redirect's
 * location may carry some): credentials are never repeated, not even to admins.
 */
export function truncateDetail(s: string): string {
  const clean = s.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, '$1');
  return clean.length > FAILURE_DETAIL_MAX_CHARS ? `${clean.slice(0, FAILURE_DETAIL_MAX_CHARS)}…` : clean;
}

/** The first UPSTREAM_DETAIL_MAX_BYTES of a response body, as text; the rest is not read. */
export async function readBodyExcerpt(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < UPSTREAM_DETAIL_MAX_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } catch {
    /* a broken body: keep what arrived */
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const buf = Buffer.concat(chunks);
  const cut = buf.subarray(0, UPSTREAM_DETAIL_MAX_BYTES).toString('utf8');
  return buf.byteLength > UPSTREAM_DETAIL_MAX_BYTES ? `${cut}… (truncated)` : cut;
}

/** Admin-only text for an HTTP answer that is not a success, given the excerpt of its body. */
export function httpDetail(res: Response, url: string, bodyExcerpt: string): string {
  const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
  return truncateDetail(
    [`HTTP ${res.status} from ${url}`, location ? `location: ${location}` : null, bodyExcerpt ? `body: ${bodyExcerpt}` : null].filter(Boolean).join('\n'),
  );
}

/** Admin-only text for an HTTP answer that is not a success (reads the start of its body). */
export async function httpFailureDetail(res: Response, url: string): Promise<string> {
  return httpDetail(res, url, await readBodyExcerpt(res));
}

/** The public reason for an HTTP status: redirects are named, since they are never followed. */
export function httpStatusReason(status: number): string {
  return status >= 300 && status < 400 ? `HTTP ${status} (a redirect; not followed)` : `HTTP ${status}`;
}

export interface ConnectFailure {
  kind: 'refused' | 'unreachable' | 'timeout';
  /** Safe to show: says what happened without upstream text. */
  reason: string;
  /** Admin-only: the low-level error. */
  detail: string;
}

const UNREACHABLE_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** Classifies a rejected fetch or a broken body read. */
export function classifyConnectFailure(err: unknown, timeoutMs: number): ConnectFailure {
  const e = err as { name?: string; message?: string; code?: string; cause?: { name?: string; code?: string; message?: string } };
  const cause = (e?.cause ?? e) as { name?: string; code?: string; message?: string };
  const detail = truncateDetail([e?.message, cause !== e ? `${cause?.code ?? cause?.name ?? ''}: ${cause?.message ?? ''}` : null].filter(Boolean).join(' / '));
  if (cause instanceof NetworkPolicyRefusal) {
    return { kind: 'refused', reason: `${cause.hostname} is refused by the agent network policy (${cause.rule})`, detail: cause.message };
  }
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || cause?.name === 'TimeoutError') {
    return { kind: 'timeout', reason: `no answer within ${timeoutMs} ms`, detail };
  }
  const code = cause?.code ?? '';
  const known = UNREACHABLE_REASONS[code];
  if (known) return { kind: 'unreachable', reason: known, detail };
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED)/.test(code)) return { kind: 'unreachable', reason: 'TLS handshake failed', detail };
  return { kind: 'unreachable', reason: 'could not connect', detail };
}
