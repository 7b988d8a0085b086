import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { errorInfo } from '../lib/errors';

const PeopleQuery = graphql(`
  query People {
    users {
      id
      name
      email
      role
    }
    agents {
      id
      name
    }
    agentGrants {
      id
      permission
      skillId
      user {
        id
        name
        email
      }
      agent {
        id
        name
      }
    }
  }
`);
const Revoke = graphql(`
  mutation RevokeGrant($grantId: ID!) {
    revokeAgentAccess(grantId: $grantId) {
      id
    }
  }
`);
const CreateUser = graphql(`
  mutation CreateUser($input: CreateUserInput!) {
    createUser(input: $input) {
      id
      name
      email
      role
    }
  }
`);
const CreateToken = graphql(`
  mutation CreateToken($input: CreateApiTokenInput!) {
    createApiToken(input: $input) {
      token
    }
  }
`);
const CreateSignInLink = graphql(`
  mutation CreateSignInLinkPage($userId: ID!) {
    createSignInLink(userId: $userId) {
      url
      expiresAt
      user {
        id
        email
      }
    }
  }
`);
const Grant = graphql(`
  mutation Grant($input: GrantAgentAccessInput!) {
    grantAgentAccess(input: $input) {
      id
      permission
      skillId
    }
  }
`);

