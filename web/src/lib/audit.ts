// The audit trail in words: readable event labels (the raw type stays on hover) and actor names.

const OUTCOME: Record<string, string> = {
  APPROVE: 'Approved',
  EDIT_AND_APPROVE: 'Edited and approved',
  REJECT: 'Rejected',
  REQUEST_CHANGES: 'Changes requested',
  DELEGATE: 'Delegated',
};

const LABELS: Record<string, string> = {
  'approval.requested': 'Request opened',
  'approval.revised': 'New revision (reviewer edit)',
  'approval.delegated': 'Delegated',
  'approval.superseded': 'Superseded by a newer request',
  'approval.expired': 'Expired',
  'delivery.queued': 'Delivery queued',
  'delivery.delivered': 'Delivered to the agent',
  'delivery.failed': 'Delivery failed',
  'delivery.retried': 'Delivery retried',
  REQUESTED: 'Command requested by the hook',
  SHOWN: 'Command shown to a reviewer',
  APPROVED: 'Grant formed (approved)',
  REJECTED: 'Command rejected',
  EXECUTED: 'Command ran (exit 0)',
  FAILED: 'Command failed',
  REVOKED: 'Grant revoked',
  'command.activation_refused': 'Approval refused: fingerprint mismatch',
  'integrity.alert': 'Integrity alert: a row Taskbay did not sign was refused',
};

export function eventLabel(type: string, data: unknown): string {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (type === 'approval.decided') return OUTCOME[String(d.outcome)] ?? 'Decided';
  if (type === 'approval.revised' && typeof d.revision === 'number') return `Revision ${d.revision} (reviewer edit)`;
  if (type === 'FAILED' && typeof d.exit_code === 'number') return `Command failed (exit ${d.exit_code})`;
  return LABELS[type] ?? type;
}

/**
 * Who did it, by name when known: a person by name (the event's `actor`, which the server
 * resolves), the request's agent by name, the system as Taskbay.
 */
export function actorName(e: { actorType: string; actorId?: string | null; actor?: { name: string } | null }, agent?: { name: string } | null): string {
  if (e.actorType === 'system') return 'Taskbay';
  if (e.actorType === 'user' && e.actor) return e.actor.name;
  // On a request's own stream the one agent that acts is the request's (its task's agent): the
  // server appends agent events there for task.agentId only.
  if (e.actorType === 'agent' && agent) return agent.name;
  return e.actorId ? `${e.actorType} ${e.actorId.slice(0, 8)}` : e.actorType;
}
