// The approval-request extension part (seed 000, "Request"): find and validate the request an
// agent puts in its INPUT_REQUIRED status message, and apply a reviewer's edit. Pure, no I/O.
//
// Validation happens before anything is written; a malformed or over-limit request is ignored
// (findApprovalRequest returns null) and never throws. Only the documented fields are read:
// fields naming an assignee, reviewer, policy, status or another task are not read.

import { APPROVAL_LIMITS, RISKS, codePointLength, jsonBytes, type RiskLevel } from '../limits.js';
import { lengthProblem, mergeActionEdit, messageDataProblem, messageTextProblem } from '../edit-rules.js';

export { codePointLength };
import type { ApprovalAction, SendDataAction, SendMessageAction } from './digest.js';
import { canonicalJson } from '../lib/hashing.js';
import { describeType, isPlainObject, nestedDeeperThan, own } from '../lib/untrusted.js';
import { MEDIA_TYPE } from '../a2a/extensions.js';
import type { Part } from '../a2a/types.js';
import { parseFormDefinition, validateFormValues } from '../forms/form-subset.js';

export interface ApprovalRequestInput {
  title: string;
  summary: string | null;
  risk: RiskLevel;
  expiresInSeconds: number | null;
  action: ApprovalAction;
}

export type ParseActionResult = { ok: true; action: ApprovalAction } | { ok: false; error: string };
export type ParseRequestResult = { ok: true; request: ApprovalRequestInput } | { ok: false; error: string };

// String lengths (code points) and the send_message text and data rules are edit-rules.ts's,
// shared with the console.

/** JSON deep copy of an agent-supplied object (own `__proto__` keys stay plain data keys). */
function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function parseSendMessage(input: Record<string, unknown>): ParseActionResult {
  const text = own(input, 'text');
  const textError = messageTextProblem(text);
  if (textError) return { ok: false, error: textError };
  const action: SendMessageAction = { kind: 'send_message', text: text as string };
  const data = own(input, 'data');
  if (data !== undefined && data !== null) {
    const dataError = messageDataProblem(data);
    if (dataError) return { ok: false, error: dataError };
    if (nestedDeeperThan(data, APPROVAL_LIMITS.dataDepthMax)) {
      return { ok: false, error: `action.data is nested deeper than ${APPROVAL_LIMITS.dataDepthMax} levels` };
    }
    action.data = jsonCopy(data as Record<string, unknown>);
  }
  return { ok: true, action };
}

function parseSendData(input: Record<string, unknown>): ParseActionResult {
  const rawForm = own(input, 'form');
  if (rawForm === undefined) return { ok: false, error: 'action.form is required' };
  const bytes = jsonBytes(rawForm);
  if (bytes > APPROVAL_LIMITS.formMaxBytes) {
    return { ok: false, error: `action.form is ${bytes} bytes of JSON, at most ${APPROVAL_LIMITS.formMaxBytes}` };
  }
  const parsed = parseFormDefinition(rawForm);
  if (!parsed.ok) return { ok: false, error: `action.form: ${parsed.error}` };
  const values = validateFormValues(parsed.form, own(input, 'values'));
  if (!values.ok) return { ok: false, error: `action.values: ${values.error}` };
  const action: SendDataAction = {
    kind: 'send_data',
    form: parsed.form as Record<string, unknown>,
    values: jsonCopy(values.values),
  };
  return { ok: true, action };
}

/**
 * An approval action: `send_message` (text 1..20000 code points, optional data object of at
 * most 64 KiB) or `send_data` (form in the structured-form subset of at most 64 KiB, values
 * valid against it). Only kind/text/data or kind/form/values are read.
 */
export function parseApprovalAction(input: unknown): ParseActionResult {
  try {
    if (!isPlainObject(input)) return { ok: false, error: `action must be an object, got ${describeType(input)}` };
    const kind = own(input, 'kind');
    if (kind === 'send_message') return parseSendMessage(input);
    if (kind === 'send_data') return parseSendData(input);
    return { ok: false, error: `action.kind must be "send_message" or "send_data", got ${JSON.stringify(kind) ?? 'nothing'}` };
  } catch {
    return { ok: false, error: 'action could not be read' };
  }
}