export function PeoplePage() {
  const [{ data }, refetch] = useQuery({ query: PeopleQuery });
  const [rv, revoke] = useMutation(Revoke);
  const [u, createUser] = useMutation(CreateUser);
  const [tk, createToken] = useMutation(CreateToken);
  const [g, grant] = useMutation(Grant);
  const [sl, createSignInLink] = useMutation(CreateSignInLink);
  const [signInLink, setSignInLink] = useState<{ url: string; expiresAt: string; email: string } | null>(null);
  const [form, setForm] = useState({ email: '', name: '', password: '', role: 'MEMBER' as 'MEMBER' | 'ADMIN' });
  const [token, setToken] = useState<string | null>(null);
  const [grantForm, setGrantForm] = useState({ userId: '', agentId: '', skillId: '', permission: 'OPERATE' as 'OPERATE' | 'VIEW' });
  const [note, setNote] = useState<string | null>(null);
  const e = errorInfo(u.error ?? tk.error ?? g.error ?? rv.error ?? sl.error);
  return (
    <section aria-labelledby="people-h">
      <h1 id="people-h">People</h1>
      {e && (
        <p className="error" role="alert">
          {`${e.code}: ${e.message}`}
        </p>
      )}
      {note && <p role="status">{note}</p>}
      {token && (
        <p role="status">
          New API token (shown once): <code>{token}</code>
        </p>
      )}
      {signInLink && (
        <p role="status" data-testid="sign-in-link">
          {`One-time sign-in link for ${signInLink.email} (shown once; works once, until ${new Date(signInLink.expiresAt).toLocaleString()}; they choose a password there): `}
          <code>{signInLink.url}</code>
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">API token</th>
            <th scope="col">Console</th>
          </tr>
        </thead>
        <tbody>
          {data?.users.map((p) => (
            <tr key={p.id}>
              <td>{p.name}</td>
              <td>{p.email}</td>
              <td>{p.role}</td>
              <td>
                <button
                  type="button"
                  onClick={async () => {
                    const r = await createToken({ input: { userId: p.id, label: 'console' } });
                    setToken(r.data?.createApiToken.token ?? null);
                  }}
                >
                  New token
                </button>
              </td>
              <td>
                <button
                  type="button"
                  aria-label={`Sign-in link for ${p.email}`}
                  title="A one-time link to choose a password and sign in (for someone without one, or who forgot it)"
                  onClick={async () => {
                    const r = await createSignInLink({ userId: p.id });
                    const l = r.data?.createSignInLink;
                    setSignInLink(l ? { url: l.url, expiresAt: l.expiresAt, email: l.user.email } : null);
                  }}
                >
                  Sign-in link
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2 id="grants-h">Grants</h2>
      {data && data.agentGrants.length === 0 ? (
        <p className="muted">No grants yet. Members see the tasks and requests of the agents they are granted; admins see everything.</p>
      ) : (
        <div className="table-wrap">
          <table aria-labelledby="grants-h">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Agent</th>
                <th scope="col">Skill</th>
                <th scope="col">Permission</th>
                <th scope="col">
                  <span className="sr-only">Revoke</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data?.agentGrants.map((gr) => (
                <tr key={gr.id} data-grant-id={gr.id}>
                  <td>{`${gr.user.name} <${gr.user.email}>`}</td>
                  <td>{gr.agent.name}</td>
                  <td>{gr.skillId ?? 'all skills'}</td>
                  <td>{gr.permission === 'OPERATE' ? 'Operate (decide)' : 'View'}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      disabled={rv.fetching}
                      onClick={async () => {
                        const r = await revoke({ grantId: gr.id });
                        if (!r.error) {
                          setNote(`Revoked ${gr.user.email}'s access to ${gr.agent.name}.`);
                          refetch({ requestPolicy: 'network-only' });
                        }
                      }}
                    >
                      {`Revoke ${gr.user.email} on ${gr.agent.name}`}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Add a person</h2>
      <form
        aria-label="Add a person"
        onSubmit={async (ev) => {
          ev.preventDefault();
          const r = await createUser({ input: { ...form, password: form.password || null } });
          if (r.data) {
            setNote(`Added ${r.data.createUser.email}.`);
            setForm({ email: '', name: '', password: '', role: 'MEMBER' });
          }
        }}
      >
        <div className="field">
          <label htmlFor="p-email">Email</label>
          <input id="p-email" type="email" required value={form.email} onChange={(ev) => setForm({ ...form, email: ev.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="p-name">Name</label>
          <input id="p-name" required value={form.name} onChange={(ev) => setForm({ ...form, name: ev.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="p-password">Password (optional, at least 8 characters; without one, give them a sign-in link)</label>
          <input
            id="p-password"
            type="password"
            autoComplete="new-password"
            value={form.password}
            onChange={(ev) => setForm({ ...form, password: ev.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="p-role">Role</label>
          <select id="p-role" value={form.role} onChange={(ev) => setForm({ ...form, role: ev.target.value as 'MEMBER' | 'ADMIN' })}>
            <option value="MEMBER">Member</option>
            <option value="ADMIN">Admin</option>
          </select>
        </div>
        <button type="submit" disabled={u.fetching}>
          Add
        </button>
      </form>
      <h2>Grant agent access</h2>
      <form
        aria-label="Grant agent access"
        onSubmit={async (ev) => {
          ev.preventDefault();
          const r = await grant({ input: { ...grantForm, skillId: grantForm.skillId || null } });
          if (r.data) {
            setNote(`Granted ${r.data.grantAgentAccess.permission}.`);
            refetch({ requestPolicy: 'network-only' });
          }
        }}
      >
        <div className="field">
          <label htmlFor="g-user">Person</label>
          <select id="g-user" required value={grantForm.userId} onChange={(ev) => setGrantForm({ ...grantForm, userId: ev.target.value })}>
            <option value="">Choose…</option>
            {data?.users.map((p) => (
              <option key={p.id} value={p.id}>
                {p.email}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="g-agent">Agent</label>
          <select id="g-agent" required value={grantForm.agentId} onChange={(ev) => setGrantForm({ ...grantForm, agentId: ev.target.value })}>
            <option value="">Choose…</option>
            {data?.agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="g-skill">Skill (optional)</label>
          <input id="g-skill" value={grantForm.skillId} onChange={(ev) => setGrantForm({ ...grantForm, skillId: ev.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="g-perm">Permission</label>
          <select id="g-perm" value={grantForm.permission} onChange={(ev) => setGrantForm({ ...grantForm, permission: ev.target.value as 'OPERATE' | 'VIEW' })}>
            <option value="OPERATE">Operate (decide)</option>
            <option value="VIEW">View</option>
          </select>
        </div>
        <button type="submit" disabled={g.fetching}>
          Grant
        </button>
      </form>
    </section>
  );
}
