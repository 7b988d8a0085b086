import { useEffect, useRef, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { graphql, useFragment, type FragmentType } from '../gql';
import type { ApprovalPageQuery } from '../gql/graphql';
import { errorInfo } from '../lib/client';
import { Link } from '../lib/router';
import { actorName, eventLabel } from '../lib/audit';
import { needsDeliberateStep, riskMark, URGENT_MS } from '../lib/risk';
import { age, countdown, useNow, when } from '../lib/time';
import { ConfirmDecision, type FinalDecision } from '../components/ConfirmDecision';
import { ActionView } from '../render/ActionView';
import { ActionDiff } from '../render/Diff';
import { FormView } from '../render/FormView';
import { readForm } from '../render/form';
import { dataBoxText, editedAction, messageEdit } from '../render/edit';
import { DECISION_LIMITS } from '../../../server/src/limits.js';
import { approveLabel } from '../../../server/src/grants/label.js';

// ---------------------------------------------------------------------------------------------
// fragments

// Every revision is immutable (number, digest, action). The page shows the one whose number and
// digest are the approval's current ones, so form, values, text, data, digest, buttons and diff
// always come from the same revision record.
const RevisionFields = graphql(`
  fragment ApprovalRevisions on Approval {
    id
    revision
    digest
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
    title
    risk
    status
    source
    command {
      approvalId
    }
    assignee {
      id
      name
    }
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
    source
    agent {
      id
    }
    task {
      id
    }
    execution {
      status
      attempts
      messageId
      lastError
      observedTaskState
      observedAt
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

const AuditFields = graphql(`
  fragment AuditTrail on Approval {
    agent {
      id
      name
    }
    events {
      seq
      type
      actorType
      actorId
      at
      hash
      prevHash
      data
    }
    chain {
      ok
      events
      firstBrokenSeq
      reason
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
      supersedes {
        id
        title
        status
        revision
        digest
        action
      }
      command {
        agentId
      }
      ...ApprovalRevisions
      ...DecisionPanel
      ...DeliveryLedger
      ...AuditTrail
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
      ...ApprovalRevisions
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
      assignee {
        id
        name
        email
      }
      ...ApprovalRevisions
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

// ---------------------------------------------------------------------------------------------
// page

type Shown = { number: number; digest: string; action: unknown };
type Result = { ok: boolean; text: string };

export function ApprovalPage({ id, viewerId }: { id: string; viewerId: string }) {
  const [{ data, error, fetching }, refetch] = useQuery({ query: ApprovalQuery, variables: { id } });
  useSubscription({ query: ApprovalLive, variables: { id } });
  if (!data && fetching) return <p className="loading" role="status">Loading…</p>;
  if (error && !data) return <p className="error">{error.message}</p>;
  const a = data?.approval;
  if (!a) return <p>Approval not found.</p>;
  return <ApprovalView key={a.id} a={a} users={data.users} viewerId={viewerId} refetch={() => refetch({ requestPolicy: 'network-only' })} />;
}

type PageApproval = NonNullable<ApprovalPageQuery['approval']>;

function ApprovalView({
  a,
  users,
  viewerId,
  refetch,
}: {
  a: PageApproval;
  users: { id: string; name: string; email: string }[];
  viewerId: string;
  refetch: () => void;
}) {
  const now = useNow();
  const revs = useFragment(RevisionFields, a);
  const current = revs.revisions.find((r) => r.number === revs.revision && r.digest === revs.digest);
  const shown: Shown | null = current ? { number: current.number, digest: current.digest, action: current.action } : null;
  // The revision this tab first showed, to say so when a newer one replaces it.
  const opened = useRef<number | null>(null);
  if (shown && opened.current === null) opened.current = shown.number;
  const [result, setResult] = useState<Result | null>(null);
  // A revision number without its record in the cache yet: fetch it rather than mix revisions.
  useEffect(() => {
    if (!current) refetch();
  }, [revs.revision, revs.digest, !current]);

  const cd = countdown(a.expiresAt, now);
  const urgent = a.status === 'PENDING' && !cd.expired && cd.leftMs !== null && cd.leftMs < URGENT_MS;
  return (
    <article className="approval" aria-labelledby="approval-title">
      <p>
        <Link to="/">← Inbox</Link>
      </p>
      <h1 id="approval-title">{a.title}</h1>
      <div className="facts">
        <span className={`risk risk-${a.risk.toLowerCase()}`}>{`${riskMark(a.risk)} ${a.risk} risk`}</span>
        <span className={`badge status-${a.status.toLowerCase()}`} data-testid="approval-status">
          {a.status.replace('_', ' ')}
        </span>
        <span data-testid="who-asks">{whoAsks(a)}</span>
        {a.task && (
          <span>
            <Link to={`/tasks/${encodeURIComponent(a.task.id)}`}>{`Task (${a.task.state.toLowerCase().replace('_', ' ')})`}</Link>
          </span>
        )}
        <span>{`opened ${age(a.createdAt, now)}`}</span>
        {a.status === 'PENDING' && (
          <span className={cd.expired ? 'warn' : urgent ? 'urgent' : ''} data-urgent={urgent || undefined}>
            {urgent ? `Urgent: ${cd.text}` : cd.text}
          </span>
        )}
        {a.assignee && <span>{`Delegated to ${a.assignee.name}`}</span>}
      </div>
      {!a.task && a.source !== 'COMMAND' && (
        // Only a request on a task is delivered (to that task's agent); a person's request
        // scoped to an agent but on no task only names who decides.
        <p className="banner" data-testid="no-agent">
          {`This request ${a.agent ? 'is on no task' : 'has no agent'}: approving records the decision and sends nothing to anyone.`}
        </p>
      )}
      {a.supersededBy && (
        <p className="banner warn" role="status">
          {'Superseded by '}
          <Link to={`/approvals/${encodeURIComponent(a.supersededBy.id)}`}>{a.supersededBy.title}</Link>
        </p>
      )}
      {a.supersedes && (
        <section className="supersedes" aria-labelledby="supersedes-h" data-testid="supersedes">
          <h2 id="supersedes-h">
            {'Replaces '}
            <Link to={`/approvals/${encodeURIComponent(a.supersedes.id)}`}>{`“${a.supersedes.title}”`}</Link>
            {` (revision ${a.supersedes.revision}, now ${a.supersedes.status.toLowerCase().replace('_', ' ')})`}
          </h2>
          {shown && <ActionDiff before={a.supersedes.action} after={shown.action} label="What changed from the request it replaces" />}
        </section>
      )}
      {a.summary && <p className="summary">{a.summary}</p>}
      {result && (
        <p className={result.ok ? 'status-msg' : 'error refusal'} role="alert" data-testid="decision-result">
          {result.text}
        </p>
      )}
      {shown && opened.current !== null && opened.current !== shown.number && (
        <p className="banner" role="status" data-testid="revision-changed">
          {`Now showing revision ${shown.number}; you opened this page at revision ${opened.current}. Everything on this page is revision ${shown.number}.`}
        </p>
      )}
      {!shown ? (
        <p className="loading" role="status">{`Loading revision ${revs.revision}…`}</p>
      ) : (
        // Keyed by revision: a new revision replaces the action, digest, editor and any open
        // confirmation at once; nothing typed for the old revision carries over.
        <RevisionView key={`${shown.number}:${shown.digest}`} approval={a} shown={shown} users={users} viewerId={viewerId} refetch={refetch} onResult={setResult} />
      )}
      <DeliveryLedgerView approval={a} />
      <RevisionHistoryView approval={a} />
      <AuditTrailView approval={a} users={users} />
    </article>
  );
}

function whoAsks(a: PageApproval): string {
  // A command request's agent record is its person's hook; name the coding agent and the token owner.
  if (a.source === 'COMMAND') return `Coding agent ${a.command?.agentId ?? '?'} · token of ${a.requester ? `${a.requester.name} (${a.requester.email})` : 'unknown'}`;
  if (a.agent && a.task) return `Agent: ${a.agent.name}`;
  const by = a.requester ? `Requested by ${a.requester.name} (${a.requester.email})` : a.source;
  return a.agent ? `${by} · decided by OPERATE on ${a.agent.name}` : by;
}

function RevisionView({
  approval,
  shown,
  users,
  viewerId,
  refetch,
  onResult,
}: {
  approval: FragmentType<typeof DecisionFields>;
  shown: Shown;
  users: { id: string; name: string; email: string }[];
  viewerId: string;
  refetch: () => void;
  onResult: (r: Result) => void;
}) {
  return (
    <>
      <section aria-labelledby="action-h" data-revision={shown.number}>
        <h2 id="action-h">
          The exact action <span className="digest" data-testid="revision">{`revision ${shown.number}`}</span>
        </h2>
        <DigestLine digest={shown.digest} />
        <ActionView action={shown.action} />
      </section>
      <DecisionPanel approval={approval} shown={shown} users={users} viewerId={viewerId} onRefused={refetch} onResult={onResult} />
    </>
  );
}

function DigestLine({ digest }: { digest: string }) {
  const [copied, setCopied] = useState(false);
  const ref = useRef<HTMLElement>(null);
  return (
    <div className="digest-line">
      <span className="muted">Digest </span>
      <code className="digest-full" ref={ref} data-testid="digest">
        {digest}
      </code>{' '}
      <button
        type="button"
        className="small"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(digest);
            setCopied(true);
          } catch {
            // No clipboard (insecure origin): select the text for a manual copy.
            const range = document.createRange();
            if (ref.current) range.selectNodeContents(ref.current);
            getSelection()?.removeAllRanges();
            getSelection()?.addRange(range);
          }
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
      <p className="muted small-print">
        SHA-256 of this action as canonical JSON (RFC 8785). An approved message carries it as metadata.approval.revisionDigest, so the agent can recompute it from what it receives.
      </p>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// decisions

type Pending = { kind: FinalDecision; edit?: Record<string, unknown>; candidate?: Record<string, unknown> | null };

function DecisionPanel(props: {
  approval: FragmentType<typeof DecisionFields>;
  shown: Shown;
  users: { id: string; name: string; email: string }[];
  viewerId: string;
  onRefused: () => void;
  onResult: (r: Result) => void;
}) {
  const a = useFragment(DecisionFields, props.approval);
  const { shown } = props;
  const [editing, setEditing] = useState(false);
  const [delegating, setDelegating] = useState(false);
  const [comment, setComment] = useState('');
  const [toUser, setToUser] = useState('');
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  const [, approve] = useMutation(Approve);
  const [, reject] = useMutation(Reject);
  const [, requestChanges] = useMutation(RequestChanges);
  const [, editAndApprove] = useMutation(EditAndApprove);
  const [, delegate] = useMutation(Delegate);
  // The revision and digest on screen; a decision names exactly these.
  const seen = { approvalId: a.id, revision: shown.number, digest: shown.digest };

  const run = async (label: string, p: Promise<{ error?: Parameters<typeof errorInfo>[0] }>) => {
    setBusy(true);
    const r = await p;
    setBusy(false);
    setPending(null);
    const e = errorInfo(r.error);
    if (!e) {
      props.onResult({ ok: true, text: `${label}.` });
      setEditing(false);
      setDelegating(false);
      setComment('');
      return;
    }
    // Show what the request is now (status, revision, digest) next to the refusal.
    props.onRefused();
    if (e.code === 'STALE_REVISION') {
      const cur = Number(e.extensions.currentRevision);
      props.onResult({ ok: false, text: `Refused: the request changed while you were looking. You decided on revision ${seen.revision}; it is now at revision ${cur}. Review revision ${cur} below and decide again.` });
    } else if (e.code === 'NOT_PENDING') {
      props.onResult({ ok: false, text: `Refused: you decided on revision ${seen.revision}, but this request was already decided (${e.message}). It now shows its current revision.` });
    } else props.onResult({ ok: false, text: `Refused (${e.code}): ${e.message}` });
  };

  const confirmed = () => {
    if (!pending) return;
    const c = comment.trim() || null;
    if (pending.kind === 'approve') void run('Approved', approve({ input: { ...seen, comment: c } }));
    else if (pending.kind === 'reject') void run('Rejected', reject({ input: { ...seen, comment: c } }));
    else if (pending.kind === 'changes') void run('Changes requested', requestChanges({ input: { ...seen, comment: c ?? '' } }));
    else if (pending.kind === 'edit' && pending.edit) void run('Edited and approved', editAndApprove({ input: { ...seen, action: pending.edit, comment: c } }));
  };

  const risk = a.risk.toLowerCase();
  const isPending = a.status === 'PENDING';
  const canEdit = a.source !== 'COMMAND';
  return (
    <section aria-labelledby="decide-h" className="decide">
      <h2 id="decide-h">Decision</h2>
      {isPending ? (
        <>
          <p className="muted">{`You are deciding on revision ${shown.number} (digest ${shown.digest.slice(0, 12)}…).${needsDeliberateStep(a.risk) ? ` This is a ${risk} risk request: every final decision asks you to type the start of the digest.` : ''}`}</p>
          <div className="field">
            <label htmlFor="comment">Comment (a reason is required to reject a high or critical request, and to request changes)</label>
            <textarea id="comment" value={comment} onChange={(e) => setComment(e.target.value)} maxLength={DECISION_LIMITS.commentMax} />
          </div>
          <div className="buttons" role="group" aria-label="Decide">
            <button type="button" className={`approve approve-${risk}`} disabled={busy || !!pending} onClick={() => setPending({ kind: 'approve' })}>
              <span aria-hidden="true">{`${riskMark(a.risk)} `}</span>
              {/* Seed 002: the SHOWN event records this label as what the reviewer saw. */}
              {a.command ? approveLabel(a.command.approvalId) : 'Approve'}
            </button>
            {canEdit && (
              <button type="button" disabled={busy || !!pending} onClick={() => setEditing(!editing)} aria-expanded={editing}>
                Edit then approve
              </button>
            )}
            {canEdit && (
              <button type="button" disabled={busy || !!pending} onClick={() => setPending({ kind: 'changes' })}>
                Request changes
              </button>
            )}
            <button type="button" disabled={busy || !!pending} onClick={() => setDelegating(!delegating)} aria-expanded={delegating}>
              Delegate
            </button>
            <button type="button" className="danger" disabled={busy || !!pending} onClick={() => setPending({ kind: 'reject' })}>
              Reject
            </button>
          </div>
          {pending && (
            <ConfirmDecision
              kind={pending.kind}
              title={a.title}
              risk={a.risk}
              revision={shown.number}
              digest={shown.digest}
              reason={comment}
              onReason={setComment}
              onConfirm={confirmed}
              onCancel={() => setPending(null)}
              busy={busy}
            >
              {pending.kind === 'edit' &&
                (pending.candidate ? (
                  <ActionDiff before={shown.action} after={pending.candidate} label={`Your changes to revision ${shown.number}`} />
                ) : (
                  <p className="error">This edit cannot be applied.</p>
                ))}
            </ConfirmDecision>
          )}
          {delegating && !pending && (
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
              <button
                type="button"
                disabled={busy || !toUser}
                onClick={() => void run('Delegated', delegate({ input: { ...seen, toUserId: toUser, comment: comment.trim() || null } }))}
              >
                Delegate
              </button>
            </div>
          )}
          {editing && canEdit && (
            <ActionEditor
              action={shown.action}
              busy={busy || !!pending}
              onEdit={(edit) => setPending({ kind: 'edit', edit, candidate: editedAction(shown.action, edit) })}
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

/**
 * The editor starts from the revision on screen. It sends only what the reviewer changed: an
 * emptied Data box removes the data, untouched form fields keep their value or absence.
 */
function ActionEditor({ action, busy, onEdit }: { action: unknown; busy: boolean; onEdit: (edit: Record<string, unknown>) => void }) {
  const a = (action ?? {}) as Record<string, unknown>;
  const [text, setText] = useState(typeof a.text === 'string' ? a.text : '');
  const [dataText, setDataText] = useState(dataBoxText(a.data));
  const [error, setError] = useState<string | null>(null);
  const form = a.kind === 'send_data' ? readForm(a.form) : null;
  if (a.kind === 'send_data') {
    if (!form) return <p className="error">This form is outside the supported subset and cannot be edited here.</p>;
    return (
      <div className="editor" aria-label="Edit the values">
        <p className="muted">Change only what should change; fields you leave alone are sent exactly as the agent proposed them.</p>
        <FormView
          form={form}
          values={(a.values ?? {}) as Record<string, unknown>}
          edit
          busy={busy}
          submitLabel="Review these values"
          onSubmit={(values) => onEdit({ kind: 'send_data', values })}
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
        const r = messageEdit(action, text, dataText);
        setError(r.ok ? null : r.error);
        if (r.ok) onEdit(r.edit);
      }}
    >
      <div className="field">
        <label htmlFor="edit-text">Message text</label>
        <textarea id="edit-text" rows={5} value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="edit-data">Data (JSON object; empty removes it)</label>
        <textarea id="edit-data" rows={4} value={dataText} onChange={(e) => setDataText(e.target.value)} spellCheck={false} />
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        Review edited action
      </button>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------
// ledger, history, audit

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

function DeliveryLedgerView(props: { approval: FragmentType<typeof LedgerFields> }) {
  const a = useFragment(LedgerFields, props.approval);
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
            {a.status === 'PENDING' ? 'Approving forms a single-use grant for this command; nothing runs before the hook consumes it.' : `No grant: the request is ${a.status.toLowerCase()}.`}
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
            ? `Nothing is sent: this request ${a.agent ? 'is on no task' : 'has no agent'}.`
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

function RevisionHistoryView(props: { approval: FragmentType<typeof RevisionFields> }) {
  const a = useFragment(RevisionFields, props.approval);
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

function AuditTrailView(props: { approval: FragmentType<typeof AuditFields>; users: { id: string; name: string }[] }) {
  const a = useFragment(AuditFields, props.approval);
  const c = a.chain;
  const known = { users: props.users, agent: a.agent };
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit trail</h2>
      <p className={c.ok ? 'ok' : 'error'} data-testid="chain-status">
        {c.ok
          ? `This request's audit trail is intact: ${c.events} event${c.events === 1 ? '' : 's'}, each linked to the one before and matching its hash.`
          : `This request's audit trail is BROKEN${c.firstBrokenSeq ? ` at event ${c.firstBrokenSeq}` : ''}: ${c.reason ?? ''}`}
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Event</th>
              <th scope="col">By</th>
              <th scope="col">At</th>
              <th scope="col">Hash</th>
            </tr>
          </thead>
          <tbody>
            {a.events.map((e) => (
              <tr key={e.seq}>
                <td>{e.seq}</td>
                <td>
                  <span title={e.type} data-type={e.type}>
                    {eventLabel(e.type, e.data)}
                  </span>
                </td>
                <td title={e.actorId ? `${e.actorType} ${e.actorId}` : e.actorType}>{actorName(e.actorType, e.actorId, known)}</td>
                <td>{when(e.at)}</td>
                <td>
                  <code title={`${e.hash} (previous ${e.prevHash ?? 'none'})`}>{e.hash.slice(0, 12)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
