import { useQuery } from 'urql';
import { graphql } from '../../gql';

// Whom to hand the request to: only people who could then decide it (Approval.delegateCandidates:
// OPERATE on its scope, not its requester, nor the task's starter when its policy excludes them).
// Asked when the reviewer opens this, not with the page: only a delegation needs the list.

const DelegateCandidates = graphql(`
  query DelegateCandidates($id: ID!) {
    approval(id: $id) {
      id
      delegateCandidates {
        id
        name
        email
      }
    }
  }
`);

export function DelegateTo(props: { approvalId: string; toUser: string; onToUser: (id: string) => void; disabled: boolean; onDelegate: () => void }) {
  const [{ data, error, fetching }] = useQuery({ query: DelegateCandidates, variables: { id: props.approvalId }, requestPolicy: 'network-only' });
  const people = data?.approval?.delegateCandidates;
  const none = !!people && people.length === 0;
  return (
    <div className="field">
      <label htmlFor="delegate-to">Delegate to (people who can decide this request)</label>
      <select id="delegate-to" value={props.toUser} onChange={(e) => props.onToUser(e.target.value)} aria-describedby={none ? 'delegate-none' : undefined}>
        <option value="">{fetching && !people ? 'Loading…' : 'Choose a person…'}</option>
        {people?.map((u) => (
          <option key={u.id} value={u.id}>{`${u.name} <${u.email}>`}</option>
        ))}
      </select>
      <button type="button" disabled={props.disabled} onClick={props.onDelegate}>
        Delegate
      </button>
      {none && (
        <p className="muted" id="delegate-none">
          Nobody else can decide this request: it needs someone with OPERATE on its agent (an admin can grant it on People).
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
    </div>
  );
}
