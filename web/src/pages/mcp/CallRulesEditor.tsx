import type { ReactNode } from 'react';
import type { McpCallOutcome } from '../../gql/graphql';

// The ordered call rules of one MCP server, as a list to edit (docs/MCP.md "Which calls wait"):
// each rule a condition, an outcome and a reason; add, remove, move up and down. The server checks
// the list whole when it is saved; its refusal names the field (`rules[2].condition`), which is
// shown next to that field of that rule.

export type RuleDraft = { key: number; condition: string; outcome: McpCallOutcome; reason: string };
export type RuleInput = { condition: string; outcome: McpCallOutcome; reason: string | null };
/** A refusal of the API: the field it names (extensions.field, '' when none) and its message. */
export type FieldProblem = { field: string; message: string };

const OUTCOMES: { value: McpCallOutcome; label: string }[] = [
  { value: 'HOLD', label: 'Hold for a person' },
  { value: 'PASS', label: 'Pass (forward at once)' },
  { value: 'REFUSE', label: 'Refuse (a tool error with the reason)' },
];

let next = 0;
export const ruleDraft = (r: Partial<RuleInput> = {}): RuleDraft => ({
  key: next++,
  condition: r.condition ?? '',
  outcome: r.outcome ?? 'HOLD',
  reason: r.reason ?? '',
});
export const ruleInputs = (rules: RuleDraft[]): RuleInput[] =>
  rules.map((r) => ({ condition: r.condition, outcome: r.outcome, reason: r.reason.trim() ? r.reason : null }));

/** The problem's message when it names this field, else null. */
export const problemAt = (problem: FieldProblem | null, field: string) => (problem?.field === field ? problem.message : null);

/** A refusal, where it applies; `id` is what the refused field's aria-describedby names. */
function FieldError({ id, message }: { id: string; message: string | null }) {
  if (!message) return null;
  return (
    <p className="error" id={id} role="alert">
      {message}
    </p>
  );
}

type FieldAria = { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string };

/** A labelled field with the API's refusal of it (`error`) under it; `children` makes the control from its id and ARIA attributes. */
export function Field({ id, label, error, children }: { id: string; label: string; error: string | null; children: (aria: FieldAria) => ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(error ? { id, 'aria-invalid': true, 'aria-describedby': `${id}-error` } : { id })}
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}

export function CallRulesEditor(props: {
  id: string;
  rules: RuleDraft[];
  onChange: (rules: RuleDraft[], reordered: boolean) => void;
  problem: FieldProblem | null;
}) {
  const { id, rules, onChange, problem } = props;
  const set = (i: number, patch: Partial<RuleDraft>) =>
    onChange(
      rules.map((x, k) => (k === i ? { ...x, ...patch } : x)),
      false,
    );
  const move = (i: number, by: number) => {
    const list = [...rules];
    const [r] = list.splice(i, 1);
    list.splice(i + by, 0, r!);
    onChange(list, true);
  };
  const listProblem = problemAt(problem, 'rules');
  return (
    <fieldset className="call-rules" aria-describedby={listProblem ? `${id}-rules-error` : undefined}>
      <legend>Call rules, tried in order</legend>
      <p className="muted small-print">
        Each tools/call gets the outcome of the first rule whose condition is true. <strong>No rule matching holds the call</strong> for a person's approval. A
        condition is CEL over <code>mcp.server</code>, <code>mcp.tool</code>, <code>mcp.arguments</code> (canonical JSON), <code>mcp.title</code> and the tool's
        annotations <code>mcp.readOnlyHint</code>, <code>mcp.destructiveHint</code>, <code>mcp.idempotentHint</code>, <code>mcp.openWorldHint</code> ("true",
        "false" or ""); an empty condition matches every call.
      </p>
      <FieldError id={`${id}-rules-error`} message={listProblem} />
      {rules.length === 0 && <p className="muted">No rules: every call is held.</p>}
      <ol className="rules">
        {rules.map((r, i) => {
          const n = i + 1;
          const at = (f: string) => `${id}-rule-${i}-${f}`;
          const err = (f: string) => problemAt(problem, `rules[${i}].${f}`);
          const rowProblem = problemAt(problem, `rules[${i}]`);
          return (
            <li key={r.key} className="rule" data-rule={n}>
              <Field id={at('condition')} label={`Condition of rule ${n}`} error={err('condition')}>
                {(aria) => (
                  <input
                    {...aria}
                    value={r.condition}
                    placeholder='mcp.readOnlyHint == "true"'
                    spellCheck={false}
                    onChange={(e) => set(i, { condition: e.target.value })}
                  />
                )}
              </Field>
              <Field id={at('outcome')} label={`Outcome of rule ${n}`} error={err('outcome')}>
                {(aria) => (
                  <select {...aria} value={r.outcome} onChange={(e) => set(i, { outcome: e.target.value as McpCallOutcome })}>
                    {OUTCOMES.map((o) => (
                      <option key={o.value} value={o.value}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field id={at('reason')} label={`Reason of rule ${n}${r.outcome === 'REFUSE' ? ' (the caller reads it)' : ''}`} error={err('reason')}>
                {(aria) => <input {...aria} value={r.reason} onChange={(e) => set(i, { reason: e.target.value })} />}
              </Field>
              <FieldError id={`${at('row')}-error`} message={rowProblem} />
              <div className="buttons">
                <button type="button" className="small" disabled={i === 0} aria-label={`Move rule ${n} up`} onClick={() => move(i, -1)}>
                  Up
                </button>
                <button type="button" className="small" disabled={i === rules.length - 1} aria-label={`Move rule ${n} down`} onClick={() => move(i, 1)}>
                  Down
                </button>
                <button
                  type="button"
                  className="small danger"
                  aria-label={`Remove rule ${n}`}
                  onClick={() =>
                    onChange(
                      rules.filter((_, k) => k !== i),
                      true,
                    )
                  }
                >
                  Remove
                </button>
              </div>
            </li>
          );
        })}
      </ol>
      <button type="button" onClick={() => onChange([...rules, ruleDraft()], true)}>
        Add rule
      </button>
    </fieldset>
  );
}
