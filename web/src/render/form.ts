// The structured-form subset (seed 003) on the client: reading a form, and turning what a
// person typed into values. The rules (which forms are in the subset, number parsing,
// code-point lengths, what an untouched field means) are the server's, imported from the
// shared modules (form-definition.ts, edit-rules.ts).
import { fieldOrder as sharedFieldOrder, valuesFromInputs, type FieldInput } from '../../../server/src/edit-rules.js';
import { parseFormDefinition } from '../../../server/src/forms/form-definition.js';

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

/**
 * The form when the server would accept it (the one shared check, form-definition.ts), as the
 * clean copy that check returns; else null (render it as JSON instead).
 */
export function readForm(v: unknown): StructuredForm | null {
  const r = parseFormDefinition(v);
  return r.ok ? r.form : null;
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
