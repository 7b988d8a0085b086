import { Link } from '../../lib/router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { when } from '../../lib/time';

// One MCP server's tools as it lists them now, each with the call rule that decides a call of it,
// and the calls its rules held (docs/MCP.md "In the console"). Asked for when the admin opens it:
// Taskbay connects to the server to list its tools. Everything the server says is shown as text.

const McpServerTools = graphql(`
  query McpServerTools($id: ID!) {
    mcpServer(id: $id) {
      id
      tools {
        error
        tools {
          name
          title
          description
          readOnlyHint
          destructiveHint
          outcome
          rule
          argumentsMatter
        }
      }
      recentCalls(first: 20) {
        tool
        createdAt
        forwardedAt
        resultIsError
        approval {
          id
          status
          title
        }
      }
    }
  }
`);

const OUTCOME_TEXT: Record<string, string> = { PASS: 'passes', HOLD: 'held for a person', REFUSE: 'refused' };

function ruleText(t: { outcome: string; rule?: number | null; argumentsMatter: boolean }) {
  const by = t.rule ? `by rule ${t.rule}` : 'no rule matches';
  return `${OUTCOME_TEXT[t.outcome] ?? t.outcome} (${by}${t.argumentsMatter ? '; a rule reads the arguments, so a call may be decided otherwise' : ''})`;
}

function callText(c: { forwardedAt?: unknown; resultIsError?: boolean | null; approval?: { status: string } | null }) {
  if (c.forwardedAt) return c.resultIsError ? 'forwarded; the server answered with an error' : 'forwarded once';
  return c.approval ? c.approval.status.toLowerCase().replace('_', ' ') : 'request not readable';
}

export function ServerTools({ id, name }: { id: string; name: string }) {
  const [{ data, fetching, error }, reload] = useQuery({ query: McpServerTools, variables: { id }, requestPolicy: 'network-only' });
  const server = data?.mcpServer;
  return (
    <div className="mcp-tools">
      <h3>
        Tools{' '}
        <button type="button" className="link" disabled={fetching} onClick={() => reload({ requestPolicy: 'network-only' })}>
          List again
        </button>
      </h3>
      {fetching && !server && (
        <p className="muted" role="status">
          Asking {name} for its tools…
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error.message}
        </p>
      )}
      {server?.tools.error && (
        <p className="error" role="alert">
          {server.tools.error}
        </p>
      )}
      {server && !server.tools.error && server.tools.tools.length === 0 && <p className="muted">{name} lists no tools.</p>}
      {server && server.tools.tools.length > 0 && (
        <ul className="tools" aria-label={`Tools of ${name}`}>
          {server.tools.tools.map((t) => (
            <li key={t.name} data-tool={t.name} data-outcome={t.outcome}>
              <code>{t.name}</code>
              {t.title && ` · ${t.title}`}
              {t.destructiveHint && <span className="badge risk-high">says it is destructive</span>}
              {t.readOnlyHint && <span className="badge">says it only reads</span>}
              <div className={`rule outcome-${t.outcome.toLowerCase()}`}>{ruleText(t)}</div>
              {t.description && <div className="muted small-print">{t.description}</div>}
            </li>
          ))}
        </ul>
      )}
      <h3>Recent held calls</h3>
      {server && server.recentCalls.length === 0 && <p className="muted">No call of {name} was held yet. Passed calls are not kept.</p>}
      {server && server.recentCalls.length > 0 && (
        <ol className="recent-calls" aria-label={`Recent held calls of ${name}`}>
          {server.recentCalls.map((c) => (
            <li key={c.approval?.id ?? String(c.createdAt)}>
              <code>{c.tool}</code> {when(c.createdAt)} · {callText(c)}
              {c.approval && (
                <>
                  {' · '}
                  <Link to={`/approvals/${encodeURIComponent(c.approval.id)}`}>{c.approval.title}</Link>
                </>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
