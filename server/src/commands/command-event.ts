import type { ApprovalRow } from '../approvals/entities.js';
import { stream, type Actor, type AuditEventInput, type AuditEventType, type AuditPayload } from '../audit/module.js';
import type { CommandApprovalRow } from './entities.js';

/** The fields commandEvent adds to every event of a command approval. */
type Routing = 'approvalId' | 'agentId' | 'approval_id';
/** The event types of a command approval: those whose payload carries its routing. */
type CommandApprovalEventType = { [T in AuditEventType]: Routing extends keyof AuditPayload<T> ? T : never }[AuditEventType];
/** What the caller gives of the payload (per type, when the type is one of several). */
type CommandEventData<T extends CommandApprovalEventType> = T extends unknown ? Omit<AuditPayload<T>, Routing> : never;

/** An event of a command approval (seed 002's REQUESTED … REVOKED, or our own), in its approval's stream. */
export function commandEvent<T extends CommandApprovalEventType>(
  command: CommandApprovalRow,
  approval: Pick<ApprovalRow, 'agentId'>,
  type: T,
  actor: Actor,
  data: CommandEventData<T>,
): AuditEventInput<T> {
  return {
    tenantId: command.tenantId,
    stream: stream.approval(command.id),
    type,
    actor,
    // approvalId/agentId route the event to subscriptions (approvalChanged); agentId is the
    // Taskbay agent (the hook's agent record), agent_id the coding agent of seed 002.
    data: { approvalId: command.id, agentId: approval.agentId ?? null, approval_id: command.approvalId, ...data } as AuditPayload<T>,
  };
}