/** The `data` of an approval-request part (seed 000). Unread fields never reach the result. */
export function parseApprovalRequest(data: unknown): ParseRequestResult {
  try {
    if (!isPlainObject(data)) return { ok: false, error: `request must be an object, got ${describeType(data)}` };

    const title = own(data, 'title');
    const titleError = lengthProblem('title', title, APPROVAL_LIMITS.titleMin, APPROVAL_LIMITS.titleMax);
    if (titleError) return { ok: false, error: titleError };

    let summary: string | null = null;
    const rawSummary = own(data, 'summary');
    if (rawSummary !== undefined && rawSummary !== null) {
      const err = lengthProblem('summary', rawSummary, 0, APPROVAL_LIMITS.summaryMax);
      if (err) return { ok: false, error: err };
      summary = rawSummary as string;
    }

    let risk: RiskLevel = 'medium';
    const rawRisk = own(data, 'risk');
    if (rawRisk !== undefined && rawRisk !== null) {
      if (typeof rawRisk !== 'string' || !(RISKS as readonly string[]).includes(rawRisk)) {
        return { ok: false, error: `risk must be one of ${RISKS.join(', ')}` };
      }
      risk = rawRisk as RiskLevel;
    }

    let expiresInSeconds: number | null = null;
    const rawExpires = own(data, 'expiresInSeconds');
    if (rawExpires !== undefined && rawExpires !== null) {
      if (
        typeof rawExpires !== 'number' ||
        !Number.isInteger(rawExpires) ||
        rawExpires < APPROVAL_LIMITS.expiresMinSeconds ||
        rawExpires > APPROVAL_LIMITS.expiresMaxSeconds
      ) {
        return {
          ok: false,
          error: `expiresInSeconds must be an integer ${APPROVAL_LIMITS.expiresMinSeconds} to ${APPROVAL_LIMITS.expiresMaxSeconds}`,
        };
      }
      expiresInSeconds = rawExpires;
    }

    const action = parseApprovalAction(own(data, 'action'));
    if (!action.ok) return { ok: false, error: action.error };

    return { ok: true, request: { title: title as string, summary, risk, expiresInSeconds, action: action.action } };
  } catch {
    return { ok: false, error: 'request could not be read' };
  }
}

/**
 * The first valid approval-request part of a message's parts (seed 000: "The first valid part
 * in the message wins"). A part counts when its mediaType is the approval media type, its whole
 * JSON serialization is at most 128 KiB and its data parses; others are skipped. Never throws.
 * A part from an agent was also measured as sent, unread members included, by the A2A parser
 * (a2a/wire.ts): one over the limit there arrives here as a malformed part.
 */
export function findApprovalRequest(parts: unknown): { request: ApprovalRequestInput; partIndex: number } | null {
  try {
    if (!Array.isArray(parts)) return null;
    for (let i = 0; i < parts.length; i++) {
      try {
        const part: unknown = parts[i];
        if (!isPlainObject(part)) continue;
        if (own(part, 'mediaType') !== MEDIA_TYPE.approvalRequest) continue;
        if (jsonBytes(part as Part) > APPROVAL_LIMITS.partMaxBytes) continue;
        const parsed = parseApprovalRequest(own(part, 'data'));
        if (parsed.ok) return { request: parsed.request, partIndex: i };
      } catch {
        // An unreadable part is skipped like an invalid one.
      }
    }
    return null;
  } catch {
    return null;
  }
}

/**
 * Edit-then-approve: what the edit means is edit-rules.ts's mergeActionEdit (shared with the
 * console): send_message `{ kind?, text, data? }` (data absent keeps the original data, null
 * removes it); send_data `{ kind?, values }` over the original form. Here additionally: a
 * `form` in the edit must be deep-equal to the original, and the result is validated like an
 * agent's action (same limits as parseApprovalAction).
 */
export function applyActionEdit(original: ApprovalAction, edit: unknown): ParseActionResult {
  try {
    if (
      original.kind === 'send_data' &&
      isPlainObject(edit) &&
      Object.hasOwn(edit, 'form') &&
      (!Object.hasOwn(edit, 'kind') || edit.kind === 'send_data') &&
      canonicalJson(edit.form) !== canonicalJson(original.form)
    ) {
      return { ok: false, error: 'the form of a send_data action cannot change; only values can be edited' };
    }
    const merged = mergeActionEdit(original, edit);
    if (!merged.ok) return merged;
    return parseApprovalAction(merged.candidate);
  } catch {
    return { ok: false, error: 'edit could not be read' };
  }
}
