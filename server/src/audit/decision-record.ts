import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeyObject } from 'node:crypto';
import { actionDigest, type ApprovalAction } from '../verify-approval/index.js';
import { sql } from '../db/sql.js';
import { log } from '../log.js';
import { eventHash, rowToEvent, stream, SYSTEM, type AuditEventInput, type AuditEventRow } from './log.js';
import { auditSignerOf, verifySignature } from './signing.js';

// A decision's signed record: the rule that nothing is signed for an agent, delivered, counted as
// a quorum vote or handed out as a command grant on the strength of a decision row alone. The
// deciding instance appends `approval.decided` (a final decision) or `approval.voted` (a vote
// toward a quorum) in the decision's transaction (decisions/service.ts), hashed over the decision
// and its actor and signed with the audit key, which lives outside the database. The app role can
// write decision, delivery and job rows, and insert audit events, but cannot sign: a row written
// behind Taskbay's back has no event that verifies and matches it, so it is refused and reported
// (INTEGRITY_ALERT), never acted on.

export const DECISION_EVENT_TYPES = ['approval.decided', 'approval.voted'] as const;
export const isDecisionEventType = (type: string) => (DECISION_EVENT_TYPES as readonly string[]).includes(type);

/** The audit event that reports a row Taskbay did not sign (on the approval's stream). */
export const INTEGRITY_ALERT = 'integrity.alert';

/** What was refused because of it: the label of taskbay_integrity_alerts_total. */
export const INTEGRITY_ALERT_KINDS = ['delivery', 'agui_resume', 'quorum_vote', 'command_grant'] as const;
export type IntegrityAlertKind = (typeof INTEGRITY_ALERT_KINDS)[number];

export type DecisionRecordProblem =
  /** No audit event names the decision (or none of those that do is signed). */
  | 'no_signed_event'
  /** An event names it, but its hash does not recompute from its fields or its signature does not verify. */
  | 'bad_signature'
  /** A verifying event, whose content differs from the rows (tenant, request, outcome, revision, digest, decider, vote). */
  | 'mismatch'
  /** The rows match the signed event, but the action about to be used does not hash to the signed digest. */
  | 'action_digest';

export type DecisionRecordVerdict = { ok: true; event: AuditEventRow } | { ok: false; problem: DecisionRecordProblem; message: string };

/** The decision row, as far as its signed record binds it. */
export interface DecisionFields {
  id: string;
  approvalId: string;
  outcome: string;
  revision: number;
  digest: string;
  reviewerId: string;
  vote: boolean;
}

export interface DecisionRecordInput {
  /** The request acted on: its id and tenant, as the caller read them. */
  approval: { id: string; tenantId: string };
  decision: DecisionFields;
  /** Every event that may record the decision (decisionEventsSubquery, loadDecisionEvents). */
  events: readonly AuditEventRow[];
  /**
   * What is about to be used (a delivery's action, a command grant's command), with the revision
   * and digest it will be signed or handed out under: all must be the signed ones. `digestOf` is
   * the digest rule of its kind (approvals/digest.ts actionDigest unless said otherwise).
   * Present, the decision must be a final approval (APPROVE or EDIT_AND_APPROVE, not a vote).
   * Absent: a vote being counted, which uses nothing itself.
   */
  acting?: { action: unknown; revision: number; digest: string; digestOf?: (action: never) => string };
}

/**
 * The events that may record decision `decisionColumn` of request `approvalColumn`, as a JSON
 * array of audit_event rows, oldest first: a subquery for the statement that reads the decision
 * (the delivery's one statement before the send, delivery/worker.ts), so the check costs no round trip.
 */
export function decisionEventsSubquery(approvalColumn: string, decisionColumn: string): string {
  return `(select coalesce(json_agg(e order by e.seq), '[]'::json) from audit_event e
      where e.stream = 'approval:' || ${approvalColumn}::text and e.type in (${DECISION_EVENT_TYPES.map((t) => `'${t}'`).join(', ')})
        and e.data->>'decisionId' = ${decisionColumn}::text)`;
}

/** Rows of decisionEventsSubquery (json) as events. */
export function decisionEventsOf(json: unknown): AuditEventRow[] {
  const rows = typeof json === 'string' ? JSON.parse(json) : json;
  return Array.isArray(rows) ? rows.map((r) => rowToEvent(r as Record<string, unknown>)) : [];
}

/** The events that may record each of these decisions, by decision id: one statement. */
export async function loadDecisionEvents(
  em: EntityManager,
  decisions: readonly Pick<DecisionFields, 'id' | 'approvalId'>[],
): Promise<Map<string, AuditEventRow[]>> {
  const byDecision = new Map<string, AuditEventRow[]>(decisions.map((d) => [d.id, []]));
  if (!decisions.length) return byDecision;
  const rows = await sql(em, `select * from audit_event where stream in (?) and type in (?) and data->>'decisionId' in (?) order by seq`, [
    [...new Set(decisions.map((d) => stream.approval(d.approvalId)))],
    [...DECISION_EVENT_TYPES],
    decisions.map((d) => d.id),
  ]);
  for (const e of rows.map(rowToEvent)) byDecision.get(String(e.data.decisionId))?.push(e);
  return byDecision;
}

