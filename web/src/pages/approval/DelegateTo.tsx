import { useQuery } from 'urql';
import { graphql } from '../../gql';

// Whom to hand the request to. The people are asked for when the reviewer opens this, not with
// the page: only a delegation needs the whole list.

const DelegateCandidates = graphql(`
  query DelegateCandidates {
    users {
      id
      name
      email
    }
  }
`);

export function DelegateTo(props: { viewerId: string; toUser: string; onToUser: (id: string) => void; disabled: boolean; onDelegate: () => void }) {
  const [{ data, error }] = useQuery({ query: DelegateCandidates });
  return (
    <div className="field">
      <label htmlFor="delegate-to">Delegate to</label>
      <select id="delegate-to" value={props.toUser} onChange={(e) => props.onToUser(e.target.value)}>
        <option value="">Choose a person…</option>
        {data?.users
          .filter((u) => u.id !== props.viewerId)
          .map((u) => (
            <option key={u.id} value={u.id}>{`${u.name} <${u.email}>`}</option>
          ))}
      </select>
      <button type="button" disabled={props.disabled} onClick={props.onDelegate}>
        Delegate
      </button>
      {error && <p className="error">{error.message}</p>}
    </div>
  );
}
