// The structured-form subset (seed 003) on the client: reading a form, and validating and
// coercing what a person typed the way the server does (only declared keys, declared types).
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
  description?: string;
  submitLabel?: string;
  order?: string[];
  schema: { type: 'object'; properties: Record<string, FormProperty>; required?: string[] };
}

const { propertyName: NAME, reservedNames, propertiesMin, propertiesMax, enumMax } = FORM_LIMITS;
const RESERVED = new Set(reservedNames);

/** The form when it is in the subset, else null (render it as JSON instead). */
export function readForm(v: unknown): StructuredForm | null {
  if (!v || typeof v !== 'object') return null;
  const f = v as Record<string, unknown>;
  const schema = f.schema as Record<string, unknown> | undefined;
  if (!schema || schema.type !== 'object' || !schema.properties || typeof schema.properties !== 'object') return null;
  const props = schema.properties as Record<string, unknown>;
  const names = Object.keys(props);
  if (names.length < propertiesMin || names.length > propertiesMax) return null;
  for (const n of names) {
    const p = props[n] as Record<string, unknown> | null;
    if (!NAME.test(n) || RESERVED.has(n) || !p || typeof p !== 'object') return null;
    if (!['string', 'number', 'integer', 'boolean'].includes(p.type as string)) return null;
    if (p.enum !== undefined && (p.type !== 'string' || !Array.isArray(p.enum) || p.enum.length > enumMax)) return null;
  }
  return v as StructuredForm;
}

export function fieldOrder(form: StructuredForm): string[] {
  const names = Object.keys(form.schema.properties);
  const ordered = (form.order ?? []).filter((n) => names.includes(n));
  return [...ordered, ...names.filter((n) => !ordered.includes(n))];
}

export type RawValues = Record<string, string | boolean>;

/** Initial raw inputs: given values first, then defaults. */
export function rawFrom(form: StructuredForm, values: Record<string, unknown> | null | undefined): RawValues {
  const raw: RawValues = {};
  for (const name of fieldOrder(form)) {
    const p = form.schema.properties[name]!;
    const v = values && Object.hasOwn(values, name) ? values[name] : p.default;
    raw[name] = p.type === 'boolean' ? v === true : v === undefined || v === null ? '' : String(v);
  }
  return raw;
}

/** Coerces and validates; errors are per field. Empty optional fields are left out. */
export function coerce(form: StructuredForm, raw: RawValues): { values: Record<string, unknown>; errors: Record<string, string> } {
  const values: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  const required = new Set(form.schema.required ?? []);
  for (const name of fieldOrder(form)) {
    const p = form.schema.properties[name]!;
    const r = raw[name];
    if (p.type === 'boolean') {
      values[name] = r === true;
      continue;
    }
    const s = typeof r === 'string' ? r : '';
    if (s === '') {
      if (required.has(name)) errors[name] = 'Required.';
      continue;
    }
    if (p.type === 'string') {
      if (p.enum && !p.enum.includes(s)) errors[name] = 'Choose one of the options.';
      else if (p.minLength !== undefined && s.length < p.minLength) errors[name] = `At least ${p.minLength} characters.`;
      else if (p.maxLength !== undefined && s.length > p.maxLength) errors[name] = `At most ${p.maxLength} characters.`;
      else values[name] = s;
      continue;
    }
    const n = p.type === 'integer' ? (/^-?\d+$/.test(s.trim()) ? Number(s) : NaN) : s.trim() === '' ? NaN : Number(s);
    if (!Number.isFinite(n)) errors[name] = p.type === 'integer' ? 'A whole number.' : 'A number.';
    else if (p.minimum !== undefined && n < p.minimum) errors[name] = `At least ${p.minimum}.`;
    else if (p.maximum !== undefined && n > p.maximum) errors[name] = `At most ${p.maximum}.`;
    else values[name] = n;
  }
  return { values, errors };
}
