import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { when } from '../../lib/time';

// Two different things, said differently (docs/VERIFYING-APPROVALS.md "Reporting execution"):
// what the agent reported executing (its word, checked against the approved digest), and the task
// state Taskbay observed after the delivery (a correlation). A report with another digest is a
// loud warning. The agent's detail is shown as text, like all agent content.

export const ExecutionEvidenceFields = graphql(`
  fragment ExecutionEvidence on Execution {
    observedTaskState
    observedAt
    digestMismatch
    evidence {
      id
      outcome
      detail
      reportedDigest
      approvedDigest
      digestMatches
      messageId
      reportedAt
    }
  }
`);

type Report = { outcome: string; digestMatches: boolean };

/** The words for one report. */
export function reportWords(e: Report): string {
  if (!e.digestMatches) return 'The agent reports executing something other than what was approved.';
  return e.outcome === 'SUCCEEDED' ? 'Executed as approved, reported by the agent.' : 'Execution failed, reported by the agent.';
}

/** The words for the observed task state after the delivery. */
export function observedWords(state: string | null | undefined): string {
  if (!state) return 'No task state observed after the delivery yet.';
  return state === 'COMPLETED' ? 'Task completed afterwards (observed):' : 'Task state afterwards (observed):';
}

export function ExecutionEvidenceView(props: { execution: FragmentType<typeof ExecutionEvidenceFields> }) {
  const x = getFragmentData(ExecutionEvidenceFields, props.execution);
  return (
    <div className="evidence">
      {x.digestMismatch && (
        <p className="error refusal" role="alert" data-testid="evidence-mismatch">
          Warning: the agent reports executing an action whose digest differs from the approved one. What ran is not what was approved.
        </p>
      )}
      {x.evidence.length === 0 ? (
        <p className="muted" data-testid="evidence-none">
          The agent reported no execution.
        </p>
      ) : (
        <ul className="evidence-reports">
          {x.evidence.map((e) => (
            <li key={e.id} data-testid="evidence-report" className={e.digestMatches ? undefined : 'error'}>
              <strong>{reportWords(e)}</strong> <span className="muted">{when(e.reportedAt)}</span>
              {!e.digestMatches && (
                <>
                  {' '}
                  Reported digest <code>{e.reportedDigest}</code>, approved <code>{e.approvedDigest}</code>.
                </>
              )}
              {e.detail && <span className="muted"> The agent says: {e.detail}</span>}
            </li>
          ))}
        </ul>
      )}
      <p data-testid="observed-state">
        {observedWords(x.observedTaskState)}
        {x.observedTaskState ? (
          <>
            {' '}
            <code>{x.observedTaskState}</code> <span className="muted">{when(x.observedAt)}</span>
          </>
        ) : null}
      </p>
    </div>
  );
}
