import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { getFragmentData, graphql, type FragmentType } from '../gql';
import { errorInfo } from '../lib/errors';
import { duration, when } from '../lib/time';
import { ServerTools } from './mcp/ServerTools';
import { CallRulesEditor, Field, type FieldProblem, problemAt, type RuleDraft, ruleDraft, ruleInputs } from './mcp/CallRulesEditor';

// MCP servers behind approval (admins; docs/MCP.md "The gateway"): the registered servers, the
// gateway URL to give MCP clients, each server's call rules (edited as an ordered list), and a form
// to register one by its Streamable HTTP URL. A server run as a command (stdio, on Taskbay's host)
// is listed but registered only through the API. Everything a server's row holds is shown as text.

const McpServerFields = graphql(`
  fragment McpServerFields on McpServer {
    id
    name
    transport
    url
    command
    args
    gatewayPath
    holdSeconds
    createdAt
    rules {
      condition
      outcome
      reason
    }
  }
`);

const McpServersQuery = graphql(`
  query McpServers {
    mcpServers {
      id
      ...McpServerFields
    }
  }
`);

const Register = graphql(`
  mutation RegisterMcpServer($name: String!, $url: String!, $rules: [McpCallRuleInput!], $holdSeconds: Int) {
    registerMcpServer(name: $name, url: $url, rules: $rules, holdSeconds: $holdSeconds) {
      id
      ...McpServerFields
    }
  }
`);

const SetRules = graphql(`
  mutation SetMcpServerRules($id: ID!, $rules: [McpCallRuleInput!]!) {
    setMcpServerRules(id: $id, rules: $rules) {
      id
      ...McpServerFields
    }
  }
`);

const Remove = graphql(`
  mutation RemoveMcpServer($id: ID!) {
    removeMcpServer(id: $id) {
      id
      removedAt
    }
  }
`);

const OUTCOME_WORDS: Record<string, string> = { PASS: 'pass', HOLD: 'hold for a person', REFUSE: 'refuse' };

/** The API's refusal as the field it names and its message. */
function problemOf(error: Parameters<typeof errorInfo>[0]): FieldProblem | null {
  const e = errorInfo(error);
  if (!e) return null;
  return {
    field: typeof e.extensions.field === 'string' ? e.extensions.field : '',
    message: e.code === 'BAD_USER_INPUT' ? e.message : `${e.code}: ${e.message}`,
  };
}

/** A problem no field of the form shows, shown above its button. */
function otherProblem(problem: FieldProblem | null, fields: string[]): string | null {
  if (!problem) return null;
  return fields.includes(problem.field) || /^rules(\[\d+\](\.\w+)?)?$/.test(problem.field) ? null : problem.message;
}

const holdText = (s: number | null | undefined) =>
  s ? `A held call waits up to ${duration(s * 1000)} for a decision.` : "A held call waits for a decision until the server's default expiry.";

