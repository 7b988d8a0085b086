import { useQuery } from 'urql';
import { graphql } from '../gql';

// Why a member sees nothing: without a grant, Tasks, Agents and the inbox stay empty. Shown
// only to a member who holds no grant.

const MyAccess = graphql(`
  query MyAccess {
    viewer {
      id
      role
      grants {
        id
      }
    }
  }
`);

export function NoAccessNote({ what }: { what: string }) {
  const [{ data }] = useQuery({ query: MyAccess });
  const v = data?.viewer;
  if (!v || v.role === 'ADMIN' || v.grants.length > 0) return null;
  return (
    <p className="banner" role="note" data-testid="no-access">
      {`You hold no grant on any agent yet, so there are no ${what} to show. An admin grants access on the People page; you then see that agent's tasks and requests.`}
    </p>
  );
}
