// The structured-form subset (seed 003, "Ask for a form"): whether an agent's form definition is
// in the subset, and a clean copy of it. One rule for the server and the console: the server
// stores and uses only forms this accepts (request parts, INPUT_REQUIRED forms, start forms) and
// the console's readForm offers exactly these. Like limits.ts and edit-rules.ts the console
// bundles this file: plain TypeScript, no Node built-ins, no ajv.
//
// Agent content is hostile. Nothing here spreads or mutates the input: every object read is
// checked to be a plain object, keys are read with Object.keys / Object.hasOwn, and every
// result is a fresh object holding only recognised keys (reserved names such as `__proto__`
// can never become keys of a result, because they are refused as property names).

import { FORM_KEYS, PROPERTY_KEYS, SCHEMA_KEYS, fieldKind, fieldOrder, fieldValueProblem, propertyNameProblem, unknownKey } from '../edit-rules.js';
import { describeType, isPlainObject, own } from '../lib/untrusted.js';
import { FORM_LIMITS } from '../limits.js';

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

export function isEnumProperty(p: FormProperty): p is EnumProperty {
  return Object.hasOwn(p, 'enum');
}

// ---------------------------------------------------------------------------------------------
// Small checks

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
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
  if (typeof v !== 'string') fail(`${where}.${key} must be a string, got ${describeType(v)}`);
  return v;
}

/** An array of distinct declared property names. */
function nameList(value: unknown, declared: string[], where: string): string[] {
  if (!Array.isArray(value)) fail(`${where} must be an array of property names, got ${describeType(value)}`);
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') fail(`${where} must contain only strings, got ${describeType(item)}`);
    if (!declared.includes(item)) fail(`${where} names "${item}", which is not a declared property`);
    if (out.includes(item)) fail(`${where} names "${item}" twice`);
    out.push(item);
  }
  return out;
}

function parseProperty(input: unknown, name: string): FormProperty {
  const where = `schema.properties.${name}`;
  if (!isPlainObject(input)) fail(`${where} must be an object, got ${describeType(input)}`);
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
      if (typeof v !== 'string') fail(`${where}.enum must contain only strings, got ${describeType(v)}`);
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
        if (typeof n !== 'string') fail(`${where}.enumNames must contain only strings, got ${describeType(n)}`);
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
    const problem = fieldValueProblem(prop, def);
    if (problem) fail(`${where}.default does not match the property: ${problem}`);
    (prop as Descriptive<unknown>).default = def;
  }
  return prop;
}

function parseFormOrThrow(input: unknown): FormDefinition {
  if (!isPlainObject(input)) fail(`form must be an object, got ${describeType(input)}`);
  checkKeys(input, FORM_KEYS, 'form');

  const schema = own(input, 'schema');
  if (!isPlainObject(schema)) fail(`form.schema must be an object, got ${describeType(schema)}`);
  checkKeys(schema, SCHEMA_KEYS, 'schema');
  if (own(schema, 'type') !== 'object') fail('schema.type must be "object"');

  const properties = own(schema, 'properties');
  if (!isPlainObject(properties)) fail(`schema.properties must be an object, got ${describeType(properties)}`);
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

/** Display order: names listed in `order` first, then the rest in declaration order. */
export function orderedPropertyNames(form: FormDefinition): string[] {
  return fieldOrder(form);
}
