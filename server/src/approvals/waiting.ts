import type { EntityManager } from '@mikro-orm/postgresql';
import { advertises } from '../a2a/card.js';
import { A2UI_EXTENSION, APPROVAL_REQUEST_EXTENSION, MEDIA_TYPE, STRUCTURED_FORM_EXTENSION } from '../a2a/extensions.js';
import type { AgentCard, Part } from '../a2a/types.js';
import { latestSnapshot } from '../agents/module.js';
import { visibleFilter } from '../auth/module.js';
import { ApprovalRequest } from './entities.js';
import { parseApprovalRequest } from './request-part.js';
import type { Access } from '../access.js';
import { parseA2uiEnvelopes } from '../forms/a2ui.js';
import { parseFormDefinition } from '../forms/form-subset.js';
import { A2UI_LIMITS, APPROVAL_LIMITS, JSON_DEPTH_MAX, KIB, jsonBytes } from '../limits.js';
import { sqlWithParams } from '../db/sql.js';
import { Task, TaskMessage, type TaskMessageRow, type TaskRow } from '../tasks/entities.js';

// Human work that did not become an approval: tasks waiting for a person
// (INPUT_REQUIRED) whose latest agent message opened no approval, with the reason a person
// should look: a form to fill, an A2UI surface, an extension part Taskbay ignored (and why),
// or a plain message. Read-only: listing a task here opens nothing (seed 000, step 3).

export const WAITING_REASONS = ['FORM', 'A2UI', 'IGNORED_PART', 'MESSAGE'] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

export interface WaitingItem {
  task: TaskRow;
  message: TaskMessageRow | null;
  reason: WaitingReason;
  detail: string;
}

const SNIPPET = 140;

const SENT_AS_LABEL: Record<string, string> = {
  [MEDIA_TYPE.approvalRequest]: 'Approval request',
  [MEDIA_TYPE.form]: 'Form',
  [MEDIA_TYPE.a2ui]: 'A2UI surface',
};

