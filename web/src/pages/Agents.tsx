import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { errorInfo } from '../lib/errors';
import { when } from '../lib/time';
import { JsonTree } from '../render/JsonTree';
import { NoAccessNote } from '../components/NoAccess';
import { RegisterAgentForm } from './RegisterAgent';

const AgentsQuery = graphql(`
  query Agents {
    agents {
      id
      name
      kind
      cardUrl
      endpointUrl
      hookUser {
        id
        email
      }
      createdAt
      extensions
      lastError {
        kind
        message
        detail
        at
      }
      skills {
        id
        name
        description
      }
      snapshots {
        number
        fetchedAt
        extensions
        card
      }
    }
  }
`);

const Refresh = graphql(`
  mutation RefreshAgent($id: ID!) {
    refreshAgentCard(id: $id) {
      id
      extensions
      snapshots {
        number
        fetchedAt
        extensions
        card
      }
    }
  }
`);

export function AgentsPage({ isAdmin }: { isAdmin: boolean }) {
  const [{ data, error }, reload] = useQuery({ query: AgentsQuery });
  const [ref, refresh] = useMutation(Refresh);
  const e = errorInfo(ref.error);
  return (
    <section aria-labelledby="agents-h">
      <h1 id="agents-h">Agents</h1>
      {isAdmin && <RegisterAgentForm />}
      {e && (
        <p className="error" role="alert">
          {`${e.code}: ${e.message}`}
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
      {data &&
        data.agents.length === 0 &&
        (isAdmin ? (
          <p className="muted">No agent registered yet: register one by its Agent Card URL (A2A) or its endpoint URL (AG-UI).</p>
        ) : (
          <NoAccessNote what="agents" />
        ))}
      <ul className="agents" aria-label="Agents">
        {data?.agents.map((a) =>
          a.kind === 'COMMAND_HOOK' ? (
            // A hook's agent record has no card: it only scopes its person's command approvals.
            <li key={a.id} className="card">
              <h2>{a.name}</h2>
              <p className="muted">{`Command hook${a.hookUser ? ` of ${a.hookUser.email}` : ''} · no Agent Card, takes no tasks`}</p>
              <p>{`Created ${when(a.createdAt)} on the first command request. Grant VIEW or OPERATE on it (People) to choose who reviews these commands.`}</p>
            </li>
          ) : a.kind === 'MCP_CLIENT' ? (
            // An MCP host asking through /mcp: no card, no endpoint; it only scopes its requests.
            <li key={a.id} className="card">
              <h2>{a.name}</h2>
              <p className="muted">MCP client · asks through Taskbay's MCP server, takes no tasks</p>
              <p>{`Created ${when(a.createdAt)} on its first request. Grant VIEW or OPERATE on it (People) to choose who reviews its requests.`}</p>
            </li>
          ) : a.kind === 'AG_UI' ? (
            <li key={a.id} className="card">
              <h2>{a.name}</h2>
              <p className="muted">
                {/* The endpoint is shown as text, never a link. */}
                AG-UI · endpoint <code>{a.endpointUrl}</code>
              </p>
              <p>{`Registered ${when(a.createdAt)} · no card: named at registration, no skills or start form. Start tasks with it from Tasks.`}</p>
              <LastError error={a.lastError} />
            </li>
          ) : (
            <li key={a.id} className="card">
              <h2>{a.name}</h2>
              <p className="muted">
                {/* The card URL is shown as text, never a link. */}
                A2A · card <code>{a.cardUrl}</code>
              </p>
              <p>{`Registered ${when(a.createdAt)} · ${a.snapshots.length} card snapshot(s)`}</p>
              <div>
                Extensions:
                <ul>
                  {a.extensions.length ? (
                    a.extensions.map((x) => (
                      <li key={x}>
                        <code>{x}</code>
                      </li>
                    ))
                  ) : (
                    <li className="muted">none</li>
                  )}
                </ul>
              </div>
              {a.skills.length > 0 && (
                <div>
                  Skills:
                  <ul>
                    {a.skills.map((s) => (
                      <li key={s.id}>{`${s.name}${s.description ? ` — ${s.description}` : ''}`}</li>
                    ))}
                  </ul>
                </div>
              )}
              {isAdmin && (
                <button
                  type="button"
                  disabled={ref.fetching}
                  onClick={async () => {
                    // A failed refresh records the agent's last error: show it.
                    if ((await refresh({ id: a.id })).error) reload({ requestPolicy: 'network-only' });
                  }}
                >
                  Refresh card
                </button>
              )}
              <LastError error={a.lastError} />
              <details>
                <summary>Snapshots</summary>
                {a.snapshots.map((s) => (
                  <details key={s.number}>
                    <summary>{`#${s.number} · ${when(s.fetchedAt)}`}</summary>
                    <JsonTree value={s.card} label={`Card snapshot ${s.number}`} openDepth={1} />
                  </details>
                ))}
              </details>
            </li>
          ),
        )}
      </ul>
    </section>
  );
}

function LastError({ error }: { error: { kind: string; message: string; detail?: string | null; at: string } | null | undefined }) {
  if (!error) return null;
  return (
    <details className="agent-last-error">
      <summary>{`Last error ${when(error.at)}: ${error.message}`}</summary>
      <p className="muted">{`Kind: ${error.kind}. What the agent or the network answered (admins only; callers never see it):`}</p>
      {error.detail && <pre>{error.detail}</pre>}
    </details>
  );
}
