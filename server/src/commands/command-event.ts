import type { ApprovalRow } from '../approvals/entities.js';
import { stream, type Actor, type AuditEventInput } from '../audit/module.js';
import type { CommandApprovalRow } from './entities.js';
import type { CommandEventType } from './rules.js';

/** An event of a command approval (seed 002's REQUESTED … REVOKED, or our own), in its approval's stream. */
export function commandEvent(
  command: CommandApprovalRow,
  approval: Pick<ApprovalRow, 'agentId'>,
  type: CommandEventType | `${string}.${string}`,
  actor: Actor,
  data: Record<string, unknown>,
): AuditEventInput {
  return {
    tenantId: command.tenantId,
    stream: stream.approval(command.id),
    type,
    actor,
    // approvalId/agentId route the event to subscriptions (approvalChanged); agentId is the
    // Taskbay agent (the hook's agent record), agent_id the coding agent of seed 002.
    data: { approvalId: command.id, agentId: approval.agentId ?? null, approval_id: command.approvalId, ...data },
  };
}
