import { useId, useState } from 'react';
import { coerce, fieldOrder, rawFrom, type RawValues, type StructuredForm } from './form';

/**
 * A structured form. Read-only shows the values an agent proposes; editable validates and
 * coerces like the server before calling onSubmit. Labels, titles and options are text.
 */
export function FormView({
  form,
  values,
  readOnly,
  onSubmit,
  submitLabel,
  busy,
}: {
  form: StructuredForm;
  values?: Record<string, unknown> | null;
  readOnly?: boolean;
  onSubmit?: (values: Record<string, unknown>) => void;
  submitLabel?: string;
  busy?: boolean;
}) {
  const [raw, setRaw] = useState<RawValues>(() => rawFrom(form, values));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const id = useId();
  const required = new Set(form.schema.required ?? []);
  return (
    <form
      className="sform"
      aria-label={form.title ?? 'Form'}
      onSubmit={(e) => {
        e.preventDefault();
        if (readOnly || !onSubmit) return;
        const r = coerce(form, raw);
        setErrors(r.errors);
        if (Object.keys(r.errors).length === 0) onSubmit(r.values);
      }}
    >
      {form.title && <div className="sform-title">{form.title}</div>}
      {form.description && <p className="muted">{form.description}</p>}
      {fieldOrder(form).map((name) => {
        const p = form.schema.properties[name]!;
        const fid = `${id}-${name}`;
        const label = `${p.title ?? name}${required.has(name) ? ' *' : ''}`;
        const err = errors[name];
        const common = { id: fid, name, disabled: readOnly || busy, 'aria-invalid': err ? true : undefined, 'aria-describedby': err ? `${fid}-err` : undefined };
        const set = (v: string | boolean) => setRaw((x) => ({ ...x, [name]: v }));
        let input;
        if (p.type === 'boolean') {
          input = <input type="checkbox" {...common} checked={raw[name] === true} onChange={(e) => set(e.target.checked)} />;
        } else if (p.enum) {
          input = (
            <select {...common} value={String(raw[name] ?? '')} onChange={(e) => set(e.target.value)}>
              <option value="">—</option>
              {p.enum.map((v, i) => (
                <option key={v} value={v}>
                  {p.enumNames?.[i] ?? v}
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
            <label htmlFor={fid}>{label}</label>
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
      {!readOnly && onSubmit && (
        <button type="submit" disabled={busy}>
          {submitLabel ?? form.submitLabel ?? 'Submit'}
        </button>
      )}
    </form>
  );
}