function RemoveServer({ id, name, onRemoved }: { id: string; name: string; onRemoved: () => void }) {
  const [asking, setAsking] = useState(false);
  const [removed, remove] = useMutation(Remove);
  const refusal = errorInfo(removed.error);
  if (!asking) {
    return (
      <button type="button" className="link danger" onClick={() => setAsking(true)}>
        Remove server
      </button>
    );
  }
  return (
    <fieldset className="confirm-inline">
      <legend>{`Remove ${name}`}</legend>
      <p>{`Remove ${name}? Its open sessions end and no new call is forwarded; the requests its calls held stay readable.`}</p>
      {refusal && (
        <p className="error" role="alert">
          {refusal.message}
        </p>
      )}
      <button
        type="button"
        className="danger"
        disabled={removed.fetching}
        onClick={async () => {
          const r = await remove({ id });
          if (!r.error) onRemoved();
        }}
      >
        {`Remove ${name}`}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

function Server(props: { server: FragmentType<typeof McpServerFields>; onRemoved: () => void }) {
  const s = getFragmentData(McpServerFields, props.server);
  const [showTools, setShowTools] = useState(false);
  const [rules, setRules] = useState<RuleDraft[] | null>(null);
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  const [saved, save] = useMutation(SetRules);
  const idBase = `mcp-${s.id}`;
  return (
    <li className="card" aria-label={`MCP server ${s.name}`} data-server={s.name}>
      <h2>{s.name}</h2>
      <p className="muted">
        {/* Where the server is: text, never a link. */}
        {s.transport === 'STDIO' ? (
          <>
            {'Runs on Taskbay’s host (stdio): '}
            <code data-testid="mcp-command">{[s.command ?? '', ...(s.args ?? [])].map((x) => JSON.stringify(x)).join(' ')}</code>
          </>
        ) : (
          <>
            {'Streamable HTTP · '}
            <code data-testid="mcp-url">{s.url}</code>
          </>
        )}
        {` · registered ${when(s.createdAt)}`}
      </p>
      <p>
        {'Gateway URL for MCP clients (with a Taskbay API token): '}
        <code data-testid="gateway-url">{`${location.origin}${s.gatewayPath}`}</code>
      </p>
      <p className="muted">{holdText(s.holdSeconds)}</p>
      {rules === null ? (
        <>
          <h3>Call rules</h3>
          {s.rules.length === 0 ? (
            <p className="muted">No rules: every call is held.</p>
          ) : (
            <ol className="rules" aria-label={`Call rules of ${s.name}`}>
              {s.rules.map((r, i) => (
                // Rules have no identity but their place in the list, which is what they mean.
                // biome-ignore lint/suspicious/noArrayIndexKey: the list is replaced whole, never reordered in place
                <li key={i}>
                  <code>{r.condition || '(every call)'}</code>
                  {` → ${OUTCOME_WORDS[r.outcome] ?? r.outcome}${r.reason ? `: ${r.reason}` : ''}`}
                </li>
              ))}
            </ol>
          )}
          <p className="muted small-print">No rule matching: the call is held.</p>
          <button type="button" onClick={() => setRules(s.rules.map((r) => ruleDraft(r)))}>
            Edit rules
          </button>
        </>
      ) : (
        <form
          aria-label={`Edit the rules of ${s.name}`}
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await save({ id: s.id, rules: ruleInputs(rules) });
            setProblem(problemOf(r.error));
            if (!r.error) setRules(null);
          }}
        >
          <CallRulesEditor
            id={idBase}
            rules={rules}
            problem={problem}
            onChange={(list, reordered) => {
              setRules(list);
              if (reordered) setProblem(null);
            }}
          />
          {otherProblem(problem, []) && (
            <p className="error" role="alert">
              {otherProblem(problem, [])}
            </p>
          )}
          <div className="buttons">
            <button type="submit" className="primary" disabled={saved.fetching}>
              Save rules
            </button>
            <button
              type="button"
              onClick={() => {
                setRules(null);
                setProblem(null);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
      {showTools ? (
        <ServerTools id={s.id} name={s.name} />
      ) : (
        <button type="button" onClick={() => setShowTools(true)}>
          Show tools and recent calls
        </button>
      )}
      <RemoveServer id={s.id} name={s.name} onRemoved={props.onRemoved} />
    </li>
  );
}

const EMPTY = { name: '', url: '', holdSeconds: '' };

function RegisterForm({ onRegistered }: { onRegistered: () => void }) {
  const [form, setForm] = useState(EMPTY);
  const [rules, setRules] = useState<RuleDraft[]>([]);
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  const [registered, register] = useMutation(Register);
  const err = (f: string) => problemAt(problem, f);
  const other = otherProblem(problem, ['name', 'url', 'holdSeconds']);
  return (
    <form
      className="card"
      aria-label="Register an MCP server"
      onSubmit={async (e) => {
        e.preventDefault();
        const hold = form.holdSeconds.trim();
        const r = await register({ name: form.name.trim(), url: form.url.trim(), rules: ruleInputs(rules), holdSeconds: hold ? Number(hold) : null });
        setProblem(problemOf(r.error));
        if (!r.error) {
          setForm(EMPTY);
          setRules([]);
          onRegistered();
        }
      }}
    >
      <h2>Register an MCP server</h2>
      <Field id="mcp-new-name" label="Name (the gateway path /mcp/servers/<name>)" error={err('name')}>
        {(aria) => <input {...aria} required value={form.name} placeholder="github" onChange={(e) => setForm({ ...form, name: e.target.value })} />}
      </Field>
      <Field id="mcp-new-url" label="Streamable HTTP URL" error={err('url')}>
        {(aria) => (
          <input
            {...aria}
            type="url"
            required
            value={form.url}
            placeholder="https://mcp.internal.example/mcp"
            onChange={(e) => setForm({ ...form, url: e.target.value })}
          />
        )}
      </Field>
      <Field id="mcp-new-holdSeconds" label="Hold time in seconds (empty: the default expiry)" error={err('holdSeconds')}>
        {(aria) => <input {...aria} type="number" min={1} value={form.holdSeconds} onChange={(e) => setForm({ ...form, holdSeconds: e.target.value })} />}
      </Field>
      <CallRulesEditor
        id="mcp-new"
        rules={rules}
        problem={problem}
        onChange={(list, reordered) => {
          setRules(list);
          if (reordered) setProblem(null);
        }}
      />
      {other && (
        <p className="error" role="alert">
          {other}
        </p>
      )}
      <button type="submit" className="primary" disabled={registered.fetching}>
        Register server
      </button>
    </form>
  );
}

export function McpServersPage() {
  const [{ data, error }, reload] = useQuery({ query: McpServersQuery, requestPolicy: 'cache-and-network' });
  return (
    <section aria-labelledby="mcp-servers-h">
      <h1 id="mcp-servers-h">MCP servers</h1>
      <p className="muted">
        MCP servers behind approval: MCP clients reach each one through Taskbay at its gateway URL, and each tools/call is passed, held for a person, or refused
        by the server's call rules. No rule matching holds the call. See docs/MCP.md.
      </p>
      {error && <p className="error">{error.message}</p>}
      {data && data.mcpServers.length === 0 && <p className="muted">No MCP server registered yet.</p>}
      <ul className="agents" aria-label="MCP servers">
        {data?.mcpServers.map((s) => (
          <Server key={s.id} server={s} onRemoved={() => reload({ requestPolicy: 'network-only' })} />
        ))}
      </ul>
      <RegisterForm onRegistered={() => reload({ requestPolicy: 'network-only' })} />
    </section>
  );
}
