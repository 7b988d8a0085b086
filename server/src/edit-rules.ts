// The rules a person's input follows on its way into an action, once, for the server and the
// console: which keys a structured form may have, how a typed number is read, how string
// lengths are counted (code points), what a form field accepts, and what edit-then-approve
// means (only what the reviewer changed changes). Like limits.ts this file is bundled by the
// console: plain TypeScript, no Node built-ins, no ajv. The server validates values with ajv
// on top (form-subset.ts); a property test checks both accept the same values.

import { APPROVAL_LIMITS, FORM_LIMITS, codePointLength, jsonBytes } from './limits.js';
import { describeType, isPlainObject, own } from './lib/untrusted.js';
import type { ApprovalAction, SendMessageAction } from '../../packages/taskbay-verify/src/action.js';

// ---------------------------------------------------------------------------------------------
// Structure of a form (seed 003 subset): the keys it may have

export const FORM_KEYS: readonly string[] = ['title', 'submitLabel', 'order', 'schema'];
export const SCHEMA_KEYS: readonly string[] = ['type', 'required', 'properties'];
const DESCRIPTIVE_KEYS = ['title', 'description', 'default'];
export type FieldKind = 'string' | 'enum' | 'number' | 'boolean';
/** The keys each kind of property may carry; any other key rejects the whole form. */
export const PROPERTY_KEYS: Readonly<Record<FieldKind, readonly string[]>> = {
  string: ['type', 'minLength', 'maxLength', 'format', ...DESCRIPTIVE_KEYS],
  enum: ['type', 'enum', 'enumNames', ...DESCRIPTIVE_KEYS],
  number: ['type', 'minimum', 'maximum', ...DESCRIPTIVE_KEYS],
  boolean: ['type', ...DESCRIPTIVE_KEYS],
};
export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The kind of a property object by its `type` (and `enum`), or null for a type outside the subset. */
export function fieldKind(p: Record<string, unknown>): FieldKind | null {
  const type = own(p, 'type');
  if (type === 'string') return Object.hasOwn(p, 'enum') ? 'enum' : 'string';
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'boolean') return 'boolean';
  return null;
}

/** The first key of `obj` outside `allowed`, if any. */
export function unknownKey(obj: Record<string, unknown>, allowed: readonly string[]): string | null {
  for (const key of Object.keys(obj)) if (!allowed.includes(key)) return key;
  return null;
}

