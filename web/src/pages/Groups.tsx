import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { errorInfo } from '../lib/errors';

// Reviewer groups (admins; docs/POLICIES.md "Groups"): a policy's quorum can count only members
// of named groups, and an escalation can assign to a group.

const GroupsQuery = graphql(`
  query ReviewerGroups {
    reviewerGroups {
      id
      name
      members {
        id
        name
        email
      }
    }
    users {
      id
      name
      email
    }
  }
`);

const Create = graphql(`
  mutation CreateReviewerGroup($input: CreateReviewerGroupInput!) {
    createReviewerGroup(input: $input) {
      id
    }
  }
`);
const Rename = graphql(`
  mutation RenameReviewerGroup($id: ID!, $name: String!) {
    renameReviewerGroup(id: $id, name: $name) {
      id
      name
    }
  }
`);
const Delete = graphql(`
  mutation DeleteReviewerGroup($id: ID!) {
    deleteReviewerGroup(id: $id)
  }
`);
const AddMember = graphql(`
  mutation AddReviewerGroupMember($groupId: ID!, $userId: ID!) {
    addReviewerGroupMember(groupId: $groupId, userId: $userId) {
      id
      members {
        id
        name
        email
      }
    }
  }
`);
const RemoveMember = graphql(`
  mutation RemoveReviewerGroupMember($groupId: ID!, $userId: ID!) {
    removeReviewerGroupMember(groupId: $groupId, userId: $userId) {
      id
      members {
        id
        name
        email
      }
    }
  }
`);

export function GroupsPage() {
  const [{ data, error }, refetch] = useQuery({ query: GroupsQuery, requestPolicy: 'cache-and-network' });
  const [, create] = useMutation(Create);
  const [, rename] = useMutation(Rename);
  const [, remove] = useMutation(Delete);
  const [, addMember] = useMutation(AddMember);
  const [, removeMember] = useMutation(RemoveMember);
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [adding, setAdding] = useState<Record<string, string>>({});
  // The group being renamed and its new name (an inline form: prompt() blocks the page).
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);

  const run = async (p: Promise<{ error?: any }>) => {
    const r = await p;
    setProblem(r.error ? (errorInfo(r.error)?.message ?? 'failed') : null);
    if (!r.error) refetch({ requestPolicy: 'network-only' });
    return !r.error;
  };

  return (
    <section aria-labelledby="groups-h">
      <h1 id="groups-h">Reviewer groups</h1>
      <p className="muted">Policies name groups: a quorum can count only their members, an escalation can assign to one.</p>
      {error && <p className="error">{error.message}</p>}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await run(create({ input: { name } }))) setName('');
        }}
      >
        <label htmlFor="group-name">New group</label>
        <input id="group-name" value={name} onChange={(e) => setName(e.target.value)} />
        <button type="submit" disabled={!name.trim()}>
          Create group
        </button>
      </form>
      <ul className="groups" aria-label="Groups">
        {data?.reviewerGroups.map((g) => (
          <li key={g.id} data-group={g.name}>
            <h2>{g.name}</h2>
            {renaming?.id === g.id ? (
              <form
                aria-label={`Rename ${g.name}`}
                onSubmit={async (e) => {
                  e.preventDefault();
                  if (await run(rename({ id: g.id, name: renaming.name }))) setRenaming(null);
                }}
              >
                <label htmlFor={`rename-${g.id}`}>New name</label>
                <input id={`rename-${g.id}`} value={renaming.name} onChange={(e) => setRenaming({ id: g.id, name: e.target.value })} />
                <button type="submit" disabled={!renaming.name.trim() || renaming.name === g.name}>
                  Save name
                </button>
                <button type="button" className="link" onClick={() => setRenaming(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <button type="button" className="link" onClick={() => setRenaming({ id: g.id, name: g.name })}>
                Rename
              </button>
            )}
            <button type="button" className="link danger" onClick={() => void run(remove({ id: g.id }))}>
              Delete
            </button>
            <ul aria-label={`Members of ${g.name}`}>
              {g.members.map((m) => (
                <li key={m.id}>
                  {`${m.name} <${m.email}>`}{' '}
                  <button type="button" className="link" onClick={() => void run(removeMember({ groupId: g.id, userId: m.id }))}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
            <select aria-label={`Add a member to ${g.name}`} value={adding[g.id] ?? ''} onChange={(e) => setAdding({ ...adding, [g.id]: e.target.value })}>
              <option value="">Choose a person…</option>
              {data.users
                .filter((u) => !g.members.some((m) => m.id === u.id))
                .map((u) => (
                  <option key={u.id} value={u.id}>{`${u.name} <${u.email}>`}</option>
                ))}
            </select>
            <button type="button" disabled={!adding[g.id]} onClick={() => void run(addMember({ groupId: g.id, userId: adding[g.id]! }))}>
              Add member
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
