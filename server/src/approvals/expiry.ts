import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { appendEvents, stream, SYSTEM, type AuditEventRow } from '../audit/module.js';
import { sql } from '../db/sql.js';
import { startDeadlineSweeper } from '../jobs/deadline-sweeper.js';
import type { JobDefinition } from '../jobs/job.js';

// Expiry without a job per request. Every instance that runs background work keeps one timer
// (jobs/deadline-sweeper.ts), armed for the nearest deadline of a PENDING request (approval_pending_expiry, an index on
// expires_at of PENDING rows). A request opened anywhere reaches every instance's LISTEN loop,
// which hands its deadline here: an earlier one re-arms the timer. When it fires, due requests
// are expired in batches, each row locked with SKIP LOCKED, so instances sweeping together
// expire each request once; the timer is then armed for the next deadline. The timer never
// waits longer than SAFETY_SWEEP_MS, which bounds what a missed notification could delay.
// Expiry is judged by this process's clock, like the deadline (expiryFor) and the decisions'
// check.

/** Requests expired per transaction. */
export const EXPIRE_BATCH = 100;
/** The longest the timer waits, whatever the next deadline. */
export const SAFETY_SWEEP_MS = 30_000;
/** A due request this sweep could not lock (another instance is expiring it): look again after. */
const LOCKED_RETRY_MS = 1000;

/**
 * Expires PENDING requests whose deadline has passed (or only `approvalId`), at most `limit`,
 * in one transaction: EXPIRED, closed now, an approval.expired event each. Rows another
 * transaction holds are skipped. Returns how many it expired.
 */
/**
 * What a later module does when requests expire, in the expiring transaction (AG-UI: the last open
 * interrupt of a run expiring sends the run's resume, agui/decision.ts). One hook per name.
 */
export type ExpiryHook = (tem: EntityManager, expired: { id: string; key: string | null }[]) => Promise<void>;
const expiryHooks = new Map<string, ExpiryHook>();
export function registerExpiryHook(name: string, hook: ExpiryHook): void {
  expiryHooks.set(name, hook);
}

export async function expireDue(em: EntityManager, opts: { now?: Date; approvalId?: string; limit?: number } = {}): Promise<number> {
  const now = opts.now ?? new Date();
  return em.transactional(async (tem) => {
    const rows = await sql<{ id: string; tenant_id: string; agent_id: string | null; task_id: string | null; expires_at: Date; key: string | null }>(
      tem,
      `update approval set status = 'EXPIRED', closed_at = ?, updated_at = ?
        where status = 'PENDING' and id in (
          select id from approval
           where status = 'PENDING' and expires_at <= ?${opts.approvalId ? ' and id = ?' : ''}
           order by expires_at limit ? for update skip locked)
        returning id, tenant_id, agent_id, task_id, expires_at, key`,
      [now, now, now, ...(opts.approvalId ? [opts.approvalId] : []), opts.limit ?? EXPIRE_BATCH],
    );
    rows.sort((a, b) => new Date(a.expires_at).getTime() - new Date(b.expires_at).getTime() || a.id.localeCompare(b.id));
    await appendEvents(
      tem,
      rows.map((a) => ({
        tenantId: a.tenant_id,
        stream: stream.approval(a.id),
        type: 'approval.expired',
        actor: SYSTEM,
        data: { approvalId: a.id, agentId: a.agent_id, taskId: a.task_id, expiresAt: new Date(a.expires_at).toISOString() },
      })),
    );
    if (rows.length) for (const hook of expiryHooks.values()) await hook(tem, rows);
    return rows.length;
  });
}

/** Marks one PENDING request EXPIRED if its time has come (a decision that came too late). */
export async function expireIfDue(em: EntityManager, approvalId: string, now = new Date()): Promise<boolean> {
  return (await expireDue(em, { approvalId, now, limit: 1 })) > 0;
}

async function nextDeadline(em: EntityManager): Promise<number | null> {
  const [row] = await sql<{ at: Date | null }>(em, `select min(expires_at) as at from approval where status = 'PENDING'`);
  return row?.at ? new Date(row.at).getTime() : null;
}

/** The deadline of a request an event opens (the request's own events carry it), else null. */
function deadlineOf(e: AuditEventRow): number | null {
  if (!e.stream.startsWith('approval:') || e.type === 'approval.expired') return null;
  const at = (e.data as { expiresAt?: unknown }).expiresAt;
  const ms = typeof at === 'string' ? Date.parse(at) : Number.NaN;
  return Number.isFinite(ms) ? ms : null;
}

export interface ExpirySweeper {
  /** An event this instance's LISTEN loop published: a request it opens may be due before the timer. */
  noteEvent(e: AuditEventRow): void;
  stop(): Promise<void>;
}

export function startExpirySweeper(orm: MikroORM, opts: { safetyMs?: number } = {}): ExpirySweeper {
  const sweeper = startDeadlineSweeper({
    name: 'expiry',
    safetyMs: opts.safetyMs ?? SAFETY_SWEEP_MS,
    lockedRetryMs: LOCKED_RETRY_MS,
    nextDeadline: () => nextDeadline(orm.em.fork()),
    sweepDue: (now) => expireDue(orm.em.fork(), { now, limit: EXPIRE_BATCH }),
  });
  return {
    noteEvent(e) {
      const at = deadlineOf(e);
      if (at !== null) sweeper.arm(at);
    },
    stop: () => sweeper.stop(),
  };
}

export const EXPIRE_JOB = 'expire_approval';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A database's job queue may hold expire_approval jobs, one per request, queued by versions
 * without the sweeper. They still run so none fails: each expires its request if due (the
 * sweeper would too), and queues nothing.
 */
export const expireJob: JobDefinition = {
  name: EXPIRE_JOB,
  async run(payload, _helpers, { orm }) {
    const approvalId = (payload as { approvalId?: unknown } | null)?.approvalId;
    if (typeof approvalId === 'string' && UUID.test(approvalId)) await expireIfDue(orm.em.fork(), approvalId);
  },
};
