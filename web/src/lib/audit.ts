import { auditEventLabel } from '../../../server/src/audit/catalogue.js';

// The audit trail in words: readable event labels (the raw type stays on hover) and actor names.

/** The console's words for an event, as the audit catalogue declares them (the raw type when it has none). */
export const eventLabel = (type: string, data: unknown): string => auditEventLabel(type, data);

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
