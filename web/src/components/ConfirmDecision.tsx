import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { DECISION_LIMITS } from '../../../server/src/limits.js';
import { tooLong, TooLongNote } from './TooLong';
import { DIGEST_CONFIRM_CHARS, needsDeliberateStep, rejectNeedsReason, riskMark } from '../lib/risk';
import { actionText, clip } from '../render/action-text';

export type FinalDecision = 'approve' | 'edit' | 'reject' | 'changes';

const VERB: Record<FinalDecision, string> = {
  approve: 'Approve',
  edit: 'Approve your edit of',
  reject: 'Reject',
  changes: 'Send back for changes',
};
const BUTTON: Record<FinalDecision, string> = {
  approve: 'Approve',
  edit: 'Approve edited action',
  reject: 'Reject',
  changes: 'Request changes',
};

/**
 * Whether what was typed confirms the digest: its first characters (at least
 * DIGEST_CONFIRM_CHARS) or the whole digest pasted, case and surrounding space aside.
 */
export function typedConfirms(typed: string, digest: string): boolean {
  const t = typed.trim().toLowerCase();
  return t.length >= DIGEST_CONFIRM_CHARS && digest.toLowerCase().startsWith(t);
}

/**
 * The confirmation of a final decision, in proportion to risk. It names the title, the revision,
 * the full digest and, next to it, the exact action being decided on (clipped, with a way to see
 * all of it). High and critical ask for a deliberate second step: typing the first characters of
 * that digest (or pasting it whole). Rejecting a high or critical request, and asking for
 * changes, need a reason. Enter confirms once everything asked for is there; Escape cancels.
 * When the request changes while it is open (`changed`) it stays, says so, and confirms nothing;
 * while the connection is down (`blocked`) its button is disabled with the reason beside it.
 */
