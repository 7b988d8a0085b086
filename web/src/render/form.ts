// The structured-form subset (seed 003) on the client: reading a form, and turning what a
// person typed into values. The rules (allowed keys, number parsing, code-point lengths, what
// an untouched field means) are the server's, imported from the one shared module.
import {
  FORM_KEYS,
  PROPERTY_KEYS,
  SCHEMA_KEYS,
  fieldKind,
  fieldOrder as sharedFieldOrder,
  isPlainObject,
  propertyNameProblem,
  unknownKey,
  valuesFromInputs,
  type FieldInput,
} from '../../../server/src/edit-rules.js';
import { FORM_LIMITS } from '../../../server/src/limits.js';

export interface FormProperty {
  type: 'string' | 'number' | 'integer' | 'boolean';
  title?: string;
  description?: string;
  enum?: string[];
  enumNames?: string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  default?: unknown;
}

export interface StructuredForm {
  title?: string;
  submitLabel?: string;
  order?: string[];
  schema: { type: 'object'; properties: Record<string, FormProperty>; required?: string[] };
}

const { propertiesMin, propertiesMax, enumMax } = FORM_LIMITS;

/** The form when it is in the subset (the server's keys and names), else null (render it as JSON instead). */
export function readForm(v: unknown): StructuredForm | null {
  if (!isPlainObject(v) || unknownKey(v, FORM_KEYS) !== null) return null;
  const schema = v.schema;
  if (!isPlainObject(schema) || unknownKey(schema, SCHEMA_KEYS) !== null || schema.type !== 'object') return null;
  const props = schema.properties;
  if (!isPlainObject(props)) return null;
  const names = Object.keys(props);
  if (names.length < propertiesMin || names.length > propertiesMax) return null;
  for (const n of names) {
    const p = props[n];
    if (propertyNameProblem(n) !== null || !isPlainObject(p)) return null;
    const kind = fieldKind(p);
    if (kind === null || unknownKey(p, PROPERTY_KEYS[kind]) !== null) return null;
    if (kind === 'enum' && (!Array.isArray(p.enum) || p.enum.length > enumMax || !p.enum.every((e) => typeof e === 'string'))) return null;
  }
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))) return null;
  return v as unknown as StructuredForm;
}

export function fieldOrder(form: StructuredForm): string[] {
  return sharedFieldOrder(form);
}

export type RawValues = Record<string, FieldInput>;

/**
 * Initial inputs. A new answer ("fill") starts from the given values, then the defaults, and
 * booleans are checkboxes. An edit starts from the values exactly: an absent field is empty
 * (a boolean "" = not set), never its default.
 */
export function rawFrom(form: StructuredForm, values: Record<string, unknown> | null | undefined, mode: 'fill' | 'edit' = 'fill'): RawValues {
  const raw: RawValues = {};
  for (const name of fieldOrder(form)) {
    const p = form.schema.properties[name]!;
    const given = values && Object.hasOwn(values, name) ? values[name] : undefined;
    const v = mode === 'fill' && given === undefined ? p.default : given;
    if (p.type === 'boolean') raw[name] = mode === 'fill' ? v === true : typeof v === 'boolean' ? String(v) : '';
    else raw[name] = v === undefined || v === null ? '' : String(v);
  }
  return raw;
}

/**
 * What the inputs mean (shared rules). With `original` and `touched` (an edit), untouched
 * fields keep exactly their original value or absence. Errors are per field.
 */
export function coerce(
  form: StructuredForm,
  raw: RawValues,
  edit?: { original: Record<string, unknown>; touched: ReadonlySet<string> },
): { values: Record<string, unknown>; errors: Record<string, string> } {
  return valuesFromInputs(form, raw, edit ?? {});
}
