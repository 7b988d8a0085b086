// The answers a reviewer is offered: seed 001's OPTIONS, "the answers the product offers, each
// with an id and the words a person reads", "in the order to show them". One list: the
// agents.approval@1 export states it and the console draws its decision buttons from it, so the
// export names exactly the buttons a person sees, in their order. Plain TypeScript with no Node
// built-ins: the console bundles this file.
//
// Delegate is not an option. It answers nothing: it hands the question to another reviewer, the
// request stays pending and the export's `answer` stays null. The console shows it after the
// options, apart from them.

import { approveLabel } from '../commands/label.js';
import { editOffered } from '../edit-rules.js';

export type DecisionOptionId = 'approve' | 'edit_and_approve' | 'request_changes' | 'reject';
export interface DecisionOption {
  readonly id: DecisionOptionId;
  readonly label: string;
}

/** A request an agent or a person made (send_message, send_data). */
export const REQUEST_OPTIONS: readonly DecisionOption[] = [
  { id: 'approve', label: 'Approve' },
  { id: 'edit_and_approve', label: 'Edit then approve' },
  { id: 'request_changes', label: 'Request changes' },
  { id: 'reject', label: 'Reject' },
];

/**
 * A command (seed 002) is approved or rejected, never edited or sent back. Its Approve reads
 * `Approve [P-xxxxxxxx]`: the label the reviewer selects, which the SHOWN event records as seen.
 */
export function commandOptions(commandApprovalId: string): readonly DecisionOption[] {
  return [
    { id: 'approve', label: approveLabel(commandApprovalId) },
    { id: 'reject', label: 'Reject' },
  ];
}

/** What a request's policy (frozen when it opened, policies/snapshot.ts) lets a reviewer choose. */
export interface AllowedOutcomes {
  readonly allowedOutcomes: readonly string[];
}

/**
 * The options of one approval, in the order shown. `command` is a COMMAND approval's seed-002 id.
 * With the request's `policy`, only the outcomes it allows (the decision path refuses the others
 * with OUTCOME_NOT_ALLOWED: policies/enforce.ts). A request opened with `editable: false` offers
 * no edit then approve, whatever its policy allows (edit-rules.ts editOffered).
 */
export function decisionOptions(a: {
  source: string;
  command: { approvalId: string } | null | undefined;
  policy?: AllowedOutcomes | null;
  editable?: boolean | null;
}): readonly DecisionOption[] {
  let options: readonly DecisionOption[];
  if (a.source !== 'COMMAND') options = REQUEST_OPTIONS;
  else if (!a.command) throw new Error('a command approval without its command has no options');
  else options = commandOptions(a.command.approvalId);
  if (!editOffered(a)) options = options.filter((o) => o.id !== 'edit_and_approve');
  const allowed = a.policy?.allowedOutcomes;
  return allowed ? options.filter((o) => allowed.includes(OUTCOME_OF_OPTION[o.id])) : options;
}

/** Whether the request's policy lets a reviewer hand it to someone else (Delegate is not an option, see above). */
export const delegationAllowed = (policy: AllowedOutcomes | null | undefined) => !policy || policy.allowedOutcomes.includes('DELEGATE');

/** The option a final decision chose (seed 001 ANSWER: "the chosen option's id"). */
export const OPTION_OF_OUTCOME: Readonly<Record<'APPROVE' | 'EDIT_AND_APPROVE' | 'REQUEST_CHANGES' | 'REJECT', DecisionOptionId>> = {
  APPROVE: 'approve',
  EDIT_AND_APPROVE: 'edit_and_approve',
  REQUEST_CHANGES: 'request_changes',
  REJECT: 'reject',
};

const OUTCOME_OF_OPTION: Readonly<Record<DecisionOptionId, string>> = {
  approve: 'APPROVE',
  edit_and_approve: 'EDIT_AND_APPROVE',
  request_changes: 'REQUEST_CHANGES',
  reject: 'REJECT',
};