export function ConfirmDecision(props: {
  kind: FinalDecision;
  title: string;
  risk: string;
  revision: number;
  digest: string;
  reason: string;
  onReason: (text: string) => void;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
  /** The action of exactly this revision, shown next to its digest. */
  action: unknown;
  /** The request changed while this was open (superseded, expired, decided elsewhere, a new revision): said in place. */
  changed?: ReactNode;
  /** Why the decision cannot be sent now (offline), beside the disabled button. */
  blocked?: string | null;
  /** What the decision changes (the edit's diff). */
  children?: ReactNode;
}) {
  const { kind, risk, digest } = props;
  const id = useId();
  const deliberate = needsDeliberateStep(risk);
  const needsReason = kind === 'changes' || (kind === 'reject' && rejectNeedsReason(risk));
  const askReason = kind === 'reject' || kind === 'changes';
  const [typed, setTyped] = useState('');
  const typedOk = !deliberate || typedConfirms(typed, digest);
  const reasonOk = !needsReason || props.reason.trim() !== '';
  // The reason is the decision's comment: the server counts it trimmed, in code points.
  const reasonTooLong = tooLong('The comment', props.reason.trim(), DECISION_LIMITS.commentMax);
  const ok = typedOk && reasonOk && !reasonTooLong && !props.busy && !props.changed && !props.blocked;
  const first = useRef<HTMLInputElement | HTMLTextAreaElement | HTMLButtonElement | null>(null);
  useEffect(() => first.current?.focus(), []);
  // A change said in place takes the focus to Close: the confirm button it disables would drop it to the body.
  const close = useRef<HTMLButtonElement>(null);
  const changed = !!props.changed;
  useEffect(() => {
    if (changed) close.current?.focus();
  }, [changed]);
  const [allShown, setAllShown] = useState(false);
  const text = actionText(props.action);
  const { shown, clipped } = clip(text);
  const focusFirst = (el: HTMLInputElement | HTMLTextAreaElement | HTMLButtonElement | null) => {
    if (el && !first.current) first.current = el;
  };
  const confirm = () => {
    if (ok) props.onConfirm();
  };
  return (
    <div
      className={`confirm confirm-${risk.toLowerCase()}`}
      role="alertdialog"
      aria-modal="false"
      aria-labelledby={`${id}-h`}
      aria-describedby={`${id}-what`}
      data-testid="confirm-decision"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          props.onCancel();
        } else if (e.key === 'Enter' && (e.target as HTMLElement).tagName !== 'TEXTAREA' && (e.target as HTMLElement).tagName !== 'BUTTON') {
          e.preventDefault();
          e.stopPropagation();
          confirm();
        }
      }}
    >
      <h3 id={`${id}-h`}>{`${VERB[kind]} “${props.title}”?`}</h3>
      <dl className="confirm-facts" id={`${id}-what`}>
        <dt>Risk</dt>
        <dd>
          <span className={`risk risk-${risk.toLowerCase()}`}>{`${riskMark(risk)} ${risk}`}</span>
        </dd>
        <dt>Revision</dt>
        <dd data-testid="confirm-revision">{kind === 'edit' ? `${props.revision} (your edit becomes revision ${props.revision + 1})` : props.revision}</dd>
        <dt>Digest</dt>
        <dd>
          <code className="digest-full" data-testid="confirm-digest">
            {digest}
          </code>
        </dd>
        <dt>Action</dt>
        <dd>
          <pre className="action-text confirm-action" id={`${id}-action`} data-testid="confirm-action" data-clipped={clipped && !allShown ? 'true' : undefined}>
            {allShown || !clipped ? text : `${shown}…`}
          </pre>
          {clipped && (
            <button type="button" className="small" aria-expanded={allShown} aria-controls={`${id}-action`} onClick={() => setAllShown(!allShown)}>
              {allShown ? 'Show less' : `Show all of the action (${text.split('\n').length} lines)`}
            </button>
          )}
        </dd>
      </dl>
      {props.changed && (
        <div className="banner alert" role="alert" data-testid="confirm-changed">
          {props.changed}
        </div>
      )}
      {props.children}
      {askReason && (
        <div className="field">
          <label htmlFor={`${id}-reason`}>{needsReason ? 'Reason (required)' : 'Reason (optional)'}</label>
          <textarea
            id={`${id}-reason`}
            ref={focusFirst}
            value={props.reason}
            onChange={(e) => props.onReason(e.target.value)}
            aria-invalid={!reasonOk || !!reasonTooLong || undefined}
            aria-describedby={reasonTooLong ? `${id}-too-long` : undefined}
          />
          {!reasonOk && (
            <small className="muted">{kind === 'changes' ? 'Say what should change.' : `A ${risk.toLowerCase()} request is rejected with a reason.`}</small>
          )}
        </div>
      )}
      {deliberate && (
        <div className="field">
          <label
            htmlFor={`${id}-typed`}
          >{`This is a ${risk.toLowerCase()} risk decision. Type the first ${DIGEST_CONFIRM_CHARS} characters of the digest to confirm (or paste the whole digest)`}</label>
          <input
            id={`${id}-typed`}
            ref={focusFirst}
            value={typed}
            autoComplete="off"
            spellCheck={false}
            maxLength={80}
            onChange={(e) => setTyped(e.target.value)}
            aria-invalid={(typed !== '' && !typedOk) || undefined}
          />
        </div>
      )}
      {/* Beside the button it disables: an approval has no reason box here but sends the comment too. */}
      <TooLongNote id={`${id}-too-long`} reason={reasonTooLong} />
      <div className="buttons">
        <button
          type="button"
          ref={focusFirst}
          className={kind === 'reject' || kind === 'changes' ? 'danger' : `approve approve-${risk.toLowerCase()}`}
          disabled={!ok}
          aria-describedby={props.blocked ? `${id}-blocked` : undefined}
          onClick={confirm}
        >
          {`${BUTTON[kind]} revision ${props.revision}`}
        </button>
        <button type="button" ref={close} onClick={props.onCancel}>
          {props.changed ? 'Close' : 'Cancel'}
        </button>
      </div>
      {props.blocked && (
        <p className="muted" id={`${id}-blocked`} data-testid="confirm-blocked">
          {props.blocked}
        </p>
      )}
    </div>
  );
}