function malformedPartReason(part: Part): string {
  const meta = part.metadata ?? {};
  const sentAs = typeof meta.taskbaySentAs === 'string' ? meta.taskbaySentAs : null;
  const why = typeof meta.taskbayMalformed === 'string' ? meta.taskbayMalformed.replace(/^The agent's response is not valid: /, '') : 'it could not be read';
  const what = sentAs ? (SENT_AS_LABEL[sentAs] ?? `A ${sentAs} part`) : 'A part';
  return `${what} ignored: ${why}.`;
}

/** Why an extension part of this message was left as ordinary data (or not kept), one sentence per part. */
export function ignoredParts(parts: readonly Part[], card: AgentCard | null): string[] {
  const out: string[] = [];
  const offers = (uri: string) => !!card && advertises(card, uri);
  for (const part of parts) {
    if (!part || typeof part !== 'object') continue;
    if (part.mediaType === MEDIA_TYPE.malformedPart) {
      // The A2A client could not read the part (e.g. data nested too deeply): name what it was sent as and why.
      out.push(malformedPartReason(part));
    } else if (part.mediaType === MEDIA_TYPE.approvalRequest) {
      const bytes = jsonBytes(part);
      if (!offers(APPROVAL_REQUEST_EXTENSION)) out.push("Approval request ignored: the agent's card does not advertise the approval-request extension.");
      else if (bytes > APPROVAL_LIMITS.partMaxBytes)
        out.push(`Approval request ignored: the part is ${Math.ceil(bytes / KIB)} KiB of JSON, over ${APPROVAL_LIMITS.partMaxBytes / KIB} KiB.`);
      else {
        const r = parseApprovalRequest(part.data);
        if (!r.ok) out.push(`Approval request ignored: ${r.error}.`);
      }
    } else if (part.mediaType === MEDIA_TYPE.form) {
      if (!offers(STRUCTURED_FORM_EXTENSION)) out.push("Form ignored: the agent's card does not advertise the structured-form extension.");
      else {
        const r = parseFormDefinition(part.data);
        if (!r.ok) out.push(`Form ignored: ${r.error}.`);
      }
    } else if (part.mediaType === MEDIA_TYPE.a2ui) {
      if (!offers(A2UI_EXTENSION)) out.push("A2UI surface ignored: the agent's card does not advertise the A2UI extension.");
      else if (!parseA2uiEnvelopes(part.data)) {
        out.push(
          `A2UI surface ignored: the part is not an array of 1 to ${A2UI_LIMITS.envelopesMax} A2UI v0.9 envelopes of at most ${A2UI_LIMITS.bytesMax / KIB} KiB, nested at most ${JSON_DEPTH_MAX} levels.`,
        );
      }
    }
  }
  return out;
}

/** The reason a task waits, from its latest agent message (as stored, with its offers). */
export function classifyWaiting(message: TaskMessageRow | null, card: AgentCard | null): { reason: WaitingReason; detail: string } {
  if (!message) return { reason: 'MESSAGE', detail: 'Waiting for input; the agent sent no message.' };
  if (message.form) {
    const title = typeof message.form.title === 'string' ? `: “${message.form.title}”` : '';
    return { reason: 'FORM', detail: `Asks for a form${title}.` };
  }
  if (message.a2ui) return { reason: 'A2UI', detail: 'Shows an A2UI surface to answer.' };
  const ignored = ignoredParts(message.parts ?? [], card);
  if (ignored.length) return { reason: 'IGNORED_PART', detail: ignored.join(' ') };
  const text = (message.parts ?? [])
    .map((p) => (p && typeof p.text === 'string' ? p.text : ''))
    .join(' ')
    .trim();
  const snippet = [...text].length > SNIPPET ? `${[...text].slice(0, SNIPPET).join('')}…` : text;
  return { reason: 'MESSAGE', detail: snippet ? `Asks: ${snippet}` : 'Waiting for a reply.' };
}

/** The latest agent message of each task: one row per task (read backwards on the step index), however long its transcript. */
async function latestAgentMessages(em: EntityManager, taskIds: string[]): Promise<Map<string, TaskMessageRow>> {
  const rows = await sqlWithParams<Record<string, unknown>>(
    em,
    `select m.* from unnest($1::uuid[]) as t(id)
       cross join lateral (select * from task_message where task_id = t.id and role = 'ROLE_AGENT' order by step_seq desc limit 1) m`,
    [taskIds],
  );
  const meta = em.getMetadata().get<TaskMessageRow>(TaskMessage.meta.className);
  const driver = em.getDriver();
  return new Map(rows.map((r) => driver.mapResult(r as never, meta) as TaskMessageRow).map((m) => [m.taskId, m]));
}

/** The viewer's tasks waiting for a person that have no approval for their latest message, newest first. */
export async function tasksWaitingForInput(em: EntityManager, access: Access, limit: number): Promise<WaitingItem[]> {
  const tasks = await em.find(
    Task,
    { $and: [await visibleFilter(access, { ownRequests: false }), { state: 'TASK_STATE_INPUT_REQUIRED' }] },
    { orderBy: { updatedAt: 'desc', id: 'desc' }, limit },
  );
  if (!tasks.length) return [];
  const ids = tasks.map((t) => t.id);
  const latest = await latestAgentMessages(em, ids);
  const opened = new Set(
    (await em.find(ApprovalRequest, { taskId: { $in: ids } }, { fields: ['taskId', 'sourceMessageId'] })).map((a) => `${a.taskId} ${a.sourceMessageId}`),
  );
  const cards = new Map<string, AgentCard | null>();
  const out: WaitingItem[] = [];
  for (const task of tasks) {
    const message = latest.get(task.id) ?? null;
    // The latest message opened an approval: that work is in the approvals list.
    if (message && opened.has(`${task.id} ${message.messageId}`)) continue;
    if (!cards.has(task.agentId)) cards.set(task.agentId, (await latestSnapshot(em, task.agentId))?.card ?? null);
    out.push({ task, message, ...classifyWaiting(message, cards.get(task.agentId)!) });
  }
  return out;
}