/** Why a property name is not allowed (reserved, or not matching the name pattern), or null. */
export function propertyNameProblem(name: string): string | null {
  if (FORM_LIMITS.reservedNames.includes(name)) return `property name "${name}" is reserved`;
  if (!FORM_LIMITS.propertyName.test(name)) return `property name "${name}" must match ${FORM_LIMITS.propertyName.source}`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Values of a form field

/** What a value of one property must satisfy (the parsed property of a form). */
export interface FieldRule {
  type: FieldType;
  enum?: readonly string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

/** The form as far as values are concerned. */
export interface ValuesForm {
  schema: { properties: Record<string, FieldRule>; required?: readonly string[] };
}

// A decimal number as a person types it: no surrounding spaces, no hex, no "Infinity".
const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A typed number, or null when the text is not one (see NUMERIC). */
export function parseNumberText(text: string): number | null {
  if (!NUMERIC.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/**
 * A person's input for one property, coerced to its declared type (seed 003: "coerced to the
 * declared types"): a number property reads decimal text, a boolean reads "true"/"on"/"false".
 * null/undefined is not an answer, nor is "" for a number, boolean or enum; "" for a plain
 * string is an answer. Anything that cannot be coerced is kept as given and fails validation.
 */
export function coerceFieldInput(rule: FieldRule, input: unknown): { keep: false } | { keep: true; value: unknown } {
  if (input === undefined || input === null) return { keep: false };
  if (typeof input !== 'string') return { keep: true, value: input };
  if (rule.type === 'number' || rule.type === 'integer') {
    if (input === '') return { keep: false };
    const n = parseNumberText(input);
    return { keep: true, value: n ?? input };
  }
  if (rule.type === 'boolean') {
    if (input === '') return { keep: false };
    if (input === 'true' || input === 'on') return { keep: true, value: true };
    if (input === 'false') return { keep: true, value: false };
    return { keep: true, value: input };
  }
  if (rule.enum && input === '') return { keep: false };
  return { keep: true, value: input };
}

/** Why a present value does not fit its property (type, enum, code-point length, bounds), or null. */
export function fieldValueProblem(rule: FieldRule, value: unknown): string | null {
  if (rule.type === 'boolean') return typeof value === 'boolean' ? null : 'Yes or no.';
  if (rule.type === 'string') {
    if (typeof value !== 'string') return 'Text.';
    if (rule.enum) return rule.enum.includes(value) ? null : 'Choose one of the options.';
    const n = codePointLength(value);
    if (rule.minLength !== undefined && n < rule.minLength) return `At least ${rule.minLength} characters.`;
    if (rule.maxLength !== undefined && n > rule.maxLength) return `At most ${rule.maxLength} characters.`;
    return null;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) return rule.type === 'integer' ? 'A whole number.' : 'A number.';
  if (rule.type === 'integer' && !Number.isInteger(value)) return 'A whole number.';
  if (rule.minimum !== undefined && value < rule.minimum) return `At least ${rule.minimum}.`;
  if (rule.maximum !== undefined && value > rule.maximum) return `At most ${rule.maximum}.`;
  return null;
}

/** Property names in display order: `order` first, then the rest as declared. */
export function fieldOrder(form: ValuesForm & { order?: readonly string[] }): string[] {
  const declared = Object.keys(form.schema.properties);
  const out: string[] = [];
  for (const name of form.order ?? []) if (declared.includes(name) && !out.includes(name)) out.push(name);
  for (const name of declared) if (!out.includes(name)) out.push(name);
  return out;
}

/** What a person typed into one field: text, a checkbox, or nothing (the field was cleared). */
export type FieldInput = string | boolean | null | undefined;

/**
 * The values a person means, from what they typed. Only declared keys; the result is a fresh
 * object. With `original` (edit-then-approve), a field the person did not touch keeps its
 * original value, or stays absent when it was absent: an edit changes only what was changed.
 * A touched field left empty is absent (it was cleared). Errors are per field.
 */
export function valuesFromInputs(
  form: ValuesForm,
  inputs: Record<string, FieldInput>,
  opts: { original?: Record<string, unknown> | null; touched?: ReadonlySet<string> } = {},
): { values: Record<string, unknown>; errors: Record<string, string> } {
  const values: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  const required = new Set(form.schema.required ?? []);
  const original = opts.original ?? null;
  for (const name of Object.keys(form.schema.properties)) {
    const rule = form.schema.properties[name]!;
    if (original && opts.touched && !opts.touched.has(name)) {
      if (Object.hasOwn(original, name)) values[name] = original[name];
      else if (required.has(name)) errors[name] = 'Required.';
      continue;
    }
    const input = own(inputs, name);
    const c = input === '' ? ({ keep: false } as const) : coerceFieldInput(rule, input);
    if (!c.keep) {
      if (required.has(name)) errors[name] = 'Required.';
      continue;
    }
    const problem = fieldValueProblem(rule, c.value);
    if (problem) errors[name] = problem;
    else values[name] = c.value;
  }
  return { values, errors };
}

// ---------------------------------------------------------------------------------------------
// Actions and edit-then-approve

/** Why a string field (title, text, ...) is not allowed: not a string, or its length in code points. */
export function lengthProblem(field: string, value: unknown, min: number, max: number): string | null {
  if (typeof value !== 'string') return `${field} must be a string, got ${describeType(value)}`;
  const n = codePointLength(value, max);
  if (n < min || n > max) return `${field} must be ${min} to ${max} characters`;
  return null;
}

/** send_message text: 1..20000 code points. */
export function messageTextProblem(value: unknown, field = 'action.text'): string | null {
  return lengthProblem(field, value, APPROVAL_LIMITS.textMin, APPROVAL_LIMITS.textMax);
}

/** send_message data (present, not null): an object of at most 64 KiB of JSON. */
export function messageDataProblem(value: unknown, field = 'action.data'): string | null {
  if (!isPlainObject(value)) return `${field} must be an object, got ${describeType(value)}`;
  const bytes = jsonBytes(value);
  if (bytes > APPROVAL_LIMITS.dataMaxBytes) return `${field} is ${bytes} bytes of JSON, at most ${APPROVAL_LIMITS.dataMaxBytes}`;
  return null;
}

/** An edit of a send_message action as the console sends it: data always explicit (null removes it). */
export type MessageEdit = SendMessageAction & { data: Record<string, unknown> | null };

/** The text shown in the console's Data box for an action's data ("" when there is none). */
export function dataBoxText(data: unknown): string {
  return data === undefined || data === null ? '' : JSON.stringify(data, null, 2);
}

/**
 * A send_message edit from the console's two boxes. An empty Data box removes the data
 * (data: null); a Data box left as shown keeps the original data exactly.
 */
export function messageEditFromInputs(
  original: { data?: Record<string, unknown> | null },
  text: string,
  dataText: string,
): { ok: true; edit: MessageEdit } | { ok: false; field: 'text' | 'data'; error: string } {
  const textProblem = messageTextProblem(text, 'Text');
  if (textProblem) return { ok: false, field: 'text', error: `${textProblem}.` };
  if (dataText.trim() === '') return { ok: true, edit: { kind: 'send_message', text, data: null } };
  if (dataText === dataBoxText(original.data)) return { ok: true, edit: { kind: 'send_message', text, data: original.data ?? null } };
  let data: unknown;
  try {
    data = JSON.parse(dataText);
  } catch {
    return { ok: false, field: 'data', error: 'Data is not valid JSON.' };
  }
  const dataProblem = messageDataProblem(data, 'Data');
  if (dataProblem) return { ok: false, field: 'data', error: `${dataProblem}.` };
  return { ok: true, edit: { kind: 'send_message', text, data: data as Record<string, unknown> } };
}

/**
 * What an edit makes of the original action, before the action rules validate it.
 * send_message `{ kind?, text, data? }`: text replaces; data absent keeps the original data,
 * data null removes it. send_data `{ kind?, values }`: the values replace, over the original
 * form. The kind cannot change. The server additionally refuses a `form` different from the
 * original (canonical JSON), and validates the result like an agent's action.
 */
export function mergeActionEdit(original: ApprovalAction, edit: unknown): { ok: true; candidate: Record<string, unknown> } | { ok: false; error: string } {
  if (!isPlainObject(edit)) return { ok: false, error: `edit must be an object, got ${describeType(edit)}` };
  const kind = own(edit, 'kind');
  if (kind !== undefined && kind !== original.kind) return { ok: false, error: `the action kind cannot change (was ${original.kind})` };
  if (original.kind === 'send_message') {
    const candidate: Record<string, unknown> = { kind: 'send_message', text: own(edit, 'text') };
    const data = Object.hasOwn(edit, 'data') ? edit.data : original.data;
    if (data !== undefined && data !== null) candidate.data = data;
    return { ok: true, candidate };
  }
  if (!Object.hasOwn(edit, 'values')) return { ok: false, error: 'edit.values is required' };
  return { ok: true, candidate: { kind: 'send_data', form: original.form, values: edit.values } };
}

// ---------------------------------------------------------------------------------------------
// Whether edit-then-approve is offered at all

/**
 * A request whose requester said `editable: false` (createApproval) offers no edit-then-approve:
 * the console shows no edit button and the export lists no such option (contract/options.ts
 * decisionOptions), and the decision path refuses one (decisions/service.ts, OUTCOME_NOT_ALLOWED
 * with reason NOT_EDITABLE) whatever the request's policy allows. Requests without the field
 * (an agent's, or rows from before it existed) are editable.
 */
export function editOffered(request: { editable?: boolean | null }): boolean {
  return request.editable !== false;
}

/** Why an edit of a request that offers none is refused. */
export const NOT_EDITABLE_MESSAGE = 'the requester opened this request with editable: false: it can be approved or rejected as it is, never edited';
