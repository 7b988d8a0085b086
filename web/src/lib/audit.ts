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

/** The raw id inside a Relay global id ("User:<uuid>" in base64), or the id itself. */
export function rawId(globalId: string): string {
  try {
    const s = atob(globalId);
    const i = s.indexOf(':');
    return i > 0 ? s.slice(i + 1) : globalId;
  } catch {
    return globalId;
  }
}

/** Who did it, by name when known: people by name, the agent by name, the system as Taskbay. */
export function actorName(
  actorType: string,
  actorId: string | null | undefined,
  known: { users: { id: string; name: string }[]; agent?: { id: string; name: string } | null },
): string {
  if (actorType === 'system') return 'Taskbay';
  if (actorType === 'user' && actorId) {
    const u = known.users.find((x) => rawId(x.id) === actorId);
    return u ? u.name : `user ${actorId.slice(0, 8)}`;
  }
  if (actorType === 'agent' && actorId) {
    return known.agent && rawId(known.agent.id) === actorId ? known.agent.name : `agent ${actorId.slice(0, 8)}`;
  }
  return actorId ? `${actorType} ${actorId.slice(0, 8)}` : actorType;
}
