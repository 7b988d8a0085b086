import { useEffect, useRef, useState } from 'react';
import { useClient, useMutation, useQuery, useSubscription } from 'urql';
import { graphql, getFragmentData, type FragmentType } from '../gql';
import type { TranscriptMessageFragment } from '../gql/graphql';
import { errorInfo } from '../lib/errors';
import { Link } from '../lib/router';
import { when } from '../lib/time';
import { MessageParts } from '../render/Parts';
import { deletedLater } from '../render/a2ui';
import { Composer } from '../components/Composer';

export const TranscriptMessageFields = graphql(`
  fragment TranscriptMessage on TaskMessage {
    messageId
    role
    stepSeq
    createdAt
    parts
    form
    formPartIndex
    a2ui
    a2uiPartIndex
  }
`);

// The page shows the latest 50 messages (the server pages a transcript: a task may hold
// thousands) and loads earlier ones, 50 at a time, when asked.
export const TranscriptFields = graphql(`
  fragment Transcript on Task {
    id
    state
    limitReason
    messages(last: 50) {
      ...TranscriptMessage
    }
    statusHistory {
      state
      at
    }
  }
`);

const EarlierMessages = graphql(`
  query TaskEarlierMessages($id: ID!, $before: Int!) {
    task(id: $id) {
      id
      messages(last: 50, before: $before) {
        ...TranscriptMessage
      }
    }
  }
`);

type TranscriptMessage = TranscriptMessageFragment;

/** Messages by stepSeq, oldest first; a later copy of a step replaces an earlier one. */
function byStep(...lists: readonly (readonly TranscriptMessage[])[]): TranscriptMessage[] {
  const steps = new Map<number, TranscriptMessage>();
  for (const list of lists) for (const m of list) steps.set(m.stepSeq, m);
  return [...steps.values()].sort((a, b) => a.stepSeq - b.stepSeq);
}

/**
 * Steps are numbered from 1 without gaps: the step whose predecessor is not shown, the newest
 * such (the earlier page to load is the one before it); null when every step from 1 is shown.
 */
export function missingBefore(steps: readonly number[]): number | null {
  for (let i = steps.length - 1; i >= 0; i--) {
    if (steps[i]! - 1 !== (i > 0 ? steps[i - 1]! : 0)) return steps[i]!;
  }
  return null;
}

const TaskQuery = graphql(`
  query TaskPage($id: ID!) {
    task(id: $id) {
      id
      state
      skillId
      createdAt
      contextId
      agent {
        id
        name
      }
      createdBy {
        id
        name
      }
      ...Transcript
    }
    approvals(taskId: $id, first: 20) {
      edges {
        node {
          id
          title
          status
          revision
        }
      }
    }
  }
`);

const TaskLive = graphql(`
  subscription TaskLive($id: ID!) {
    taskUpdated(taskId: $id) {
      id
      ...Transcript
    }
  }
`);

const SubmitForm = graphql(`
  mutation SubmitTaskForm($input: SubmitTaskFormInput!) {
    submitTaskForm(input: $input) {
      id
      ...Transcript
    }
  }
`);

const SendA2ui = graphql(`
  mutation SendA2uiAction($input: SendA2uiActionInput!) {
    sendA2uiAction(input: $input) {
      id
      ...Transcript
    }
  }
`);

const SendMessage = graphql(`
  mutation SendTaskMessage($input: SendTaskMessageInput!) {
    sendTaskMessage(input: $input) {
      id
      ...Transcript
    }
  }
`);

const FINISHED: readonly string[] = ['COMPLETED', 'FAILED', 'CANCELED', 'REJECTED'];

export function TaskPage({ id }: { id: string }) {
  const [{ data, error }, refetch] = useQuery({ query: TaskQuery, variables: { id } });
  useSubscription({ query: TaskLive, variables: { id } }, (_p, r) => {
    // A new approval may have opened on this task: refresh its list.
    refetch({ requestPolicy: 'network-only' });
    return r;
  });
  if (error && !data) return <p className="error">{error.message}</p>;
  const t = data?.task;
  if (!data) return <p className="loading">Loading…</p>;
  if (!t) return <p>Task not found.</p>;
  return (
    <article aria-labelledby="task-h">
      <p>
        <Link to="/tasks">← Tasks</Link>
      </p>
      <h1 id="task-h">{`Task with ${t.agent.name}`}</h1>
      <div className="facts">
        <span className={`badge state-${t.state.toLowerCase()}`} data-testid="task-state">
          {t.state.replace('_', ' ')}
        </span>
        {t.skillId && <span>{`skill ${t.skillId}`}</span>}
        <span>{`started ${when(t.createdAt)}${t.createdBy ? ` by ${t.createdBy.name}` : ''}`}</span>
      </div>
      {data.approvals.edges.length > 0 && (
        <section aria-labelledby="task-approvals-h">
          <h2 id="task-approvals-h">Approvals</h2>
          <ul>
            {data.approvals.edges.map(({ node: a }) => (
              <li key={a.id}>
                <Link to={`/approvals/${encodeURIComponent(a.id)}`}>{a.title}</Link>
                {` · ${a.status.toLowerCase().replace('_', ' ')} · revision ${a.revision}`}
              </li>
            ))}
          </ul>
        </section>
      )}
      <TranscriptView task={t} />
    </article>
  );
}

