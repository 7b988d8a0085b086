// The structured-form subset (seed 003, "Ask for a form"): parse an agent's form definition,
// validate values against it and coerce a person's reply. Pure functions, no I/O.
//
// Agent content is hostile. Nothing here spreads or mutates the input: every object read is
// checked to be a plain object, keys are read with Object.keys / Object.hasOwn, and every
// result is a fresh object holding only recognised keys (reserved names such as `__proto__`
// can never become keys of a result, because they are refused as property names).

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import {
  FORM_KEYS,
  PROPERTY_KEYS,
  SCHEMA_KEYS,
  coerceFieldInput,
  fieldKind,
  fieldOrder,
  isPlainObject,
  propertyNameProblem,
  unknownKey,
} from '../edit-rules.js';
import { FORM_LIMITS } from '../limits.js';

export { isPlainObject };

type Descriptive<T> = { title?: string; description?: string; default?: T };

/** `{ type: "string" }` with optional minLength, maxLength and `format: "multiline"`. */
export type StringProperty = Descriptive<string> & {
  type: 'string';
  minLength?: number;
  maxLength?: number;
  format?: 'multiline';
};
/** A string enum of 1..50 values, with optional display names of the same length. */
export type EnumProperty = Descriptive<string> & { type: 'string'; enum: string[]; enumNames?: string[] };
export type NumberProperty = Descriptive<number> & { type: 'number' | 'integer'; minimum?: number; maximum?: number };
export type BooleanProperty = Descriptive<boolean> & { type: 'boolean' };
export type FormProperty = StringProperty | EnumProperty | NumberProperty | BooleanProperty;

export type FormDefinition = {
  title?: string;
  submitLabel?: string;
  order?: string[];
  schema: { type: 'object'; required?: string[]; properties: Record<string, FormProperty> };
};

export type ParseFormResult = { ok: true; form: FormDefinition } | { ok: false; error: string };
export type ValidateValuesResult = { ok: true; values: Record<string, unknown> } | { ok: false; error: string };
export type CoerceReplyResult = { ok: true; values: Record<string, unknown> } | { ok: false; errors: Record<string, string> };

/** Key of `coerceFormReply` errors that concern the reply as a whole (`$` is not allowed in property names). */
export const FORM_ERROR_KEY = '$form';

export function isEnumProperty(p: FormProperty): p is EnumProperty {
  return Object.hasOwn(p, 'enum');
}

// ---------------------------------------------------------------------------------------------
// Small hostile-input helpers

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

class FormError extends Error {}

function fail(message: string): never {
  throw new FormError(message);
}

// ---------------------------------------------------------------------------------------------
// parseFormDefinition

// The allowed keys and property names are edit-rules.ts's (shared with the console).
function checkKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const key = unknownKey(obj, allowed);
  if (key !== null) fail(`${where}: key "${key}" is not part of the structured-form subset`);
}

function checkName(name: string, where: string): void {
  const problem = propertyNameProblem(name);
  if (problem) fail(`${where}: ${problem}`);
}

function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = own(obj, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') fail(`${where}.${key} must be a string, got ${describe(v)}`);
  return v;
}

/** An array of distinct declared property names. */
function nameList(value: unknown, declared: string[], where: string): string[] {
  if (!Array.isArray(value)) fail(`${where} must be an array of property names, got ${describe(value)}`);
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') fail(`${where} must contain only strings, got ${describe(item)}`);
    if (!declared.includes(item)) fail(`${where} names "${item}", which is not a declared property`);
    if (out.includes(item)) fail(`${where} names "${item}" twice`);
    out.push(item);
  }
  return out;
}

