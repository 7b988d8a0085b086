import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { errorInfo } from '../lib/errors';
import { when } from '../lib/time';
import { JsonTree } from '../render/JsonTree';
import { NoAccessNote } from '../components/NoAccess';

const AgentsQuery = graphql(`
  query Agents {
    agents {
      id
      name
      kind
      cardUrl
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

const Register = graphql(`
  mutation RegisterAgent($cardUrl: String!) {
    registerAgent(input: { cardUrl: $cardUrl }) {
      id
      name
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
  const [url, setUrl] = useState('');
  const [reg, register] = useMutation(Register);
  const [ref, refresh] = useMutation(Refresh);
  const e = errorInfo(reg.error ?? ref.error);
  return (
    <section aria-labelledby="agents-h">
      <h1 id="agents-h">Agents</h1>
      {isAdmin && (
        <form
          className="inline"
          aria-label="Register an agent"
          onSubmit={async (ev) => {
            ev.preventDefault();
            const r = await register({ cardUrl: url.trim() });
            if (!r.error) setUrl('');
          }}
        >
          <label htmlFor="card-url">Agent Card URL</label>
          <input id="card-url" type="url" required value={url} onChange={(ev) => setUrl(ev.target.value)} placeholder="https://agent.example/card.json" />
          <button type="submit" disabled={reg.fetching}>
            Register
          </button>
        </form>
      )}
      {e && (
        <p className="error" role="alert">
          {`${e.code}: ${e.message}`}
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
      {data &&
        data.agents.length === 0 &&
        (isAdmin ? <p className="muted">No agent registered yet: register one by its Agent Card URL.</p> : <NoAccessNote what="agents" />)}
      <ul className="agents" aria-label="Agents">
        {data?.agents.map((a) =>
          a.kind === 'COMMAND_HOOK' ? (
            // A hook's agent record has no card: it only scopes its person's command approvals.
            <li key={a.id} className="card">
              <h2>{a.name}</h2>
              <p className="muted">{`Command hook${a.hookUser ? ` of ${a.hookUser.email}` : ''} · no Agent Card, takes no tasks`}</p>
              <p>{`Created ${when(a.createdAt)} on the first command request. Grant VIEW or OPERATE on it (People) to choose who reviews these commands.`}</p>
            </li>
          ) : (
            <li key={a.id} className="card">
              <h2>{a.name}</h2>
              <p className="muted">
                {/* The card URL is shown as text, never a link. */}
                <code>{a.cardUrl}</code>
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
              {a.lastError && (
                <details className="agent-last-error">
                  <summary>{`Last error ${when(a.lastError.at)}: ${a.lastError.message}`}</summary>
                  <p className="muted">{`Kind: ${a.lastError.kind}. What the agent or the network answered (admins only; callers never see it):`}</p>
                  {a.lastError.detail && <pre>{a.lastError.detail}</pre>}
                </details>
              )}
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
