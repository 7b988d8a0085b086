import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalRow } from '../approvals/entities.js';
import type { DecisionRow } from '../decisions/entities.js';
import { CommandApproval } from '../commands/entities.js';
import { decisionOptions, OPTION_OF_OUTCOME } from './options.js';
import { validateApprovalContract, type ContractValidation } from './validate.js';
import { log } from '../log.js';

// The agents.approval@1 view of an approval (seed 001). `what` says the act in plain words
// with its exact target, never the raw payload; options are the buttons the console shows for
// this request, in their order (options.ts, one list for both).

const compact = (id: string) => id.replace(/-/g, '');

function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, max - 1).join('') + '…';
}

type CommandAction = { kind: 'run_command'; agent_id: string; commands: string[] };
const isCommand = (action: unknown): action is CommandAction => (action as { kind?: unknown } | null)?.kind === 'run_command';

const commandSession = (action: unknown): string | null => (isCommand(action) ? action.agent_id : null);

/**
 * What approving does, in plain words with its exact target (seed 001: "Never a raw tool
 * payload"). A command runs on the coding agent's machine; a request on a task sends its action
 * to the task's agent; a person's request without a task sends nothing (its agent, if any, only
 * scopes who reviews it), so its `what` says so instead of naming a recipient.
 */
export function contractWhat(a: Pick<ApprovalRow, 'action' | 'title' | 'taskId'>, agentName: string | null): string {
  const action = a.action as unknown;
  if (isCommand(action)) {
    // Seed 001's own example: "run rm -rf build on your machine".
    const where = `on the machine of coding agent ${action.agent_id}`;
    if (action.commands.length === 1) return clip(`Run ${clip(action.commands[0]!, 1900)} ${where}`, 2000);
    return clip(`Run these ${action.commands.length} commands ${where}: ${action.commands.map((c) => clip(c, 400)).join(' ; ')}`, 2000);
  }
  const keys = a.action.kind === 'send_data' ? Object.keys(a.action.values).slice(0, 30).join(', ') : '';
  if (!a.taskId) {
    const proposal =
      a.action.kind === 'send_message' ? `the proposed message reads "${clip(a.action.text, 1500)}"` : `the proposed form values: ${keys || 'none'}`;
    return clip(`Agree to "${clip(a.title, 300)}" (no task: approving records the answer and sends nothing; ${proposal})`, 2000);
  }
  const target = agentName ? `the agent "${clip(agentName, 100)}"` : "the task's agent";
  if (a.action.kind === 'send_message') {
    return clip(`Send ${target} the message "${clip(a.action.text, 1500)}" (${a.title})`, 2000);
  }
  return clip(`Send ${target} the form values ${keys ? `(${keys})` : ''} for "${a.title}"`, 2000);
}

/** A COMMAND approval's seed-002 id (its Approve option names it); null for other sources. */
export type CommandRef = { approvalId: string } | null;

export async function commandRefOf(em: EntityManager, a: Pick<ApprovalRow, 'id' | 'source'>): Promise<CommandRef> {
  if (a.source !== 'COMMAND') return null;
  const command = await em.findOne(CommandApproval, { id: a.id }, { fields: ['approvalId'] });
  return command ? { approvalId: command.approvalId } : null;
}

export function approvalContract(a: ApprovalRow, finalDecision: DecisionRow | null, agentName: string | null, stepSeq: number | null, command: CommandRef) {
  return {
    id: `apr_${compact(a.id)}`,
    // The task, or for a command the coding-agent session (seed 002's agent_id).
    run_id: a.taskId ? `tsk_${compact(a.taskId)}` : (commandSession(a.action) ?? `apr_${compact(a.id)}`),
    step_seq: Math.max(1, stepSeq ?? a.stepSeq ?? 1),
    what: contractWhat(a, agentName),
    options: decisionOptions({ source: a.source, command, policy: a.policy, editable: a.editable }).map((o) => ({ id: o.id, label: o.label })),
    decided_by: finalDecision ? { type: 'user', id: `usr_${compact(finalDecision.reviewerId)}` } : null,
    decided_at: finalDecision ? finalDecision.decidedAt.toISOString() : null,
    answer: finalDecision && finalDecision.outcome !== 'DELEGATE' ? OPTION_OF_OUTCOME[finalDecision.outcome] : null,
  };
}

export type ApprovalContractRecord = ReturnType<typeof approvalContract>;

/** An export that does not validate against agents.approval@1: it is never sent. */
export class ContractInvalid extends Error {
  constructor(
    readonly approvalId: string,
    readonly errors: ContractValidation['errors'],
  ) {
    super(`approval ${approvalId} does not validate against agents.approval@1`);
  }
}

/**
 * The one export of an approval as agents.approval@1, used by the HTTP route and the GraphQL
 * `contract` field: the record of its final (non-delegate, non-vote) decision, validated against the
 * schema; a record that does not validate throws ContractInvalid instead of being served.
 */
export function exportApprovalContract(a: ApprovalRow, decisions: DecisionRow[], agentName: string | null, command: CommandRef): ApprovalContractRecord {
  // A vote toward a quorum (or a rejection recorded without closing) answers nothing yet: the
  // final decision is the answer, and a request still collecting votes has none.
  const final = decisions.find((d) => d.outcome !== 'DELEGATE' && !d.vote) ?? null;
  const record = approvalContract(a, final, agentName, a.stepSeq ?? null, command);
  const check = validateApprovalContract(record);
  if (!check.valid) {
    log.error({ errors: check.errors }, `[contract] approval ${a.id} does not validate`);
    throw new ContractInvalid(a.id, check.errors);
  }
  return record;
}
