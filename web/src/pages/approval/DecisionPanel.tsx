import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useMutation } from 'urql';
import { graphql, getFragmentData, type FragmentType } from '../../gql';
import type { DecisionPanelFragment } from '../../gql/graphql';
import { errorInfo } from '../../lib/errors';
import { needsDeliberateStep, riskMark } from '../../lib/risk';
import { Link } from '../../lib/router';
import { when } from '../../lib/time';
import { ConfirmDecision, type FinalDecision } from '../../components/ConfirmDecision';
import { tooLong, TooLongNote } from '../../components/TooLong';
import { ActionDiff } from '../../render/Diff';
import { editedAction } from '../../render/edit';
import { DECISION_LIMITS } from '../../../../server/src/limits.js';
import { decisionOptions, delegationAllowed, type DecisionOptionId } from '../../../../server/src/contract/options.js';
import { ActionEditor, type ActionEditorFields } from './ActionEditor';
import { DelegateTo } from './DelegateTo';

// The decision on the revision on screen: the options (contract/options.ts: approve, edit then
// approve, request changes, reject; approve and reject for a command) and delegation, each naming
// that revision and digest, and the decisions made so far. What the viewer cannot use is disabled
// with the reason beside it (Approval.viewerCannotDecide, their say already given, offline);
// results and refusals appear right below the buttons, and take the focus. The open
// confirmation (DecisionState) is held by the page, above the revision it names: a request that
// changes under it (a new revision, superseded, expired, decided elsewhere) leaves it open, saying
// so, instead of taking it away.

