// The structured-form subset (seed 003, "Ask for a form"), server side: the definition check
// (form-definition.ts, shared with the console), validation of values with ajv, and coercion of
// a person's reply. Pure functions, no I/O.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { coerceFieldInput } from '../edit-rules.js';
import { describeType, isPlainObject } from '../lib/untrusted.js';
import { isEnumProperty, type FormDefinition } from './form-definition.js';

export {
  isEnumProperty,
  orderedPropertyNames,
  parseFormDefinition,
  type BooleanProperty,
  type EnumProperty,
  type FormDefinition,
  type FormProperty,
  type NumberProperty,
  type ParseFormResult,
  type StringProperty,
} from './form-definition.js';

export type ValidateValuesResult = { ok: true; values: Record<string, unknown> } | { ok: false; error: string };
export type CoerceReplyResult = { ok: true; values: Record<string, unknown> } | { ok: false; errors: Record<string, string> };

/** Key of `coerceFormReply` errors that concern the reply as a whole (`$` is not allowed in property names). */
export const FORM_ERROR_KEY = '$form';

// ---------------------------------------------------------------------------------------------
// Validation of values (ajv)

// One instance for the process. ownProperties: a property named like an Object.prototype member
// (e.g. "toString") must not be seen as present when the values object lacks it. strictNumbers:
// NaN and Infinity are not numbers. minLength/maxLength count code points (ajv default).
const ajv = new Ajv({ strict: false, strictNumbers: true, allErrors: true, ownProperties: true });

// A compiled validator per form object; forms are treated as immutable once parsed.
const validators = new WeakMap<FormDefinition, ValidateFunction>();

/** The JSON Schema a form's values must satisfy (additionalProperties: false). */
export function valuesJsonSchema(form: FormDefinition): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const name of Object.keys(form.schema.properties)) {
    const p = form.schema.properties[name]!;
    const s: Record<string, unknown> = { type: p.type };
    if (isEnumProperty(p)) s.enum = [...p.enum];
    else if (p.type === 'string') {
      if (p.minLength !== undefined) s.minLength = p.minLength;
      if (p.maxLength !== undefined) s.maxLength = p.maxLength;
    } else if (p.type === 'number' || p.type === 'integer') {
      if (p.minimum !== undefined) s.minimum = p.minimum;
      if (p.maximum !== undefined) s.maximum = p.maximum;
    }
    properties[name] = s;
  }
  return { type: 'object', additionalProperties: false, required: [...(form.schema.required ?? [])], properties };
}

function validatorFor(form: FormDefinition): ValidateFunction {
  let validate = validators.get(form);
  if (!validate) {
    const schema = valuesJsonSchema(form);
    validate = ajv.compile(schema);
    // ajv caches compiled schemas by object; drop it so derived schemas do not accumulate.
    ajv.removeSchema(schema);
    validators.set(form, validate);
  }
  return validate;
}

type FieldError = { field: string | null; message: string };

function fieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors ?? []) {
    if (e.keyword === 'required') {
      out.push({ field: String(e.params.missingProperty), message: 'is required' });
    } else if (e.keyword === 'additionalProperties') {
      out.push({ field: String(e.params.additionalProperty), message: 'is not a declared property' });
    } else if (e.instancePath === '') {
      out.push({ field: null, message: `values ${e.message ?? 'are invalid'}` });
    } else {
      // instancePath is "/<name>"; names contain no "/" or "~", so no JSON-Pointer unescaping.
      out.push({ field: e.instancePath.slice(1), message: e.message ?? 'is invalid' });
    }
  }
  return out;
}

function checkValues(form: FormDefinition, values: unknown): { ok: true; values: Record<string, unknown> } | { ok: false; errors: FieldError[] } {
  if (!isPlainObject(values)) return { ok: false, errors: [{ field: null, message: `values must be an object, got ${describeType(values)}` }] };
  const validate = validatorFor(form);
  if (!validate(values)) return { ok: false, errors: fieldErrors(validate.errors) };
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(form.schema.properties)) {
    if (Object.hasOwn(values, name)) out[name] = values[name];
  }
  return { ok: true, values: out };
}

function formatError(e: FieldError): string {
  return e.field === null ? e.message : `${e.field}: ${e.message}`;
}

/**
 * Strict check of values against a form (an agent's send_data.values, or edited values): a plain
 * object with only declared keys, required keys present, exact types, bounds, lengths in code
 * points, enum membership. Returns a fresh object of the declared keys.
 */
export function validateFormValues(form: FormDefinition, values: unknown): ValidateValuesResult {
  try {
    const r = checkValues(form, values);
    if (r.ok) return r;
    return { ok: false, error: r.errors.map(formatError).join('; ') };
  } catch {
    return { ok: false, error: 'values could not be read' };
  }
}

// ---------------------------------------------------------------------------------------------
// A person's reply

/**
 * What a person's reply becomes (seed 003: "one application/json data part holding only the
 * declared keys, coerced to the declared types"): undeclared keys are dropped, strings are
 * coerced to the declared type, then the result is validated. Errors are keyed by property name;
 * an error about the reply as a whole uses FORM_ERROR_KEY.
 */
export function coerceFormReply(form: FormDefinition, values: unknown): CoerceReplyResult {
  try {
    if (!isPlainObject(values)) return { ok: false, errors: { [FORM_ERROR_KEY]: `reply must be an object, got ${describeType(values)}` } };
    const coerced: Record<string, unknown> = {};
    for (const name of Object.keys(form.schema.properties)) {
      if (!Object.hasOwn(values, name)) continue;
      const c = coerceFieldInput(form.schema.properties[name]!, values[name]);
      if (c.keep) coerced[name] = c.value;
    }
    const r = checkValues(form, coerced);
    if (r.ok) return r;
    const errors: Record<string, string> = {};
    for (const e of r.errors) {
      const key = e.field ?? FORM_ERROR_KEY;
      if (!Object.hasOwn(errors, key)) errors[key] = e.message;
    }
    return { ok: false, errors };
  } catch {
    return { ok: false, errors: { [FORM_ERROR_KEY]: 'reply could not be read' } };
  }
}
