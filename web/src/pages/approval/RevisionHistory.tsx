import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { ActionDiff } from '../../render/Diff';
import { when } from '../../lib/time';

// Every revision of the request, oldest first, each with its diff from the one before.

export const RevisionHistoryFields = graphql(`
  fragment ApprovalRevisions on Approval {
    id
    revision
    revisions {
      number
      digest
      action
      createdAt
      createdBy {
        type
        id
        user {
          id
          name
        }
      }
    }
  }
`);

export function RevisionHistoryView(props: { approval: FragmentType<typeof RevisionHistoryFields> }) {
  const a = getFragmentData(RevisionHistoryFields, props.approval);
  const revs = [...a.revisions].sort((x, y) => x.number - y.number);
  return (
    <section aria-labelledby="revs-h">
      <h2 id="revs-h">Revisions</h2>
      <ol className="revisions">
        {revs.map((r, i) => (
          <li key={r.number}>
            <div>
              {`Revision ${r.number} · ${r.digest.slice(0, 12)}… · ${r.createdBy.user?.name ?? r.createdBy.type} · ${when(r.createdAt)}`}
              {r.number === a.revision && <strong>{' (current)'}</strong>}
            </div>
            {i > 0 && <ActionDiff before={revs[i - 1]!.action} after={r.action} label={`Changes from revision ${revs[i - 1]!.number} to ${r.number}`} />}
          </li>
        ))}
      </ol>
    </section>
  );
}
