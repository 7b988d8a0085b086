import { auditEventLabel } from '../../../server/src/audit/catalogue.js';

// The audit trail in words: readable event labels (the raw type stays on hover) and actor names.

/** The console's words for an event, as the audit catalogue declares them (the raw type when it has none). */
export const eventLabel = (type: string, data: unknown): string => auditEventLabel(type, data);

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