/** The instance's trusted audit key (the one it signs with; instances sharing a database share it). */
export function trustedAuditKey(em: EntityManager): KeyObject {
  return auditSignerOf(em).publicKey;
}

/** Whether the event is one Taskbay wrote: its hash recomputes from its fields and the audit key signed that hash. */
export function isSignedByTaskbay(key: KeyObject, e: AuditEventRow): boolean {
  return !!e.sig && eventHash(e) === e.hash && verifySignature(key, 'event', e.hash, e.sig);
}

const APPROVING = ['APPROVE', 'EDIT_AND_APPROVE'];

const RANK: Record<DecisionRecordProblem, number> = { no_signed_event: 0, bad_signature: 1, mismatch: 2, action_digest: 3 };

/**
 * The one check: the decision row has an event, signed by this instance's audit key, that says
 * the same (tenant, request, decision, outcome, revision, digest, decider, vote or final), and
 * what is about to be used hashes to that signed digest. Any one such event suffices (an event
 * inserted beside it without Taskbay's signature changes nothing).
 */
export function checkDecisionRecord(key: KeyObject, input: DecisionRecordInput): DecisionRecordVerdict {
  const { approval, decision, acting } = input;
  let worst: { problem: DecisionRecordProblem; message: string } = {
    problem: 'no_signed_event',
    message: `no signed audit event records decision ${decision.id}`,
  };
  const consider = (problem: DecisionRecordProblem, message: string) => {
    if (RANK[problem] > RANK[worst.problem]) worst = { problem, message };
  };
  for (const e of input.events) {
    if (!e.sig) continue;
    if (!isSignedByTaskbay(key, e)) {
      consider('bad_signature', `the audit event recording decision ${decision.id} (seq ${e.seq}) does not verify with the audit key`);
      continue;
    }
    const d = e.data;
    const differ: string[] = [];
    if (e.tenantId !== approval.tenantId) differ.push('tenant');
    if (e.stream !== stream.approval(approval.id) || d.approvalId !== approval.id || decision.approvalId !== approval.id) differ.push('request');
    if (d.decisionId !== decision.id) differ.push('decision');
    if (e.type !== (decision.vote ? 'approval.voted' : 'approval.decided')) differ.push('vote');
    if (d.outcome !== decision.outcome) differ.push('outcome');
    if (d.revision !== decision.revision) differ.push('revision');
    if (d.digest !== decision.digest) differ.push('digest');
    if (e.actorType !== 'user' || e.actorId !== decision.reviewerId) differ.push('decider');
    if (differ.length) {
      consider('mismatch', `decision ${decision.id} differs from its signed record in: ${differ.join(', ')}`);
      continue;
    }
    if (acting && (decision.vote || !APPROVING.includes(decision.outcome))) {
      consider('mismatch', `decision ${decision.id} is ${decision.vote ? 'a vote' : `${decision.outcome}`}, not a final approval`);
      continue;
    }
    if (acting) {
      const digestOf = (acting.digestOf ?? actionDigest) as (action: unknown) => string;
      let digest: string | null;
      try {
        digest = digestOf(acting.action as ApprovalAction);
      } catch {
        digest = null;
      }
      const off = [
        ...(acting.revision !== d.revision ? ['revision'] : []),
        ...(acting.digest !== d.digest ? ['digest'] : []),
        ...(digest !== d.digest ? ['action'] : []),
      ];
      if (off.length) {
        consider(
          'action_digest',
          `the request's ${off.join(', ')} ${off.length > 1 ? 'differ' : 'differs'} from what decision ${decision.id} signed (digest ${String(d.digest)})`,
        );
        continue;
      }
    }
    return { ok: true, event: e };
  }
  return { ok: false, ...worst };
}

/** The words a refused delivery or grant gives (its lastError, its error). */
export function refusalMessage(verdict: Extract<DecisionRecordVerdict, { ok: false }>): string {
  return `refused: the decision has no valid signed record (${verdict.message})`;
}

/**
 * The integrity alert of a refused row, to append in the transaction that records the refusal
 * (signed like every event: the report itself cannot be forged), and its log line. Counted as
 * taskbay_integrity_alerts_total{kind} once committed (observability/metrics.ts).
 */
export function integrityAlert(
  kind: IntegrityAlertKind,
  verdict: Extract<DecisionRecordVerdict, { ok: false }>,
  at: { tenantId: string; approvalId: string; agentId?: string | null; taskId?: string | null; decisionId: string | null; deliveryId?: string | null },
): AuditEventInput {
  log.error(
    {
      integrityAlert: kind,
      problem: verdict.problem,
      approvalId: at.approvalId,
      decisionId: at.decisionId ?? undefined,
      deliveryId: at.deliveryId ?? undefined,
    },
    `integrity alert: ${kind} refused, ${verdict.message}`,
  );
  return {
    tenantId: at.tenantId,
    stream: stream.approval(at.approvalId),
    type: INTEGRITY_ALERT,
    actor: SYSTEM,
    data: {
      approvalId: at.approvalId,
      agentId: at.agentId ?? null,
      taskId: at.taskId ?? null,
      decisionId: at.decisionId,
      ...(at.deliveryId ? { deliveryId: at.deliveryId } : {}),
      kind,
      problem: verdict.problem,
      message: verdict.message,
    },
  };
}
