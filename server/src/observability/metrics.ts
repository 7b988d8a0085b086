import type { MikroORM } from '@mikro-orm/postgresql';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type CommittedEvent, INTEGRITY_ALERT, INTEGRITY_ALERT_KINDS, FULL_VERIFICATION_SUMMARY } from '../audit/module.js';
import { withDeadline } from './deadline.js';

// Prometheus metrics of one instance, in its own registry. What happened (approvals opened and
// decided, deliveries) is counted from the audit events this instance committed (audit/committed.ts),
// the one place every state change passes; what is (queue depth, live operations, the LISTEN
// connection) is read when scraped. Process metrics, event-loop lag among them, are prom-client's.

/** A scrape reads the job queue for at most this long; the series is left out when it takes longer. */
export const QUEUE_DEPTH_TIMEOUT_MS = 1000;

const SOURCES = ['AGENT', 'USER', 'COMMAND'];
const RISKS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];
const OUTCOMES = ['APPROVE', 'EDIT_AND_APPROVE', 'REJECT', 'REQUEST_CHANGES', 'DELEGATE', 'EXPIRED'];
/** Label values come from the server's enums; anything else is "other" (bounded series). */
const known = (v: unknown, values: string[]) => (typeof v === 'string' && values.includes(v) ? v : 'other');

/** The command approval's first event (seed 002 names it REQUESTED; commands/service.ts). */
const COMMAND_REQUESTED = 'REQUESTED';

// Seconds. A decision waits on a person (seconds to days); a delivery on an agent (milliseconds up).
const DECISION_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86400, 7 * 86400];
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 3600];
const ATTEMPT_BUCKETS = [1, 2, 3, 5, 8, 13, 25];

const QUEUE_DEPTH = `select task_identifier as task,
    count(*) filter (where attempts >= max_attempts) as failed,
    count(*) filter (where attempts < max_attempts and locked_at is not null) as running,
    count(*) filter (where attempts < max_attempts and locked_at is null and run_at <= now()) as due,
    count(*) filter (where attempts < max_attempts and locked_at is null and run_at > now()) as scheduled
  from graphile_worker.jobs group by task_identifier`;
const JOB_STATES = ['due', 'running', 'scheduled', 'failed'] as const;

/** What the scrape-time gauges read; set once the parts have started (observability/index.ts). */
export interface LiveParts {
  listenerConnected(): boolean;
  wsConnections(): number;
  wsOperations(): number;
}

export interface InstanceMetrics {
  registry: Registry;
  onCommitted(events: CommittedEvent[]): void;
  listenerReconnected(): void;
  watch(parts: LiveParts): void;
}