function parseProperty(input: unknown, name: string): FormProperty {
  const where = `schema.properties.${name}`;
  if (!isPlainObject(input)) fail(`${where} must be an object, got ${describe(input)}`);
  const type = own(input, 'type');
  if (type === 'object') fail(`${where}: nested objects are not supported (type "object")`);
  if (type === 'array') fail(`${where}: arrays are not supported (type "array")`);
  const kind = fieldKind(input);
  if (kind === null) fail(`${where}: unknown type ${JSON.stringify(type) ?? 'undefined'} (string, number, integer or boolean)`);
  checkKeys(input, PROPERTY_KEYS[kind], where);

  const title = optionalString(input, 'title', where);
  const description = optionalString(input, 'description', where);
  const descriptive: Descriptive<never> = {};
  if (title !== undefined) descriptive.title = title;
  if (description !== undefined) descriptive.description = description;

  let prop: FormProperty;
  if (kind === 'string') {
    const p: StringProperty = { type: 'string', ...descriptive };
    const minLength = own(input, 'minLength');
    const maxLength = own(input, 'maxLength');
    const format = own(input, 'format');
    if (minLength !== undefined) {
      if (!isNonNegativeInteger(minLength)) fail(`${where}.minLength must be a non-negative integer`);
      p.minLength = minLength;
    }
    if (maxLength !== undefined) {
      if (!isNonNegativeInteger(maxLength)) fail(`${where}.maxLength must be a non-negative integer`);
      p.maxLength = maxLength;
    }
    if (p.minLength !== undefined && p.maxLength !== undefined && p.minLength > p.maxLength) {
      fail(`${where}: minLength is greater than maxLength`);
    }
    if (format !== undefined) {
      if (format !== 'multiline') fail(`${where}.format must be "multiline"`);
      p.format = 'multiline';
    }
    prop = p;
  } else if (kind === 'enum') {
    const values = own(input, 'enum');
    if (!Array.isArray(values)) fail(`${where}.enum must be an array of strings`);
    if (values.length < 1 || values.length > FORM_LIMITS.enumMax) {
      fail(`${where}.enum must have 1 to ${FORM_LIMITS.enumMax} values, has ${values.length}`);
    }
    const list: string[] = [];
    for (const v of values) {
      if (typeof v !== 'string') fail(`${where}.enum must contain only strings, got ${describe(v)}`);
      if (list.includes(v)) fail(`${where}.enum lists "${v}" twice`);
      list.push(v);
    }
    const p: EnumProperty = { type: 'string', enum: list, ...descriptive };
    const names = own(input, 'enumNames');
    if (names !== undefined) {
      if (!Array.isArray(names) || names.length !== list.length) {
        fail(`${where}.enumNames must be an array of ${list.length} strings, like enum`);
      }
      const nameCopy: string[] = [];
      for (const n of names) {
        if (typeof n !== 'string') fail(`${where}.enumNames must contain only strings, got ${describe(n)}`);
        nameCopy.push(n);
      }
      p.enumNames = nameCopy;
    }
    prop = p;
  } else if (kind === 'number') {
    const p: NumberProperty = { type: type as 'number' | 'integer', ...descriptive };
    const minimum = own(input, 'minimum');
    const maximum = own(input, 'maximum');
    if (minimum !== undefined) {
      if (!isFiniteNumber(minimum)) fail(`${where}.minimum must be a number`);
      p.minimum = minimum;
    }
    if (maximum !== undefined) {
      if (!isFiniteNumber(maximum)) fail(`${where}.maximum must be a number`);
      p.maximum = maximum;
    }
    if (p.minimum !== undefined && p.maximum !== undefined && p.minimum > p.maximum) {
      fail(`${where}: minimum is greater than maximum`);
    }
    prop = p;
  } else {
    prop = { type: 'boolean', ...descriptive };
  }

  if (Object.hasOwn(input, 'default')) {
    const def = input.default;
    const result = checkValues({ schema: { type: 'object', properties: { [name]: prop } } }, { [name]: def });
    if (!result.ok) fail(`${where}.default does not match the property: ${result.errors[0]?.message ?? 'invalid'}`);
    (prop as Descriptive<unknown>).default = def;
  }
  return prop;
}

function parseFormOrThrow(input: unknown): FormDefinition {
  if (!isPlainObject(input)) fail(`form must be an object, got ${describe(input)}`);
  checkKeys(input, FORM_KEYS, 'form');

  const schema = own(input, 'schema');
  if (!isPlainObject(schema)) fail(`form.schema must be an object, got ${describe(schema)}`);
  checkKeys(schema, SCHEMA_KEYS, 'schema');
  if (own(schema, 'type') !== 'object') fail('schema.type must be "object"');

  const properties = own(schema, 'properties');
  if (!isPlainObject(properties)) fail(`schema.properties must be an object, got ${describe(properties)}`);
  const names = Object.keys(properties);
  if (names.length < FORM_LIMITS.propertiesMin || names.length > FORM_LIMITS.propertiesMax) {
    fail(`schema.properties must have ${FORM_LIMITS.propertiesMin} to ${FORM_LIMITS.propertiesMax} properties, has ${names.length}`);
  }
  const props: Record<string, FormProperty> = {};
  for (const name of names) {
    checkName(name, 'schema.properties');
    props[name] = parseProperty(properties[name], name);
  }

  const form: FormDefinition = { schema: { type: 'object', properties: props } };
  if (Object.hasOwn(schema, 'required')) form.schema.required = nameList(schema.required, names, 'schema.required');
  const title = optionalString(input, 'title', 'form');
  if (title !== undefined) form.title = title;
  const submitLabel = optionalString(input, 'submitLabel', 'form');
  if (submitLabel !== undefined) form.submitLabel = submitLabel;
  if (Object.hasOwn(input, 'order')) form.order = nameList(input.order, names, 'form.order');
  return form;
}

/**
 * Parse a form definition of the structured-form subset (seed 003). Anything outside the subset
 * (unknown key, nested object, array or unknown type, more than 30 properties, ...) rejects the
 * whole form. The returned form is a fresh copy holding only recognised keys.
 */
export function parseFormDefinition(input: unknown): ParseFormResult {
  try {
    return { ok: true, form: parseFormOrThrow(input) };
  } catch (err) {
    if (err instanceof FormError) return { ok: false, error: err.message };
    return { ok: false, error: 'form could not be read' };
  }
}

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

function checkValues(
  form: FormDefinition,
  values: unknown,
): { ok: true; values: Record<string, unknown> } | { ok: false; errors: FieldError[] } {
  if (!isPlainObject(values)) return { ok: false, errors: [{ field: null, message: `values must be an object, got ${describe(values)}` }] };
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
    if (!isPlainObject(values)) return { ok: false, errors: { [FORM_ERROR_KEY]: `reply must be an object, got ${describe(values)}` } };
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

/** Display order: names listed in `order` first, then the rest in declaration order. */
export function orderedPropertyNames(form: FormDefinition): string[] {
  return fieldOrder(form);
}
