import { useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { graphql, useFragment, type FragmentType } from '../gql';
import { errorInfo } from '../lib/client';
import { Link } from '../lib/router';
import { age, countdown, useNow, when } from '../lib/time';
import { ActionView } from '../render/ActionView';
import { ActionDiff } from '../render/Diff';
import { FormView } from '../render/FormView';
import { readForm } from '../render/form';
import { validateMessageEdit } from '../render/edit';
import { DECISION_LIMITS } from '../../../server/src/limits.js';

// ---------------------------------------------------------------------------- fragments

const RevisionHistoryFields = graphql(`
  fragment RevisionHistory on Approval {
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

const DecisionFields = graphql(`
  fragment DecisionPanel on Approval {
    id
    status
    revision
    digest
    action
    decisions {
      id
      outcome
      revision
      digest
      comment
      decidedAt
      reviewer {
        id
        name
        email
      }
      delegatedTo {
        id
        name
      }
    }
  }
`);

const LedgerFields = graphql(`
  fragment DeliveryLedger on Approval {
    id
    status
    execution {
      status
      attempts
      messageId
      lastError
      observedTaskState
      observedAt
    }
  }
`);

const AuditFields = graphql(`
  fragment AuditTrail on Approval {
    events {
      seq
      type
      actorType
      actorId
      at
      hash
      prevHash
    }
  }
`);

const ApprovalQuery = graphql(`
  query ApprovalPage($id: ID!) {
    approval(id: $id) {
      id
      title
      summary
      risk
      status
      source
      createdAt
      expiresAt
      closedAt
      revision
      digest
      action
      agent {
        id
        name
      }
      task {
        id
        state
      }
      requester {
        id
        name
        email
      }
      assignee {
        id
        name
        email
      }
      supersededBy {
        id
        title
      }
      ...RevisionHistory
      ...DecisionPanel
      ...DeliveryLedger
      ...AuditTrail
    }
    auditChain {
      ok
      events
      firstBrokenSeq
      reason
    }
    users {
      id
      name
      email
    }
  }
`);

const ApprovalLive = graphql(`
  subscription ApprovalLive($id: ID!) {
    approvalChanged(approvalId: $id) {
      id
      status
      revision
      digest
      action
      closedAt
      task {
        id
        state
      }
      assignee {
        id
        name
        email
      }
      supersededBy {
        id
        title
      }
      ...RevisionHistory
      ...DecisionPanel
      ...DeliveryLedger
      ...AuditTrail
    }
  }
`);

const DecisionResult = graphql(`
  fragment DecisionResult on Decision {
    id
    outcome
    revision
    approval {
      id
      status
      revision
      digest
      action
      assignee {
        id
        name
        email
      }
      ...RevisionHistory
      ...DecisionPanel
      ...DeliveryLedger
      ...AuditTrail
    }
  }
`);

const Approve = graphql(`
  mutation Approve($input: DecideInput!) {
    approve(input: $input) {
      ...DecisionResult
    }
  }
`);
const Reject = graphql(`
  mutation Reject($input: DecideInput!) {
    reject(input: $input) {
      ...DecisionResult
    }
  }
`);
const RequestChanges = graphql(`
  mutation RequestChanges($input: DecideInput!) {
    requestChanges(input: $input) {
      ...DecisionResult
    }
  }
`);
const EditAndApprove = graphql(`
  mutation EditAndApprove($input: EditAndApproveInput!) {
    editAndApprove(input: $input) {
      ...DecisionResult
    }
  }
`);
const Delegate = graphql(`
  mutation Delegate($input: DelegateInput!) {
    delegate(input: $input) {
      ...DecisionResult
    }
  }
`);
const Retry = graphql(`
  mutation RetryDelivery($id: ID!) {
    retryDelivery(approvalId: $id) {
      id
      ...DeliveryLedger
    }
  }
`);

// ---------------------------------------------------------------------------- page

export function ApprovalPage({ id, viewerId }: { id: string; viewerId: string }) {
  const [{ data, error, fetching }, refetch] = useQuery({ query: ApprovalQuery, variables: { id } });
  useSubscription({ query: ApprovalLive, variables: { id } });
  const now = useNow();
  if (!data && fetching) return <p className="loading">Loading…</p>;
  if (error && !data) return <p className="error">{error.message}</p>;
  const a = data?.approval;
  if (!a) return <p>Approval not found.</p>;
  const cd = countdown(a.expiresAt, now);
  return (
    <article className="approval" aria-labelledby="approval-title">
      <p>
        <Link to="/">← Inbox</Link>
      </p>
      <h1 id="approval-title">{a.title}</h1>
      <div className="facts">
        <span className={`risk risk-${a.risk.toLowerCase()}`}>{`${a.risk} risk`}</span>
        <span className={`badge status-${a.status.toLowerCase()}`} data-testid="approval-status">
          {a.status.replace('_', ' ')}
        </span>
        <span>{a.agent ? `Agent: ${a.agent.name}` : a.requester ? `Requested by ${a.requester.name} (${a.requester.email})` : a.source}</span>
        {a.task && (
          <span>
            <Link to={`/tasks/${encodeURIComponent(a.task.id)}`}>{`Task (${a.task.state.toLowerCase().replace('_', ' ')})`}</Link>
          </span>
        )}
        <span>{`opened ${age(a.createdAt, now)}`}</span>
        {a.status === 'PENDING' && <span className={cd.expired ? 'warn' : ''}>{cd.text}</span>}
        {a.assignee && <span>{`Delegated to ${a.assignee.name}`}</span>}
      </div>
      {a.supersededBy && (
        <p className="banner warn" role="status">
          {'Superseded by '}
          <Link to={`/approvals/${encodeURIComponent(a.supersededBy.id)}`}>{a.supersededBy.title}</Link>
        </p>
      )}
      {a.summary && <p className="summary">{a.summary}</p>}
      <section aria-labelledby="action-h">
        <h2 id="action-h">
          The exact action <span className="digest" data-testid="revision">{`revision ${a.revision}`}</span>{' '}
          <code className="digest" title={a.digest} data-testid="digest">{`sha256 ${a.digest.slice(0, 12)}…`}</code>
        </h2>
        <ActionView action={a.action} />
      </section>
      <DecisionPanel approval={a} users={data.users} viewerId={viewerId} onRefused={() => refetch({ requestPolicy: 'network-only' })} />
      <DeliveryLedgerView approval={a} />
      <RevisionHistoryView approval={a} />
      <AuditTrailView approval={a} chain={data.auditChain} />
    </article>
  );
}

// ---------------------------------------------------------------------------- decisions

type Mode = null | 'edit' | 'delegate' | 'changes' | 'reject';

function DecisionPanel(props: {
  approval: FragmentType<typeof DecisionFields>;
  users: { id: string; name: string; email: string }[];
  viewerId: string;
  onRefused: () => void;
}) {
  const a = useFragment(DecisionFields, props.approval);
  const [mode, setMode] = useState<Mode>(null);
  const [comment, setComment] = useState('');
  const [toUser, setToUser] = useState('');
  const [result, setResult] = useState<{ ok: boolean; text: string; current?: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const [, approve] = useMutation(Approve);
  const [, reject] = useMutation(Reject);
  const [, requestChanges] = useMutation(RequestChanges);
  const [, editAndApprove] = useMutation(EditAndApprove);
  const [, delegate] = useMutation(Delegate);
  // The revision and digest this reviewer is looking at; a decision names exactly these.
  const seen = { approvalId: a.id, revision: a.revision, digest: a.digest };

  const run = async (label: string, p: Promise<{ error?: Parameters<typeof errorInfo>[0] }>) => {
    setBusy(true);
    const r = await p;
    setBusy(false);
    const e = errorInfo(r.error);
    if (!e) {
      setResult({ ok: true, text: `${label}.` });
      setMode(null);
      setComment('');
      return;
    }
    // Show what the request is now (status, revision, digest) next to the refusal.
    props.onRefused();
    if (e.code === 'STALE_REVISION') {
      const cur = Number(e.extensions.currentRevision);
      setResult({ ok: false, text: `Refused: the request changed while you were looking. You decided on revision ${seen.revision}; it is now at revision ${cur}. Review revision ${cur} below and decide again.`, current: cur });
    } else if (e.code === 'NOT_PENDING') {
      setResult({ ok: false, text: `Refused: you decided on revision ${seen.revision}, but this request was already decided (${e.message}). It now shows its current revision.` });
    } else setResult({ ok: false, text: `Refused (${e.code}): ${e.message}` });
  };

  const pending = a.status === 'PENDING';
  return (
    <section aria-labelledby="decide-h" className="decide">
      <h2 id="decide-h">Decision</h2>
      {result && (
        <p className={result.ok ? 'status-msg' : 'error refusal'} role="alert" data-testid="decision-result">
          {result.text}
        </p>
      )}
      {pending ? (
        <>
          <p className="muted">{`You are deciding on revision ${a.revision} (digest ${a.digest.slice(0, 12)}…).`}</p>
          <div className="buttons" role="group" aria-label="Decide">
            <button type="button" className="primary" disabled={busy} onClick={() => run('Approved', approve({ input: { ...seen, comment: comment || null } }))}>
              Approve
            </button>
            <button type="button" disabled={busy} onClick={() => setMode(mode === 'edit' ? null : 'edit')} aria-expanded={mode === 'edit'}>
              Edit then approve
            </button>
            <button type="button" disabled={busy} onClick={() => setMode(mode === 'changes' ? null : 'changes')} aria-expanded={mode === 'changes'}>
              Request changes
            </button>
            <button type="button" disabled={busy} onClick={() => setMode(mode === 'delegate' ? null : 'delegate')} aria-expanded={mode === 'delegate'}>
              Delegate
            </button>
            <button type="button" className="danger" disabled={busy} onClick={() => run('Rejected', reject({ input: { ...seen, comment: comment || null } }))}>
              Reject
            </button>
          </div>
          {mode !== 'edit' && (
            <div className="field">
              <label htmlFor="comment">{mode === 'changes' ? 'What should change? (required)' : 'Comment (optional)'}</label>
              <textarea id="comment" value={comment} onChange={(e) => setComment(e.target.value)} maxLength={DECISION_LIMITS.commentMax} />
            </div>
          )}
          {mode === 'changes' && (
            <button
              type="button"
              disabled={busy || comment.trim() === ''}
              onClick={() => run('Changes requested', requestChanges({ input: { ...seen, comment: comment.trim() } }))}
            >
              Send change request
            </button>
          )}
          {mode === 'delegate' && (
            <div className="field">
              <label htmlFor="delegate-to">Delegate to</label>
              <select id="delegate-to" value={toUser} onChange={(e) => setToUser(e.target.value)}>
                <option value="">Choose a person…</option>
                {props.users
                  .filter((u) => u.id !== props.viewerId)
                  .map((u) => (
                    <option key={u.id} value={u.id}>{`${u.name} <${u.email}>`}</option>
                  ))}
              </select>
              <button type="button" disabled={busy || !toUser} onClick={() => run('Delegated', delegate({ input: { ...seen, toUserId: toUser, comment: comment || null } }))}>
                Delegate
              </button>
            </div>
          )}
          {mode === 'edit' && (
            <ActionEditor
              action={a.action}
              busy={busy}
              onSubmit={(action, c) => run('Edited and approved', editAndApprove({ input: { ...seen, action, comment: c || null } }))}
            />
          )}
        </>
      ) : (
        <p>{`This request is ${a.status.toLowerCase().replace('_', ' ')}; it cannot be decided again.`}</p>
      )}
      {a.decisions.length > 0 && (
        <ol className="decisions" aria-label="Decisions">
          {a.decisions.map((d) => (
            <li key={d.id}>
              {`${d.outcome.replace(/_/g, ' ').toLowerCase()} by ${d.reviewer.name} on revision ${d.revision} (${d.digest.slice(0, 12)}…), ${when(d.decidedAt)}`}
              {d.delegatedTo && ` → ${d.delegatedTo.name}`}
              {d.comment && <q>{d.comment}</q>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function ActionEditor({ action, busy, onSubmit }: { action: unknown; busy: boolean; onSubmit: (action: Record<string, unknown>, comment: string) => void }) {
  const a = (action ?? {}) as Record<string, unknown>;
  const [text, setText] = useState(typeof a.text === 'string' ? a.text : '');
  const [dataText, setDataText] = useState(a.data ? JSON.stringify(a.data, null, 2) : '');
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | null>(null);
  const form = a.kind === 'send_data' ? readForm(a.form) : null;
  if (a.kind === 'send_data') {
    if (!form) return <p className="error">This form is outside the supported subset and cannot be edited here.</p>;
    return (
      <div className="editor" aria-label="Edit the values">
        <FormView
          form={form}
          values={(a.values ?? {}) as Record<string, unknown>}
          busy={busy}
          submitLabel="Approve these values"
          onSubmit={(values) => onSubmit({ kind: 'send_data', form: a.form, values }, comment)}
        />
      </div>
    );
  }
  return (
    <form
      className="editor"
      aria-label="Edit the message"
      onSubmit={(e) => {
        e.preventDefault();
        const r = validateMessageEdit(text, dataText);
        setError(r.error ?? null);
        if (r.action) onSubmit(r.action, comment);
      }}
    >
      <div className="field">
        <label htmlFor="edit-text">Message text</label>
        <textarea id="edit-text" rows={5} value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="edit-data">Data (JSON object, optional)</label>
        <textarea id="edit-data" rows={4} value={dataText} onChange={(e) => setDataText(e.target.value)} spellCheck={false} />
      </div>
      <div className="field">
        <label htmlFor="edit-comment">Comment (optional)</label>
        <input id="edit-comment" value={comment} onChange={(e) => setComment(e.target.value)} />
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        Approve edited action
      </button>
    </form>
  );
}

// ---------------------------------------------------------------------------- ledger, history, audit

function DeliveryLedgerView(props: { approval: FragmentType<typeof LedgerFields> }) {
  const a = useFragment(LedgerFields, props.approval);
  const [{ error, fetching }, retry] = useMutation(Retry);
  const x = a.execution;
  return (
    <section aria-labelledby="ledger-h">
      <h2 id="ledger-h">Delivery</h2>
      {!x ? (
        <p className="muted">{a.status === 'APPROVED' ? 'Queued…' : 'Nothing is sent unless the request is approved.'}</p>
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
          <dt>Observed task state</dt>
          <dd data-testid="observed-state">{x.observedTaskState ? `${x.observedTaskState} (${when(x.observedAt)})` : '—'}</dd>
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

function RevisionHistoryView(props: { approval: FragmentType<typeof RevisionHistoryFields> }) {
  const a = useFragment(RevisionHistoryFields, props.approval);
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

function AuditTrailView(props: { approval: FragmentType<typeof AuditFields>; chain: { ok: boolean; events: number; firstBrokenSeq?: number | null; reason?: string | null } }) {
  const a = useFragment(AuditFields, props.approval);
  const c = props.chain;
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit trail</h2>
      <p className={c.ok ? 'ok' : 'error'} data-testid="chain-status">
        {c.ok ? `Audit chain verified (${c.events} events).` : `Audit chain BROKEN at event ${c.firstBrokenSeq ?? '?'}: ${c.reason ?? ''}`}
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Event</th>
              <th scope="col">Actor</th>
              <th scope="col">At</th>
              <th scope="col">Hash</th>
            </tr>
          </thead>
          <tbody>
            {a.events.map((e) => (
              <tr key={e.seq}>
                <td>{e.seq}</td>
                <td>{e.type}</td>
                <td>{`${e.actorType}${e.actorId ? ` ${e.actorId.slice(0, 8)}` : ''}`}</td>
                <td>{when(e.at)}</td>
                <td>
                  <code title={`prev ${e.prevHash ?? 'none'}`}>{e.hash.slice(0, 12)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