export const DecisionPanelFields = graphql(`
  fragment DecisionPanel on Approval {
    id
    title
    risk
    status
    source
    editable
    command {
      approvalId
    }
    policy {
      name
      version
      isDefault
      allowedOutcomes
      conditionError
    }
    assignee {
      id
      name
    }
    viewerCannotDecide
    supersededBy {
      id
      title
    }
    quorum {
      required
      count
    }
    decisions {
      id
      outcome
      vote
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

// A decision's answer is the whole page (Approval.tsx, ApprovalView), which the cache writes
// through to every panel.
graphql(`
  fragment DecisionResult on Decision {
    id
    outcome
    revision
    approval {
      id
      ...ApprovalView
    }
  }
`);

const Approve = graphql(`
  mutation Approve($input: DecideInput!) {
    approve(input: $input) {
      id
      vote
      ...DecisionResult
    }
  }
`);
const Reject = graphql(`
  mutation Reject($input: DecideInput!) {
    reject(input: $input) {
      id
      vote
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
      id
      vote
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

/** The revision on screen: a decision names exactly its number and digest. */
export type Shown = { number: number; digest: string; action: unknown; editor: FragmentType<typeof ActionEditorFields> };
export type DecisionOutcomeText = { ok: boolean; text: string };

/** An open confirmation: the decision and exactly the revision, digest and action it names. */
export type Pending = {
  kind: FinalDecision;
  revision: number;
  digest: string;
  action: unknown;
  edit?: Record<string, unknown>;
  candidate?: Record<string, unknown> | null;
};

/** The confirmation and whether its decision is on its way: held above the revision, by the page. */
export function useDecisionState() {
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  return { pending, setPending, busy, setBusy };
}
export type DecisionState = ReturnType<typeof useDecisionState>;

const OPTION_OF: Record<FinalDecision, DecisionOptionId> = { approve: 'approve', reject: 'reject', changes: 'request_changes', edit: 'edit_and_approve' };

/** What the open confirmation says when the request changed under it, or null. */
function changedUnder(p: Pending, a: DecisionPanelFragment, shown: Shown): ReactNode {
  const nothing = ' Nothing was decided.';
  if (a.status === 'SUPERSEDED')
    return (
      <>
        {'This request was superseded while you were confirming'}
        {a.supersededBy && (
          <>
            {': its agent replaced it with '}
            <Link to={`/approvals/${encodeURIComponent(a.supersededBy.id)}`}>{`“${a.supersededBy.title}”`}</Link>
          </>
        )}
        {`.${nothing}`}
      </>
    );
  if (a.status === 'EXPIRED') return `This request expired while you were confirming.${nothing}`;
  if (a.status !== 'PENDING') {
    const final = [...a.decisions].reverse().find((d) => !d.vote && d.outcome !== 'DELEGATE');
    return `This request was ${a.status.toLowerCase().replace('_', ' ')}${final ? ` by ${final.reviewer.name}` : ' elsewhere'} while you were confirming.${nothing}`;
  }
  if (p.revision !== shown.number || p.digest !== shown.digest)
    return `This request changed to revision ${shown.number} while you were confirming revision ${p.revision}.${nothing} Close this and review revision ${shown.number}.`;
  return null;
}

// A result takes the focus once, when it is new (not again when the panel is shown anew for a new revision).
const focusedResults = new WeakSet<DecisionOutcomeText>();

export function DecisionPanel(props: {
  approval: FragmentType<typeof DecisionPanelFields>;
  shown: Shown;
  viewerId: string;
  onRefused: () => void;
  onResult: (r: DecisionOutcomeText | null) => void;
  /** The last result or refusal, shown below the buttons. */
  result?: DecisionOutcomeText | null;
  /** The page's confirmation state (it outlives a new revision); the panel's own without one. */
  state?: DecisionState;
  /** Why nothing can be decided now (offline), or null. */
  offline?: string | null;
}) {
  const a = getFragmentData(DecisionPanelFields, props.approval);
  const { shown, result } = props;
  const [editing, setEditing] = useState(false);
  const [delegating, setDelegating] = useState(false);
  const [comment, setComment] = useState('');
  const [toUser, setToUser] = useState('');
  const own = useDecisionState();
  const { pending, setPending, busy, setBusy } = props.state ?? own;
  const panel = useRef<HTMLElement>(null);
  const resultRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (result && !focusedResults.has(result)) {
      focusedResults.add(result);
      resultRef.current?.focus();
    }
  }, [result]);
  const [, approve] = useMutation(Approve);
  const [, reject] = useMutation(Reject);
  const [, requestChanges] = useMutation(RequestChanges);
  const [, editAndApprove] = useMutation(EditAndApprove);
  const [, delegate] = useMutation(Delegate);
  // The revision and digest on screen; a decision names exactly these.
  const seen = { approvalId: a.id, revision: shown.number, digest: shown.digest };

  const run = async (label: string, p: Promise<{ error?: Parameters<typeof errorInfo>[0]; data?: object | null }>) => {
    setBusy(true);
    const r = await p;
    setBusy(false);
    setPending(null);
    const e = errorInfo(r.error);
    if (!e) {
      // A vote toward the quorum leaves the request pending (the Quorum panel shows who approved).
      const vote = Object.values(r.data ?? {}).some((d) => (d as { vote?: boolean } | null)?.vote);
      props.onResult({
        ok: true,
        text: vote
          ? `${label}: your ${label.startsWith('Rejected') ? 'rejection is recorded' : 'approval counts toward the quorum'}; the request stays pending.`
          : `${label}.`,
      });
      setEditing(false);
      setDelegating(false);
      setComment('');
      return;
    }
    // Show what the request is now (status, revision, digest) next to the refusal.
    props.onRefused();
    if (e.code === 'STALE_REVISION') {
      const cur = Number(e.extensions.currentRevision);
      props.onResult({
        ok: false,
        text: `Refused: the request changed while you were looking. You decided on revision ${seen.revision}; it is now at revision ${cur}. Review revision ${cur} below and decide again.`,
      });
    } else if (e.code === 'NOT_PENDING') {
      props.onResult({
        ok: false,
        text: `Refused: you decided on revision ${seen.revision}, but this request was already decided (${e.message}). It now shows its current revision.`,
      });
    } else if (e.code === 'ALREADY_VOTED') {
      props.onResult({ ok: false, text: `Refused: ${e.message}.` });
    } else props.onResult({ ok: false, text: `Refused (${e.code}): ${e.message}` });
  };

  const confirmed = () => {
    if (!pending || changed || props.offline) return;
    const c = comment.trim() || null;
    // Exactly what the confirmation names.
    const named = { approvalId: a.id, revision: pending.revision, digest: pending.digest };
    if (pending.kind === 'approve') void run('Approved', approve({ input: { ...named, comment: c } }));
    else if (pending.kind === 'reject') void run('Rejected', reject({ input: { ...named, comment: c } }));
    else if (pending.kind === 'changes') void run('Changes requested', requestChanges({ input: { ...named, comment: c ?? '' } }));
    else if (pending.kind === 'edit' && pending.edit)
      void run('Edited and approved', editAndApprove({ input: { ...named, action: pending.edit, comment: c } }));
  };

  const risk = a.risk.toLowerCase();
  const isPending = a.status === 'PENDING';
  // Every decision sends the comment, trimmed; the server refuses one over its limit.
  const commentTooLong = tooLong('The comment', comment.trim(), DECISION_LIMITS.commentMax);
  const blocked = busy || !!pending || !!commentTooLong;
  // One say per reviewer and revision (a quorum vote or a recorded rejection): only an edit, which
  // makes a new revision, or a delegation remains for this reviewer.
  const mine = a.decisions.find((d) => d.reviewer.id === props.viewerId && d.revision === shown.number && d.outcome !== 'DELEGATE');
  const saidText = mine
    ? `You ${mine.outcome === 'REJECT' ? 'rejected' : 'approved'} revision ${shown.number} (${a.quorum.count} of ${a.quorum.required} approvals so far). Another reviewer must decide this revision.`
    : null;
  // Anything else the decision would be refused for (the server's answer; decided again there).
  const cannot = !mine && a.viewerCannotDecide ? `You cannot decide this request: ${a.viewerCannotDecide}.` : null;
  const why = props.offline ?? cannot;
  const whyId = props.offline || cannot ? 'decide-blocked' : mine ? 'already-voted' : undefined;
  const options = decisionOptions({ source: a.source, command: a.command, policy: a.policy, editable: a.editable });
  const canEdit = options.some((o) => o.id === 'edit_and_approve');
  const disabledOption = (id: DecisionOptionId) => blocked || !!why || (!!mine && id !== 'edit_and_approve');
  const ask = (kind: FinalDecision) => {
    props.onResult(null);
    setPending({ kind, revision: shown.number, digest: shown.digest, action: shown.action });
  };
  const choose: Record<DecisionOptionId, () => void> = {
    approve: () => ask('approve'),
    edit_and_approve: () => setEditing(!editing),
    request_changes: () => ask('changes'),
    reject: () => ask('reject'),
  };
  const changed = pending && !busy ? changedUnder(pending, a, shown) : null;
  const cancel = () => {
    const opener = pending ? OPTION_OF[pending.kind] : null;
    setPending(null);
    // Back to the button that asked (not the body); it may be gone (decided elsewhere): the heading then.
    requestAnimationFrame(() => {
      const el = panel.current?.querySelector<HTMLElement>(`[data-option="${opener}"]:not([disabled])`) ?? panel.current?.querySelector<HTMLElement>('h2');
      if (el && !el.hasAttribute('tabindex') && el.tagName === 'H2') el.tabIndex = -1;
      el?.focus();
    });
  };
  // The page's keys (a, r, c, e, d): the same as pressing the button, only when it is enabled.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
      if (e.metaKey || e.ctrlKey || e.altKey || pending || !isPending) return;
      const id = ({ a: 'approve', r: 'reject', c: 'request_changes', e: 'edit_and_approve' } as Record<string, DecisionOptionId>)[e.key];
      if (id && options.some((o) => o.id === id) && !disabledOption(id)) {
        e.preventDefault();
        choose[id]();
      } else if (e.key === 'd' && delegationAllowed(a.policy) && !blocked && !why) {
        e.preventDefault();
        setDelegating(true);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });
  // Right below the buttons that caused it (or what stands in for them once the request is closed).
  const resultView = result && (
    <p ref={resultRef} tabIndex={-1} className={result.ok ? 'status-msg' : 'error refusal'} role={result.ok ? 'status' : 'alert'} data-testid="decision-result">
      {result.text}
    </p>
  );
  return (
    <section aria-labelledby="decide-h" className="decide" ref={panel}>
      <h2 id="decide-h">Decision</h2>
      <p className="muted" data-testid="policy">
        {a.policy.isDefault ? 'Policy: default' : `Policy: ${a.policy.name} (version ${a.policy.version})`}
      </p>
      {a.policy.conditionError && (
        <p className="muted" data-testid="policy-condition-error">
          {`A policy condition failed on this request: ${a.policy.conditionError}`}
        </p>
      )}
      {isPending ? (
        <>
          <p className="muted">{`You are deciding on revision ${shown.number} (digest ${shown.digest.slice(0, 12)}…).${needsDeliberateStep(a.risk) ? ` This is a ${risk} risk request: every final decision asks you to type the start of the digest.` : ''}`}</p>
          <div className="field">
            <label htmlFor="comment">Comment (a reason is required to reject a high or critical request, and to request changes)</label>
            <textarea
              id="comment"
              value={comment}
              onChange={(e) => setComment(e.target.value)}
              aria-invalid={commentTooLong ? true : undefined}
              aria-describedby={commentTooLong ? 'comment-too-long' : undefined}
            />
            <TooLongNote id="comment-too-long" reason={commentTooLong} />
          </div>
          {saidText && (
            <p className="banner" id="already-voted" data-testid="already-voted">
              {saidText}
            </p>
          )}
          {why && (
            <p className="banner" id="decide-blocked" data-testid="decide-blocked">
              {why}
            </p>
          )}
          <div className="decide-buttons">
            {/* The options, exactly as the agents.approval@1 export lists them (contract/options.ts). */}
            <fieldset className="buttons" aria-label="Decide">
              {options.map((o) => (
                <button
                  key={o.id}
                  type="button"
                  className={o.id === 'approve' ? `approve approve-${risk}` : o.id === 'reject' ? 'danger' : undefined}
                  disabled={disabledOption(o.id)}
                  aria-describedby={disabledOption(o.id) ? whyId : undefined}
                  onClick={choose[o.id]}
                  aria-expanded={o.id === 'edit_and_approve' ? editing : undefined}
                  data-option={o.id}
                >
                  {o.id === 'approve' && <span aria-hidden="true">{`${riskMark(a.risk)} `}</span>}
                  {/* Seed 002: a command's SHOWN event records this label as what the reviewer saw. */}
                  {o.label}
                </button>
              ))}
            </fieldset>
            {/* Not an option: it answers nothing, it hands the question to someone else. */}
            {delegationAllowed(a.policy) && (
              <fieldset className="buttons" aria-label="Hand over">
                <button
                  type="button"
                  disabled={blocked || !!why}
                  aria-describedby={why ? whyId : undefined}
                  onClick={() => setDelegating(!delegating)}
                  aria-expanded={delegating}
                >
                  Delegate
                </button>
              </fieldset>
            )}
          </div>
          {resultView}
          {delegating && !pending && (
            <DelegateTo
              approvalId={a.id}
              toUser={toUser}
              onToUser={setToUser}
              disabled={busy || !toUser || !!commentTooLong || !!why}
              onDelegate={() => void run('Delegated', delegate({ input: { ...seen, toUserId: toUser, comment: comment.trim() || null } }))}
            />
          )}
          {editing && canEdit && (
            <ActionEditor
              revision={shown.editor}
              busy={busy || !!pending}
              onEdit={(edit) => {
                props.onResult(null);
                setPending({
                  kind: 'edit',
                  revision: shown.number,
                  digest: shown.digest,
                  action: shown.action,
                  edit,
                  candidate: editedAction(shown.action, edit),
                });
              }}
            />
          )}
        </>
      ) : (
        <>
          <p>{`This request is ${a.status.toLowerCase().replace('_', ' ')}; it cannot be decided again.`}</p>
          {resultView}
        </>
      )}
      {pending && (
        <ConfirmDecision
          kind={pending.kind}
          title={a.title}
          risk={a.risk}
          revision={pending.revision}
          digest={pending.digest}
          action={pending.kind === 'edit' && pending.candidate ? pending.candidate : pending.action}
          changed={changed}
          blocked={props.offline}
          reason={comment}
          onReason={setComment}
          onConfirm={confirmed}
          onCancel={cancel}
          busy={busy}
        >
          {pending.kind === 'edit' &&
            (pending.candidate ? (
              <ActionDiff before={pending.action} after={pending.candidate} label={`Your changes to revision ${pending.revision}`} />
            ) : (
              <p className="error">This edit cannot be applied.</p>
            ))}
        </ConfirmDecision>
      )}
      {a.decisions.length > 0 && (
        <ol className="decisions" aria-label="Decisions">
          {a.decisions.map((d) => (
            <li key={d.id}>
              {`${d.outcome.replace(/_/g, ' ').toLowerCase()}${d.vote ? ' (vote)' : ''} by ${d.reviewer.name} on revision ${d.revision} (${d.digest.slice(0, 12)}…), ${when(d.decidedAt)}`}
              {d.delegatedTo && ` → ${d.delegatedTo.name}`}
              {d.comment && <q>{d.comment}</q>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