export function createMetrics(orm: MikroORM): InstanceMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  let parts: LiveParts | null = null;

  const opened = new Counter({
    name: 'taskbay_approvals_opened_total',
    help: 'Approval requests opened by this instance',
    labelNames: ['source', 'risk'],
    registers,
  });
  const decided = new Counter({
    name: 'taskbay_approvals_decided_total',
    help: 'Approval requests decided by this instance (EXPIRED: closed by their deadline)',
    labelNames: ['outcome'],
    registers,
  });
  const escalated = new Counter({
    name: 'taskbay_approvals_escalated_total',
    help: "Approval requests escalated by their policy's rule (escalation/sweeper.ts)",
    labelNames: ['risk'],
    registers,
  });
  const decisionSeconds = new Histogram({
    name: 'taskbay_approval_decision_seconds',
    help: "From the request to a reviewer's decision",
    labelNames: ['outcome'],
    buckets: DECISION_BUCKETS,
    registers,
  });
  const deliverySeconds = new Histogram({
    name: 'taskbay_delivery_latency_seconds',
    help: "From the approving decision to the agent's answer to the approved message",
    buckets: DELIVERY_BUCKETS,
    registers,
  });
  const deliveryAttempts = new Histogram({
    name: 'taskbay_delivery_attempts',
    help: 'Attempts a finished delivery took (outcome: delivered, or failed after its last attempt)',
    labelNames: ['outcome'],
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const integrityAlerts = new Counter({
    name: 'taskbay_integrity_alerts_total',
    help: 'Rows refused for want of a signed record (audit/decision-record.ts): kind is what was refused (a delivery, an AG-UI resume, a quorum vote, a command grant)',
    labelNames: ['kind'],
    registers,
  });
  // Each kind's series is there at 0, so an alert rule sees the first increase.
  for (const kind of INTEGRITY_ALERT_KINDS) integrityAlerts.inc({ kind }, 0);
  const reconnects = new Counter({
    name: 'taskbay_events_listener_reconnects_total',
    help: 'Times the LISTEN connection was lost and listened again',
    registers,
  });
  new Gauge({
    name: 'taskbay_events_listener_connected',
    help: '1 while the LISTEN connection is up',
    registers,
    collect() {
      this.set(parts?.listenerConnected() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'taskbay_graphql_ws_connections',
    help: 'Open graphql-ws connections',
    registers,
    collect() {
      this.set(parts?.wsConnections() ?? 0);
    },
  });
  new Gauge({
    name: 'taskbay_graphql_ws_operations',
    help: 'Operations running on graphql-ws connections (live subscriptions, and queries in flight)',
    registers,
    collect() {
      this.set(parts?.wsOperations() ?? 0);
    },
  });
  new Gauge({
    name: 'taskbay_job_queue_depth',
    help: `Jobs in graphile-worker's queue by task and state (left out when the database does not answer within ${QUEUE_DEPTH_TIMEOUT_MS} ms)`,
    labelNames: ['task', 'state'],
    registers,
    async collect() {
      this.reset();
      const knex = orm.em.getKnex();
      let rows: Record<string, string | number>[];
      try {
        const result = await withDeadline(knex.raw(QUEUE_DEPTH).timeout(QUEUE_DEPTH_TIMEOUT_MS, { cancel: true }), QUEUE_DEPTH_TIMEOUT_MS, 'job queue depth');
        rows = (result as { rows: Record<string, string | number>[] }).rows;
      } catch {
        return;
      }
      for (const r of rows) for (const state of JOB_STATES) this.set({ task: String(r.task), state }, Number(r[state]));
    },
  });

  // The audit log's full verifications (audit/full-verification-schedule.ts), one query per scrape.
  // Both gauges of one scrape share one read.
  let summary: { at: number; rows: Promise<Record<string, string | number | null> | null> } | null = null;
  const readSummary = () => {
    if (!summary || Date.now() - summary.at > QUEUE_DEPTH_TIMEOUT_MS) summary = { at: Date.now(), rows: querySummary() };
    return summary.rows;
  };
  const querySummary = async (): Promise<Record<string, string | number | null> | null> => {
    try {
      const q = orm.em.getKnex().raw(FULL_VERIFICATION_SUMMARY).timeout(QUEUE_DEPTH_TIMEOUT_MS, { cancel: true });
      const result = await withDeadline(q, QUEUE_DEPTH_TIMEOUT_MS, 'audit verification summary');
      return (result as { rows: Record<string, string | number | null>[] }).rows[0] ?? null;
    } catch {
      return null;
    }
  };
  new Gauge({
    name: 'taskbay_audit_full_verification_last_timestamp_seconds',
    help: 'When the last full verification of the audit log finished, for the tenant verified least recently (0: none yet)',
    registers,
    async collect() {
      const r = await readSummary();
      if (r) this.set(r.oldest_finished == null ? 0 : Number(r.oldest_finished));
    },
  });
  new Gauge({
    name: 'taskbay_audit_full_verification_failed_tenants',
    help: 'Tenants whose last full verification of the audit log found a problem (a rewritten, missing or unsigned event) or could not run to its end',
    registers,
    async collect() {
      const r = await readSummary();
      if (r) this.set(Number(r.not_ok));
    },
  });

  new Gauge({
    name: 'taskbay_audit_failed_tenants',
    help: 'Tenants with a failed verification of the audit log that no admin has acknowledged (auditChain.failure, acknowledgeAuditFailure)',
    registers,
    async collect() {
      const r = await readSummary();
      if (r) this.set(Number(r.failed_tenants));
    },
  });

  const onCommitted = (events: CommittedEvent[]) => {
    for (const { row, latencyFrom } of events) {
      const d = row.data as Record<string, unknown>;
      const since = latencyFrom ? (row.at.getTime() - latencyFrom.getTime()) / 1000 : null;
      switch (row.type) {
        case 'approval.requested':
          opened.inc({ source: known(d.source, SOURCES), risk: known(d.risk, RISKS) });
          break;
        case COMMAND_REQUESTED:
          opened.inc({ source: 'COMMAND', risk: known(d.risk, RISKS) });
          break;
        case 'approval.decided':
        case 'approval.delegated': {
          const outcome = known(d.outcome, OUTCOMES);
          decided.inc({ outcome });
          if (since !== null) decisionSeconds.observe({ outcome }, since);
          break;
        }
        case 'approval.expired':
          decided.inc({ outcome: 'EXPIRED' });
          break;
        case 'approval.escalated':
          escalated.inc({ risk: known(d.risk, RISKS) });
          break;
        case 'delivery.delivered':
          if (since !== null) deliverySeconds.observe(since);
          if (typeof d.attempts === 'number') deliveryAttempts.observe({ outcome: 'delivered' }, d.attempts);
          break;
        case 'delivery.failed':
          if (typeof d.attempts === 'number') deliveryAttempts.observe({ outcome: 'failed' }, d.attempts);
          break;
        case INTEGRITY_ALERT:
          integrityAlerts.inc({ kind: known(d.kind, [...INTEGRITY_ALERT_KINDS]) });
          break;
      }
    }
  };

  return {
    registry,
    onCommitted,
    listenerReconnected: () => reconnects.inc(),
    watch(p) {
      parts = p;
    },
  };
}
