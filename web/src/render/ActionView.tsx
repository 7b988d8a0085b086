import { FormView } from './FormView';
import { JsonTree } from './JsonTree';
import { readForm } from './form';
import { readToolCall } from './tool-call';

/**
 * The exact action a reviewer approves: send_message text as text (whitespace kept), its data
 * as a JSON tree (an MCP tool call, data exactly {server, tool, arguments}, as the tool, the
 * server and the arguments' tree); send_data as the agent's form showing the proposed values; a coding agent's
 * command (seed 002) verbatim with its sealed payload. Anything else is
 * shown whole as JSON under a warning.
 */
export function ActionView({ action }: { action: unknown }) {
  const a = (action ?? {}) as Record<string, unknown>;
  const call = readToolCall(action);
  if (call) {
    return (
      <div className="action" data-kind="tool_call">
        <div className="action-kind" data-testid="tool-call">
          {'Tool '}
          <code>{call.tool}</code>
          {' on MCP server '}
          <code>{call.server}</code>
        </div>
        <div className="action-kind">with these arguments</div>
        <JsonTree value={call.arguments} label="Tool arguments" />
        <div className="action-kind">Message text</div>
        <pre className="action-text" aria-label="Message text">
          {a.text as string}
        </pre>
      </div>
    );
  }
  if (a.kind === 'send_message' && typeof a.text === 'string') {
    return (
      <div className="action" data-kind="send_message">
        <div className="action-kind">Send this message to the agent</div>
        <pre className="action-text" aria-label="Message text">
          {a.text}
        </pre>
        {a.data !== undefined && a.data !== null && (
          <>
            <div className="action-kind">with data</div>
            <JsonTree value={a.data} label="Message data" />
          </>
        )}
      </div>
    );
  }
  if (a.kind === 'send_data') {
    const form = readForm(a.form);
    const values = (a.values && typeof a.values === 'object' ? a.values : {}) as Record<string, unknown>;
    return (
      <div className="action" data-kind="send_data">
        <div className="action-kind">Send these form values to the agent</div>
        {form ? <FormView form={form} values={values} readOnly /> : <JsonTree value={a.form} label="Form (not in the supported subset)" />}
        <div className="action-kind">Values exactly as sent</div>
        <JsonTree value={values} label="Values" />
      </div>
    );
  }
  if (a.kind === 'run_command' && Array.isArray(a.commands) && a.commands.every((c) => typeof c === 'string')) {
    const payload = (a.payload && typeof a.payload === 'object' ? a.payload : {}) as Record<string, unknown>;
    return (
      <div className="action" data-kind="run_command">
        <div className="action-kind">
          Let coding agent {String(a.agent_id ?? '?')} run {a.commands.length === 1 ? 'this command' : `these ${a.commands.length} commands`} once
        </div>
        {(a.commands as string[]).map((c, i) => (
          <pre key={i} className="action-text" aria-label={`Command ${i + 1}`}>
            {c}
          </pre>
        ))}
        <div className="action-kind">Sealed payload</div>
        <JsonTree value={payload} label="Sealed payload" />
      </div>
    );
  }
  return (
    <div className="action" data-kind="unknown">
      <div className="action-kind warn">Unrecognised action kind: shown as data</div>
      <JsonTree value={action} label="Action" />
    </div>
  );
}
