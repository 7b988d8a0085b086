import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { appendEvents, stream, SYSTEM, type AuditPayload } from '../audit/module.js';
import type { PolicySnapshot } from '../policies/module.js';
import { sql } from '../db/sql.js';
import { startDeadlineSweeper } from '../jobs/deadline-sweeper.js';

// Escalation (docs/ESCALATION.md). A PENDING request whose frozen policy has an
// escalation rule, still PENDING afterSeconds after it opened, escalates once: it is assigned to
// the rule's person and/or reviewer group, its risk is raised to the rule's (never lowered),
// escalated_at is recorded and an approval.escalated event tells the audit log and every live
// subscriber. Escalation never decides: at its deadline the request still expires
// (approvals/expiry.ts). The database derives when a request is due (approval.escalate_at, from
// the policy; null when that is at or after the deadline), lets it escalate once and only while
// PENDING, and on commit notifies every instance of the due time (ESCALATION_CHANNEL), which
// re-arms this sweeper's timer (jobs/deadline-sweeper.ts), as the expiry sweeper does. Due rows
// are locked with SKIP LOCKED, so instances sweeping together escalate each request once.
// Judged by this process's clock, like expiry.

export const ESCALATION_CHANNEL = 'taskbay_escalation';
/** Requests escalated per transaction. */
export const ESCALATE_BATCH = 100;
/** The longest the timer waits, whatever the next due time (a missed notification waits at most this). */
export const ESCALATION_SAFETY_MS = 30_000;

interface EscalatedRow {
  id: string;
  tenant_id: string;
  agent_id: string | null;
  task_id: string | null;
  policy: PolicySnapshot;
  escalate_at: Date;
  risk: string;
  assignee_id: string | null;
  assignee_group_id: string | null;
  old_risk: string;
  old_assignee_id: string | null;
  old_group_id: string | null;
}

const RANKS = `array['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']`;

/**
 * Escalates PENDING requests due at `now` (or only `approvalId`), at most `limit`, in one
 * transaction; rows another transaction holds are skipped, and a request past its deadline is
 * left to expiry. A person or group the rule names that is no longer in the tenant is left out
 * (the event says so). Returns how many it escalated.
 */
export async function escalateDue(em: EntityManager, opts: { now?: Date; approvalId?: string; limit?: number } = {}): Promise<number> {
  const now = opts.now ?? new Date();
  return em.transactional(async (tem) => {
    const rows = await sql<EscalatedRow>(
      tem,
      `with due as (
         select id, risk as old_risk, assignee_id as old_assignee_id, assignee_group_id as old_group_id from approval
          where status = 'PENDING' and escalated_at is null and escalate_at <= ? and (expires_at is null or expires_at > ?)${opts.approvalId ? ' and id = ?' : ''}
          order by escalate_at, id limit ? for update skip locked)
       update approval a set
         escalated_at = ?, updated_at = ?,
         assignee_id = coalesce(
           (select u.id from app_user u where u.tenant_id = a.tenant_id and u.id::text = a.policy #>> '{escalation,toUserId}'), a.assignee_id),
         assignee_group_id = coalesce(
           (select g.id from reviewer_group g where g.tenant_id = a.tenant_id and g.id::text = a.policy #>> '{escalation,toGroupId}'), a.assignee_group_id),
         risk = case when array_position(${RANKS}, a.policy #>> '{escalation,raiseRiskTo}') > array_position(${RANKS}, a.risk)
                     then a.policy #>> '{escalation,raiseRiskTo}' else a.risk end
        from due where a.id = due.id and a.status = 'PENDING'
       returning a.id, a.tenant_id, a.agent_id, a.task_id, a.policy, a.escalate_at, a.risk, a.assignee_id, a.assignee_group_id,
                 due.old_risk, due.old_assignee_id, due.old_group_id`,
      [now, now, ...(opts.approvalId ? [opts.approvalId] : []), opts.limit ?? ESCALATE_BATCH, now, now],
    );
    rows.sort((a, b) => new Date(a.escalate_at).getTime() - new Date(b.escalate_at).getTime() || a.id.localeCompare(b.id));
    await appendEvents(
      tem,
      rows.map((r) => ({
        tenantId: r.tenant_id,
        stream: stream.approval(r.id),
        type: 'approval.escalated',
        actor: SYSTEM,
        data: escalationEventData(r, now),
      })),
    );
    return rows.length;
  });
}

function escalationEventData(r: EscalatedRow, now: Date): AuditPayload<'approval.escalated'> {
  const rule = r.policy.escalation;
  const changed: Record<string, { from: string | null; to: string | null }> = {};
  if (r.assignee_id !== r.old_assignee_id) changed.assigneeId = { from: r.old_assignee_id, to: r.assignee_id };
  if (r.assignee_group_id !== r.old_group_id) changed.assigneeGroupId = { from: r.old_group_id, to: r.assignee_group_id };
  if (r.risk !== r.old_risk) changed.risk = { from: r.old_risk, to: r.risk };
  // Named by the rule but gone from the tenant since the policy was written: left out, said here.
  const missing = [
    ...(rule?.toUserId && r.assignee_id !== rule.toUserId ? ['toUserId'] : []),
    ...(rule?.toGroupId && r.assignee_group_id !== rule.toGroupId ? ['toGroupId'] : []),
  ];
  return {
    approvalId: r.id,
    agentId: r.agent_id,
    taskId: r.task_id,
    policy: { id: r.policy.policyId, name: r.policy.name, version: r.policy.version },
    rule,
    dueAt: new Date(r.escalate_at).toISOString(),
    escalatedAt: now.toISOString(),
    assigneeId: r.assignee_id,
    assigneeGroupId: r.assignee_group_id,
    risk: r.risk,
    changed,
    ...(missing.length ? { missing } : {}),
  };
}

async function nextDue(em: EntityManager): Promise<number | null> {
  const [row] = await sql<{ at: Date | null }>(
    em,
    // The sweep's own filter: a request already past its deadline is expiry's, so it is not "next"
    // (it would wake the sweeper again and again until expiry closes it).
    `select min(escalate_at) as at from approval
      where status = 'PENDING' and escalated_at is null and escalate_at is not null and (expires_at is null or expires_at > now())`,
  );
  return row?.at ? new Date(row.at).getTime() : null;
}

export interface EscalationSweeper {
  /** A notification on ESCALATION_CHANNEL: a request due at this time (epoch ms) committed. */
  noteDue(payload: string): void;
  stop(): Promise<void>;
}

export function startEscalationSweeper(orm: MikroORM, opts: { safetyMs?: number } = {}): EscalationSweeper {
  const sweeper = startDeadlineSweeper({
    name: 'escalation',
    safetyMs: opts.safetyMs ?? ESCALATION_SAFETY_MS,
    nextDeadline: () => nextDue(orm.em.fork()),
    sweepDue: (now) => escalateDue(orm.em.fork(), { now, limit: ESCALATE_BATCH }),
  });
  return {
    noteDue(payload) {
      const at = Number(payload);
      if (Number.isFinite(at)) sweeper.arm(at);
    },
    stop: () => sweeper.stop(),
  };
}
