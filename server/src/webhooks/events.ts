import { encodeGlobalID } from '@pothos/plugin-relay';
import type { WebhookPayloadType } from '../audit/catalogue.js';
import type { AuditEventRow } from '../audit/entities.js';
import { consoleLink } from '../http/console-link.js';

// What a webhook tells: the event types an endpoint can subscribe to and the JSON body (Standard
// Webhooks: {type, timestamp, data}). Which audit events each one stands for is declared with
// the audit events (audit/catalogue.ts, `webhook`). The body is built once, in the transaction
// that appends the audit event, and stored; every attempt sends it as is.

export const WEBHOOK_EVENTS = {
  APPROVAL_REQUESTED: { type: 'approval.requested', about: 'a request was opened (by an agent, a person or a command hook)' },
  APPROVAL_DECIDED: { type: 'approval.decided', about: 'a reviewer approved, edited and approved, rejected or asked for changes' },
  APPROVAL_EXPIRED: { type: 'approval.expired', about: 'a request expired undecided' },
  APPROVAL_SUPERSEDED: { type: 'approval.superseded', about: 'a newer request of the task replaced it, or its task ended' },
  DELIVERY_FAILED: { type: 'delivery.failed', about: 'an approved action could not be delivered to its agent' },
  EVIDENCE_DIGEST_MISMATCH: {
    type: 'evidence.digest_mismatch',
    about: 'the agent reported executing an approved request with a digest other than the approved one',
  },
  COMMAND_GRANT_CONSUMED: { type: 'command.grant_consumed', about: 'a coding agent used the grant of an approved command' },
  COMMAND_EXECUTED: { type: 'command.executed', about: 'an approved command ran and exited 0' },
  COMMAND_FAILED: { type: 'command.failed', about: 'an approved command failed, or never reported its outcome' },
} as const satisfies Record<string, { type: WebhookPayloadType; about: string }>;

export type WebhookEventName = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_NAMES = Object.keys(WEBHOOK_EVENTS) as WebhookEventName[];
/** The payload type of the "send test event" button; no endpoint subscribes to it. */
export const WEBHOOK_TEST_TYPE = 'webhook.test';

// Every payload type the catalogue tells an audit event as is one an endpoint can subscribe to.
type Unnamed = Exclude<WebhookPayloadType, (typeof WEBHOOK_EVENTS)[WebhookEventName]['type']>;
const everyTypeNamed: [Unnamed] extends [never] ? true : Unnamed = true;
void everyTypeNamed;

export { webhookTypeOf } from '../audit/catalogue.js';

export const payloadTypeOf = (name: WebhookEventName) => WEBHOOK_EVENTS[name].type;
export const eventNameOf = (type: string) => WEBHOOK_EVENT_NAMES.find((n) => WEBHOOK_EVENTS[n].type === type) ?? null;

/** The approval as it is once the event's change is written (read in the event's transaction). */
export interface ApprovalSnapshot {
  id: string;
  title: string;
  status: string;
  source: string;
  risk: string;
  revision: number;
  digest: string;
  agentId: string | null;
  taskId: string | null;
  expiresAt: Date | null;
  /** The requester's own call or thread id (createApproval's externalId), null when it has none. */
  externalId: string | null;
}

function approvalView(a: ApprovalSnapshot, publicUrl: string) {
  return {
    id: encodeGlobalID('Approval', a.id),
    url: consoleLink(publicUrl, a.id),
    title: a.title,
    status: a.status,
    source: a.source,
    risk: a.risk,
    revision: a.revision,
    digest: a.digest,
    agentId: a.agentId ? encodeGlobalID('Agent', a.agentId) : null,
    taskId: a.taskId ? encodeGlobalID('Task', a.taskId) : null,
    expiresAt: a.expiresAt ? new Date(a.expiresAt).toISOString() : null,
    externalId: a.externalId ?? null,
  };
}

function actorView(row: AuditEventRow) {
  const id = row.actorId;
  if (row.actorType === 'user' && id) return { type: 'user', id: encodeGlobalID('User', id) };
  if (row.actorType === 'agent' && id) return { type: 'agent', id: encodeGlobalID('Agent', id) };
  return { type: row.actorType, id: null };
}

/** What the event adds to the approval: only fields Taskbay wrote itself, never an agent's action or answer. */
function details(type: string, d: Record<string, unknown>): Record<string, unknown> {
  const pick = (...keys: string[]) => Object.fromEntries(keys.filter((k) => d[k] !== undefined).map((k) => [k, d[k]]));
  switch (type) {
    case 'approval.decided':
      return { decision: pick('outcome', 'comment', 'revision', 'digest', 'decisionId') };
    case 'approval.superseded':
      return { supersededById: typeof d.supersededById === 'string' ? encodeGlobalID('Approval', d.supersededById) : null, ...pick('reason') };
    case 'delivery.failed':
      return { delivery: pick('attempts', 'error', 'messageId') };
    case 'evidence.digest_mismatch':
      // Not the agent's detail: its words stay in Taskbay.
      return { evidence: pick('decisionId', 'outcome', 'reportedDigest', 'approvedDigest', 'messageId') };
    case 'command.grant_consumed':
    case 'command.executed':
    case 'command.failed':
      // Not the FAILED detail: a command's stderr may hold what should not leave Taskbay.
      return { command: { approvalId: d.approval_id, ...pick('commands', 'exit_code') } };
    default:
      return {};
  }
}

/** The JSON body of an audit event's webhook (a string: what is signed is exactly what is sent). */
export function eventPayload(type: string, row: AuditEventRow, approval: ApprovalSnapshot | null, publicUrl: string): string {
  const data = {
    approval: approval ? approvalView(approval, publicUrl) : null,
    actor: actorView(row),
    ...details(type, row.data),
    auditEventId: row.id,
  };
  return JSON.stringify({ type, timestamp: row.at.toISOString(), data });
}

/** The body of a test event (the console's "send test event" button). */
export function testPayload(endpointId: string, requestedBy: string, at: Date, publicUrl: string): string {
  return JSON.stringify({
    type: WEBHOOK_TEST_TYPE,
    timestamp: at.toISOString(),
    data: {
      endpointId: encodeGlobalID('WebhookEndpoint', endpointId),
      requestedBy: { type: 'user', id: encodeGlobalID('User', requestedBy) },
      console: publicUrl,
    },
  });
}
