import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { when } from '../../lib/time';

// The quorum of the request's policy (server: decisions/quorum.ts): how many approvals of the
// current revision it needs, who has approved so far, and recorded rejections. Shown only when
// the policy asks for more than a single approval or names reviewer groups. Live: every vote is
// an event on the request, which the page's subscription (approvalChanged) brings.

export const QuorumProgressFields = graphql(`
  fragment QuorumProgress on Approval {
    id
    status
    quorum {
      required
      count
      met
      revision
      rejectionRejects
      fromGroupNames
      approvals {
        id
        decidedAt
        reviewer {
          id
          name
          email
        }
      }
      rejections {
        id
        decidedAt
        reviewer {
          id
          name
        }
      }
    }
  }
`);

/** "1 of 2 approvals" */
export const quorumText = (q: { count: number; required: number }) => `${q.count} of ${q.required} approvals`;

export function QuorumProgressView(props: { approval: FragmentType<typeof QuorumProgressFields>; viewerId: string }) {
  const a = getFragmentData(QuorumProgressFields, props.approval);
  const q = a.quorum;
  if (q.required <= 1 && q.fromGroupNames.length === 0) return null;
  const groups = q.fromGroupNames.length ? ` from members of ${q.fromGroupNames.map((n) => `“${n}”`).join(' or ')}` : '';
  return (
    <section aria-labelledby="quorum-h" className="quorum" data-testid="quorum">
      <h2 id="quorum-h">Quorum</h2>
      <p>
        <strong data-testid="quorum-progress">{quorumText(q)}</strong>
        {` on revision ${q.revision}`}
        {a.status === 'PENDING'
          ? ` · needs ${q.required} distinct reviewers${groups} to approve this revision; ${q.rejectionRejects ? 'one rejection rejects it' : 'a rejection is recorded and does not close it'}.`
          : ''}
      </p>
      {q.approvals.length > 0 && (
        <ul aria-label="Approved by" data-testid="quorum-approvers">
          {q.approvals.map((d) => (
            <li key={d.id}>{`${d.reviewer.id === props.viewerId ? 'You' : d.reviewer.name} approved ${when(d.decidedAt)}`}</li>
          ))}
        </ul>
      )}
      {q.rejections.length > 0 && (
        <ul aria-label="Rejected by" data-testid="quorum-rejections">
          {q.rejections.map((d) => (
            <li
              key={d.id}
            >{`${d.reviewer.id === props.viewerId ? 'You' : d.reviewer.name} rejected ${when(d.decidedAt)} (recorded; the request stays open)`}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
