import { useId, useState } from 'react';
import { coerce, fieldOrder, rawFrom, type FormProperty, type RawValues, type StructuredForm } from './form';

/**
 * A structured form, in one of three modes:
 * - read-only: shows exactly the given values, from props (no state, so a new revision shows at
 *   once); an absent field says "not set" instead of showing a default or an unchecked box;
 * - edit (edit-then-approve): starts from the values exactly; a field the reviewer does not touch
 *   keeps its value or its absence; booleans are "not set / yes / no";
 * - fill (a person answering a form): starts from the defaults; booleans are checkboxes.
 * Editable modes validate and coerce with the server's rules before calling onSubmit. Labels,
 * titles and options are text.
 */
export function FormView(props: {
  form: StructuredForm;
  values?: Record<string, unknown> | null;
  readOnly?: boolean;
  edit?: boolean;
  onSubmit?: (values: Record<string, unknown>) => void;
  submitLabel?: string;
  busy?: boolean;
}) {
  if (props.readOnly || !props.onSubmit) return <ReadOnlyForm form={props.form} values={props.values} />;
  return <EditableForm {...props} onSubmit={props.onSubmit} />;
}

function Header({ form }: { form: StructuredForm }) {
  return form.title ? <div className="sform-title">{form.title}</div> : null;
}

const label = (form: StructuredForm, name: string) =>
  `${form.schema.properties[name]!.title ?? name}${(form.schema.required ?? []).includes(name) ? ' *' : ''}`;
const optionLabel = (p: FormProperty, v: string) => p.enumNames?.[p.enum!.indexOf(v)] ?? v;

function ReadOnlyForm({ form, values }: { form: StructuredForm; values?: Record<string, unknown> | null }) {
  const id = useId();
  return (
    <form className="sform" aria-label={form.title ?? 'Form'} onSubmit={(e) => e.preventDefault()}>
      <Header form={form} />
      {fieldOrder(form).map((name) => {
        const p = form.schema.properties[name]!;
        const fid = `${id}-${name}`;
        const present = !!values && Object.hasOwn(values, name) && values[name] !== null && values[name] !== undefined;
        const v = present ? values![name] : undefined;
        let input;
        if (p.type === 'boolean' || p.enum) {
          const shown = p.type === 'boolean' ? (v === true ? 'true' : v === false ? 'false' : '') : present ? String(v) : '';
          input = (
            <select id={fid} name={name} disabled value={shown} data-unset={present ? undefined : 'true'}>
              <option value="">— not set —</option>
              {p.type === 'boolean' ? (
                <>
                  <option value="true">Yes</option>
                  <option value="false">No</option>
                </>
              ) : (
                p.enum!.map((o) => (
                  <option key={o} value={o}>
                    {optionLabel(p, o)}
                  </option>
                ))
              )}
            </select>
          );
        } else if (p.type === 'string' && p.format === 'multiline') {
          input = <textarea id={fid} name={name} disabled value={present ? String(v) : ''} placeholder={present ? undefined : 'not set'} />;
        } else {
          input = <input type="text" id={fid} name={name} disabled value={present ? String(v) : ''} placeholder={present ? undefined : 'not set'} />;
        }
        return (
          <div className="field" key={name}>
            <label htmlFor={fid}>{label(form, name)}</label>
            {input}
            {p.description && <small className="muted">{p.description}</small>}
          </div>
        );
      })}
    </form>
  );
}

function EditableForm({
  form,
  values,
  edit,
  onSubmit,
  submitLabel,
  busy,
}: {
  form: StructuredForm;
  values?: Record<string, unknown> | null;
  edit?: boolean;
  onSubmit: (values: Record<string, unknown>) => void;
  submitLabel?: string;
  busy?: boolean;
}) {
  const [raw, setRaw] = useState<RawValues>(() => rawFrom(form, values, edit ? 'edit' : 'fill'));
  const [touched, setTouched] = useState<ReadonlySet<string>>(() => new Set());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const id = useId();
  const required = new Set(form.schema.required ?? []);
  return (
    <form
      className="sform"
      aria-label={form.title ?? 'Form'}
      onSubmit={(e) => {
        e.preventDefault();
        const r = coerce(form, raw, edit ? { original: values ?? {}, touched } : undefined);
        setErrors(r.errors);
        if (Object.keys(r.errors).length === 0) onSubmit(r.values);
      }}
    >
      <Header form={form} />
      {fieldOrder(form).map((name) => {
        const p = form.schema.properties[name]!;
        const fid = `${id}-${name}`;
        const err = errors[name];
        const common = { id: fid, name, disabled: busy, 'aria-invalid': err ? true : undefined, 'aria-describedby': err ? `${fid}-err` : undefined };
        const set = (v: string | boolean) => {
          setRaw((x) => ({ ...x, [name]: v }));
          setTouched((t) => (t.has(name) ? t : new Set(t).add(name)));
        };
        let input;
        if (p.type === 'boolean' && !edit) {
          input = <input type="checkbox" {...common} checked={raw[name] === true} onChange={(e) => set(e.target.checked)} />;
        } else if (p.type === 'boolean') {
          input = (
            <select {...common} value={String(raw[name] ?? '')} onChange={(e) => set(e.target.value)}>
              {(!required.has(name) || raw[name] === '') && <option value="">— not set —</option>}
              <option value="true">Yes</option>
              <option value="false">No</option>
            </select>
          );
        } else if (p.enum) {
          input = (
            <select {...common} value={String(raw[name] ?? '')} onChange={(e) => set(e.target.value)}>
              <option value="">— not set —</option>
              {p.enum.map((v) => (
                <option key={v} value={v}>
                  {optionLabel(p, v)}
                </option>
              ))}
            </select>
          );
        } else if (p.type === 'string' && p.format === 'multiline') {
          input = <textarea {...common} value={String(raw[name] ?? '')} onChange={(e) => set(e.target.value)} />;
        } else {
          input = (
            <input
              type="text"
              inputMode={p.type === 'string' ? undefined : 'decimal'}
              {...common}
              value={String(raw[name] ?? '')}
              onChange={(e) => set(e.target.value)}
            />
          );
        }
        return (
          <div className="field" key={name}>
            <label htmlFor={fid}>
              {label(form, name)}
              {edit && touched.has(name) && <span className="changed-mark">{' (changed)'}</span>}
            </label>
            {input}
            {p.description && <small className="muted">{p.description}</small>}
            {err && (
              <small className="error" id={`${fid}-err`} role="alert">
                {err}
              </small>
            )}
          </div>
        );
      })}
      <button type="submit" className={edit ? 'primary' : undefined} disabled={busy}>
        {submitLabel ?? form.submitLabel ?? 'Submit'}
      </button>
    </form>
  );
}
