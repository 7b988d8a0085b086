import { useQuery, useSubscription } from 'urql';
import { graphql } from '../gql';
import { onConnection } from '../lib/client';
import { Link } from '../lib/router';
import { age, useNow } from '../lib/time';
import { useEffect } from 'react';

// The inbox's "waiting for input" section: tasks that wait for a person but opened no approval
// (a form, an A2UI surface, an ignored extension part, a question in text). Listing them opens
// nothing; the task page is where the person answers.

const WaitingQuery = graphql(`
  query WaitingForInput {
    tasksWaitingForInput(first: 50) {
      reason
      detail
      messageId
      since
      task {
        id
        state
        agent {
          id
          name
        }
      }
    }
  }
`);

const WaitingLive = graphql(`
  subscription WaitingForInputChanged {
    waitingForInputChanged {
      id
      state
    }
  }
`);

const LABEL: Record<string, string> = {
  FORM: 'Form to fill',
  A2UI: 'A2UI surface',
  IGNORED_PART: 'Ignored request',
  MESSAGE: 'Question',
};

export function WaitingForInput() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: WaitingQuery });
  useSubscription({ query: WaitingLive }, (_p, r) => {
    refetch({ requestPolicy: 'network-only' });
    return r;
  });
  useEffect(() => onConnection((s) => s === 'reconnected' && refetch({ requestPolicy: 'network-only' })), [refetch]);
  const now = useNow(5000);
  const items = data?.tasksWaitingForInput ?? [];
  return (
    <section aria-labelledby="waiting-h" className="waiting">
      <h2 id="waiting-h">{`Waiting for input${data ? ` (${items.length})` : ''}`}</h2>
      <p className="muted">Tasks that wait for a person but are not approval requests. Answer them on the task page; this list decides and sends nothing.</p>
      {error && !data && <p className="error">{error.message}</p>}
      {!data && fetching ? (
        <p className="loading" role="status">
          Loading…
        </p>
      ) : items.length === 0 ? (
        <p className="muted" data-testid="waiting-empty">
          No task is waiting for input.
        </p>
      ) : (
        <ul className="waiting-list" aria-label="Tasks waiting for input">
          {items.map((w) => (
            <li key={w.task.id} className="row" data-task-id={w.task.id} data-reason={w.reason}>
              <span className={`badge reason-${w.reason.toLowerCase()}`}>{LABEL[w.reason] ?? w.reason}</span>
              <Link to={`/tasks/${encodeURIComponent(w.task.id)}`} className="title">
                {`Task with ${w.task.agent.name}`}
              </Link>
              <span className="meta detail">{w.detail}</span>
              <span className="meta">{`waiting ${age(w.since, now)}`}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
