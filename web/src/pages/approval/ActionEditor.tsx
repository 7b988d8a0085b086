import { useState } from 'react';
import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { FormView } from '../../render/FormView';
import { readForm } from '../../render/form';
import { dataBoxText, messageEdit } from '../../render/edit';

// Edit-then-approve: the editor of the revision on screen.

export const ActionEditorFields = graphql(`
  fragment ActionEditor on ApprovalRevision {
    action
  }
`);

/**
 * The editor starts from the revision on screen. It sends only what the reviewer changed: an
 * emptied Data box removes the data, untouched form fields keep their value or absence.
 */
export function ActionEditor(props: { revision: FragmentType<typeof ActionEditorFields>; busy: boolean; onEdit: (edit: Record<string, unknown>) => void }) {
  const { action } = getFragmentData(ActionEditorFields, props.revision);
  const { busy, onEdit } = props;
  const a = (action ?? {}) as Record<string, unknown>;
  const [text, setText] = useState(typeof a.text === 'string' ? a.text : '');
  const [dataText, setDataText] = useState(dataBoxText(a.data));
  const [error, setError] = useState<string | null>(null);
  const form = a.kind === 'send_data' ? readForm(a.form) : null;
  if (a.kind === 'send_data') {
    if (!form) return <p className="error">This form is outside the supported subset and cannot be edited here.</p>;
    return (
      <fieldset className="editor" aria-label="Edit the values">
        <p className="muted">Change only what should change; fields you leave alone are sent exactly as the agent proposed them.</p>
        <FormView
          form={form}
          values={(a.values ?? {}) as Record<string, unknown>}
          edit
          busy={busy}
          submitLabel="Review these values"
          onSubmit={(values) => onEdit({ kind: 'send_data', values })}
        />
      </fieldset>
    );
  }
  return (
    <form
      className="editor"
      aria-label="Edit the message"
      onSubmit={(e) => {
        e.preventDefault();
        const r = messageEdit(action, text, dataText);
        setError(r.ok ? null : r.error);
        if (r.ok) onEdit(r.edit);
      }}
    >
      <div className="field">
        <label htmlFor="edit-text">Message text</label>
        <textarea id="edit-text" rows={5} value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="edit-data">Data (JSON object; empty removes it)</label>
        <textarea id="edit-data" rows={4} value={dataText} onChange={(e) => setDataText(e.target.value)} spellCheck={false} />
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        Review edited action
      </button>
    </form>
  );
}
