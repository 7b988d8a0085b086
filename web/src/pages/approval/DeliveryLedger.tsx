import { useMutation } from 'urql';
import { graphql, getFragmentData, type FragmentType } from '../../gql';
import { when } from '../../lib/time';
import { ExecutionEvidenceView } from './ExecutionEvidence';

// What happened after the decision: the delivery to the task's agent (attempts, message id, what
// the agent reported executing and the task state observed: ExecutionEvidence.tsx), or for a command approval its single-use grant (seed 002).

export const DeliveryLedgerFields = graphql(`
  fragment DeliveryLedger on Approval {
    id
    status
    source
    agent {
      id
      kind
    }
    task {
      id
    }
    execution {
      status
      attempts
      messageId
      lastError
      ...ExecutionEvidence
    }
    command {
      agentId
      status
      grant {
        status
        consumedAt
        expiresAt
      }
    }
    events {
      seq
      type
      data
    }
  }
`);

const Retry = graphql(`
  mutation RetryDelivery($id: ID!) {
    retryDelivery(approvalId: $id) {
      id
      version
      ...DeliveryLedger
    }
  }
`);

/** A command approval's state after approval (seed 002's words): from its grant and its events. */
function commandState(grant: { status: string } | null | undefined, events: { type: string; data: unknown }[]): { state: string; exit?: number } | null {
  const outcome = [...events].reverse().find((e) => e.type === 'EXECUTED' || e.type === 'FAILED' || e.type === 'REVOKED');
  if (outcome) {
    const exit = (outcome.data as { exit_code?: unknown } | null)?.exit_code;
    return { state: outcome.type, exit: typeof exit === 'number' ? exit : undefined };
  }
  if (!grant) return null;
  return { state: grant.status === 'PENDING' ? 'APPROVED' : grant.status };
}

export function DeliveryLedgerView(props: { approval: FragmentType<typeof DeliveryLedgerFields> }) {
  const a = getFragmentData(DeliveryLedgerFields, props.approval);
  const [{ error, fetching }, retry] = useMutation(Retry);
  const x = a.execution;
  const grant = a.command?.grant;
  if (a.source === 'COMMAND') {
    const st = commandState(grant, a.events);
    const words: Record<string, string> = {
      APPROVED: `Approved: a single-use grant waits for the hook to consume it just before the command runs${grant ? ` (until ${when(grant.expiresAt)})` : ''}.`,
      CONSUMED: `The hook consumed the grant${grant?.consumedAt ? ` at ${when(grant.consumedAt)}` : ''}; the command is running or its outcome is not reported yet.`,
      EXECUTED: 'The command ran and exited 0.',
      FAILED: `The command ran and failed${st?.exit !== undefined ? ` (exit ${st.exit})` : ''}.`,
      REVOKED: 'The grant was revoked; the command cannot run on it.',
      EXPIRED: 'The grant expired unused; the command did not run.',
    };
    return (
      <section aria-labelledby="ledger-h">
        <h2 id="ledger-h">Grant</h2>
        {st ? (
          <p>
            <span className={`badge grant-${st.state.toLowerCase()}`} data-testid="grant-status">
              {st.state}
            </span>{' '}
            {words[st.state] ?? ''}
          </p>
        ) : (
          <p className="muted" data-testid="delivery-note">
            {a.status === 'PENDING'
              ? 'Approving forms a single-use grant for this command; nothing runs before the hook consumes it.'
              : `No grant: the request is ${a.status.toLowerCase()}.`}
          </p>
        )}
      </section>
    );
  }
  return (
    <section aria-labelledby="ledger-h">
      <h2 id="ledger-h">Delivery</h2>
      {!x ? (
        <p className="muted" data-testid="delivery-note">
          {!a.task
            ? a.agent?.kind === 'MCP_CLIENT'
              ? 'Nothing is sent to a task: the MCP client gets the decision as its answer.'
              : `Nothing is sent: this request ${a.agent ? 'is on no task' : 'has no agent'}.`
            : a.status === 'APPROVED'
              ? 'Queued…'
              : 'Nothing is sent unless the request is approved.'}
        </p>
      ) : (
        <dl className="ledger">
          <dt>Status</dt>
          <dd data-testid="execution-status" className={`badge exec-${x.status.toLowerCase()}`}>
            {x.status}
          </dd>
          <dt>Attempts</dt>
          <dd>{x.attempts}</dd>
          <dt>Message id</dt>
          <dd>
            <code>{x.messageId}</code>
          </dd>
          <dt>Execution</dt>
          <dd>
            <ExecutionEvidenceView execution={x} />
          </dd>
          {x.lastError && (
            <>
              <dt>Last error</dt>
              <dd className="error">{x.lastError}</dd>
            </>
          )}
        </dl>
      )}
      {x?.status === 'FAILED' && (
        <button type="button" disabled={fetching} onClick={() => retry({ id: a.id })}>
          Retry delivery
        </button>
      )}
      {error && <p className="error">{error.message}</p>}
    </section>
  );
}
