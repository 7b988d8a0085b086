import { randomUUID } from 'node:crypto';
import type { Interrupt, Message } from '@ag-ui/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { toolCallArguments } from './protocol/transcript.js';
import { AGUI_KEY_PREFIX } from '../approvals/entities.js';
import { parseApprovalRequest, type ApprovalRequestInput, openApproval } from '../approvals/module.js';
import type { Config } from '../config.js';
import { parseFormDefinition } from '../forms/form-definition.js';
import { validateFormValues } from '../forms/form-subset.js';
import { sha256Hex } from '../lib/hashing.js';
import { isPlainObject } from '../lib/untrusted.js';
import { APPROVAL_LIMITS, RISKS, type RiskLevel } from '../limits.js';
import { AgUiInterrupt } from './entities.js';
import type { TaskRow } from '../tasks/entities.js';

// An AG-UI interrupt becomes one approval request (docs/AG-UI.md "Interrupt -> approval"), opened
// through the same path as an A2A agent's request (approvals/service.ts openApproval): revision 1,
// its digest, the policy, the audit event and the live update. What the reviewer sees:
//   - a response schema the structured-form subset accepts, with defaults that satisfy it: a
//     send_data action (the form, the default values), so the console shows the form;
//   - anything else: a send_message action whose text is the interrupt's message and whose data
//     names the interrupt, its tool call (name and arguments, parsed when they are JSON) and its
//     response schema as given.
// The interrupts of one run stay live together (key prefix AGUI_KEY_PREFIX; the index
// approval_one_pending_per_task leaves them out): the resume must answer all of them at once.

/** The data of a send_message action made from an interrupt. */
export interface InterruptData {
  interruptId: string;
  reason: string;
  toolCallId?: string;
  toolName?: string;
  arguments?: unknown;
  responseSchema?: Record<string, unknown>;
}

function toolCallOf(messages: readonly Message[], toolCallId: string | undefined): { name: string; arguments: unknown } | null {
  if (!toolCallId) return null;
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const call = m.toolCalls?.find((c) => c.id === toolCallId);
    if (!call) continue;
    return { name: call.function.name, arguments: toolCallArguments(call.function.arguments) };
  }
  return null;
}

/** Seconds until the interrupt's expiresAt (ISO 8601), clamped to what a request allows; null when absent or unreadable. */
function ttlOf(interrupt: Interrupt, now: number): number | null {
  if (!interrupt.expiresAt) return null;
  const at = Date.parse(interrupt.expiresAt);
  if (!Number.isFinite(at)) return null;
  return Math.min(APPROVAL_LIMITS.expiresMaxSeconds, Math.max(APPROVAL_LIMITS.expiresMinSeconds, Math.ceil((at - now) / 1000)));
}

function riskOf(interrupt: Interrupt): RiskLevel {
  const risk = isPlainObject(interrupt.metadata) ? interrupt.metadata.risk : undefined;
  return typeof risk === 'string' && (RISKS as readonly string[]).includes(risk) ? (risk as RiskLevel) : 'medium';
}

function firstLine(s: string, max: number): string {
  const line = s.split(/\r?\n/, 1)[0]!.trim();
  return [...line].length > max ? `${[...line].slice(0, max - 1).join('')}…` : line;
}

/** A form action when the response schema is a form of the subset and its defaults are valid values. */
function formAction(interrupt: Interrupt) {
  if (!isPlainObject(interrupt.responseSchema)) return null;
  const parsed = parseFormDefinition({ ...(interrupt.message ? { title: firstLine(interrupt.message, 200) } : {}), schema: interrupt.responseSchema });
  if (!parsed.ok) return null;
  const defaults: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(parsed.form.schema.properties)) if (prop.default !== undefined) defaults[name] = prop.default;
  const values = validateFormValues(parsed.form, defaults);
  if (!values.ok) return null;
  return { kind: 'send_data' as const, form: parsed.form as unknown as Record<string, unknown>, values: values.values };
}

/** The request one interrupt opens (never throws: an unusable part of the interrupt is left out). */
export function interruptRequest(interrupt: Interrupt, messages: readonly Message[], agentName: string, now = Date.now()): ApprovalRequestInput {
  const call = toolCallOf(messages, interrupt.toolCallId);
  const text = interrupt.message?.trim() || (call ? `${agentName} asks to call ${call.name}` : `${agentName} asks for ${interrupt.reason}`);
  const title = firstLine(call ? `${call.name}: ${text}` : text, 200) || 'AG-UI interrupt';
  const summary = `AG-UI interrupt ${JSON.stringify(interrupt.id.slice(0, 200))} (reason ${JSON.stringify(interrupt.reason.slice(0, 100))}) of ${agentName}`;
  const base = { title, summary, risk: riskOf(interrupt), expiresInSeconds: ttlOf(interrupt, now) };
  const data: InterruptData = { interruptId: interrupt.id, reason: interrupt.reason };
  if (interrupt.toolCallId) data.toolCallId = interrupt.toolCallId;
  if (call) {
    data.toolName = call.name;
    data.arguments = call.arguments;
  }
  const form = formAction(interrupt);
  const candidates: unknown[] = [
    ...(form ? [{ ...base, action: form }] : []),
    { ...base, action: { kind: 'send_message', text, data: { ...data, ...(interrupt.responseSchema ? { responseSchema: interrupt.responseSchema } : {}) } } },
    { ...base, action: { kind: 'send_message', text, data } },
    {
      ...base,
      action: {
        kind: 'send_message',
        text: firstLine(text, 2000) || 'AG-UI interrupt',
        data: { interruptId: interrupt.id.slice(0, 500), reason: interrupt.reason.slice(0, 200) },
      },
    },
  ];
  for (const candidate of candidates) {
    const r = parseApprovalRequest(candidate);
    if (r.ok) return r.request;
  }
  return { ...base, action: { kind: 'send_message', text: 'AG-UI interrupt', data: null } };
}

export const interruptKey = (runRowId: string, interruptId: string) => `${AGUI_KEY_PREFIX}${runRowId}:${sha256Hex(interruptId).slice(0, 32)}`;

/** In the run's recording transaction: one request per interrupt, all live together. */
export async function openInterruptApprovals(
  tem: EntityManager,
  config: Config,
  task: TaskRow,
  run: { rowId: string; agentName: string; messages: readonly Message[]; stepSeq: number | null },
  interrupts: readonly Interrupt[],
) {
  const opened = [];
  for (const interrupt of interrupts) {
    const request = interruptRequest(interrupt, run.messages, run.agentName);
    const approval = await openApproval(
      tem,
      config,
      {
        tenantId: task.tenantId,
        agentId: task.agentId,
        taskId: task.id,
        skillId: task.skillId ?? null,
        sourceMessageId: null,
        stepSeq: run.stepSeq,
        requesterId: null,
        actor: { type: 'agent', id: task.agentId },
        source: 'AGENT',
        key: interruptKey(run.rowId, interrupt.id),
        supersede: false,
      },
      request,
    );
    if (!approval) continue;
    tem.create(AgUiInterrupt, {
      id: randomUUID(),
      runRowId: run.rowId,
      interruptId: interrupt.id,
      approvalId: approval.id,
      interrupt: interrupt as unknown as Record<string, unknown>,
    });
    opened.push(approval);
  }
  await tem.flush();
  return opened;
}