/** Exported for its test (Task.test.tsx); the page renders it. */
export function TranscriptView(props: { task: FragmentType<typeof TranscriptFields> }) {
  const t = getFragmentData(TranscriptFields, props.task);
  const [text, setText] = useState('');
  // One idempotency key per composed text: a retry of the same text after a lost answer is the
  // same message to the agent (docs/choices.md "Answers reach the agent once").
  const pendingSend = useRef<{ text: string; key: string } | null>(null);
  const [sent, send] = useMutation(SendMessage);
  const [submitted, submitForm] = useMutation(SubmitForm);
  const [acted, sendA2ui] = useMutation(SendA2ui);
  const client = useClient();
  // Every message this page has shown: earlier pages loaded, and the latest pages as they moved on.
  const [kept, setKept] = useState<TranscriptMessage[]>([]);
  const [earlier, setEarlier] = useState<{ loading: boolean; error: string | null }>({ loading: false, error: null });
  const latest = getFragmentData(TranscriptMessageFields, t.messages);
  useEffect(() => setKept((k) => byStep(k, latest)), [latest]);
  const fetching = sent.fetching || submitted.fetching || acted.fetching;
  const error = sent.error ?? submitted.error ?? acted.error;
  const msgs = byStep(kept, latest);
  const gapBefore = missingBefore(msgs.map((m) => m.stepSeq));
  const loadEarlier = async (before: number) => {
    setEarlier({ loading: true, error: null });
    const r = await client.query(EarlierMessages, { id: t.id, before }, { requestPolicy: 'network-only' }).toPromise();
    const page = getFragmentData(TranscriptMessageFields, r.data?.task?.messages ?? []);
    setKept((k) => byStep(page, k));
    setEarlier({ loading: false, error: r.error ? r.error.message : null });
  };
  const isUser = (role: string) => role.toUpperCase().includes('USER');
  const lastAgent = [...msgs].reverse().find((m) => !isUser(m.role));
  // A2UI deleteSurface in a later message removes a surface shown by an earlier one.
  const removedLater = deletedLater(msgs.map((m) => (isUser(m.role) ? null : m.a2ui)));
  const canReply = t.state === 'INPUT_REQUIRED';
  // A finished task takes no more messages (the server refuses them): say so instead.
  const finished = FINISHED.includes(t.state);
  const e = errorInfo(error);
  return (
    <section aria-labelledby="transcript-h">
      <h2 id="transcript-h">Transcript</h2>
      {t.limitReason && (
        <p className="banner warn" role="status" data-testid="task-limit">
          {`Taskbay stopped following this task: ${t.limitReason}. What it stored before is kept; later updates from the agent are not.`}
        </p>
      )}
      {earlier.error && (
        <p className="error" role="alert">
          {`Earlier messages could not be loaded: ${earlier.error}`}
        </p>
      )}
      <ol className="transcript">
        {msgs.flatMap((m, i) => {
          const fromUser = isUser(m.role);
          const waiting = canReply && m === lastAgent;
          const more =
            m.stepSeq === gapBefore ? (
              <li key={`before-${m.stepSeq}`} className="msg-more">
                <button type="button" disabled={earlier.loading} onClick={() => void loadEarlier(m.stepSeq)} data-testid="earlier-messages">
                  {earlier.loading ? 'Loading earlier messages…' : 'Load earlier messages'}
                </button>
              </li>
            ) : null;
          const item = (
            <li key={m.messageId} className={fromUser ? 'msg user' : 'msg agent'}>
              <div className="msg-head">{`${fromUser ? 'You' : 'Agent'} · step ${m.stepSeq} · ${when(m.createdAt)}`}</div>
              <MessageParts
                parts={m.parts}
                offers={fromUser ? null : m}
                a2uiRemoved={removedLater[i]}
                busy={fetching}
                onFormSubmit={waiting ? (values) => void submitForm({ input: { taskId: t.id, messageId: m.messageId, values } }) : undefined}
                onA2uiEvent={waiting ? (action) => void sendA2ui({ input: { taskId: t.id, messageId: m.messageId, action } }) : undefined}
              />
            </li>
          );
          return more ? [more, item] : [item];
        })}
      </ol>
      <Composer
        text={text}
        onText={setText}
        state={t.state}
        finished={finished}
        busy={fetching}
        onSend={async () => {
          if (pendingSend.current?.text !== text) pendingSend.current = { text, key: crypto.randomUUID() };
          const r = await send({ input: { taskId: t.id, text, idempotencyKey: pendingSend.current.key } });
          if (!r.error) {
            pendingSend.current = null;
            setText('');
          }
        }}
      />
      {e && (
        <p className="error" role="alert">
          {`${e.code}: ${e.message}`}
        </p>
      )}
      <details>
        <summary>Status history</summary>
        <ol>
          {t.statusHistory.map((s, i) => (
            <li key={i}>{`${s.state} · ${when(s.at)}`}</li>
          ))}
        </ol>
      </details>
    </section>
  );
}
