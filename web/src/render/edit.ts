// Edit-then-approve on the client: the same rules as the server (one shared module), so the
// console sends exactly what the reviewer changed and previews the revision the server makes.
import type { ApprovalAction } from '../../../packages/taskbay-verify/src/action.js';
import { dataBoxText, mergeActionEdit, messageEditFromInputs } from '../../../server/src/edit-rules.js';

export { dataBoxText };

/** A send_message edit from the Text and Data boxes: empty Data removes the data (data: null). */
export function messageEdit(original: unknown, text: string, dataText: string) {
  const a = (original ?? {}) as { data?: Record<string, unknown> | null };
  return messageEditFromInputs(a, text, dataText);
}

/** The action the server will make of this edit (for the preview and diff before confirming). */
export function editedAction(original: unknown, edit: Record<string, unknown>): Record<string, unknown> | null {
  const r = mergeActionEdit(original as ApprovalAction, edit);
  return r.ok ? r.candidate : null;
}
