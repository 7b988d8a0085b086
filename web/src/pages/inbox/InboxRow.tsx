import type { ReactNode } from 'react';
import { graphql, getFragmentData, type FragmentType } from '../../gql';
import type { InboxItemFragment } from '../../gql/graphql';
import { riskMark, URGENT_MS } from '../../lib/risk';
import { Link } from '../../lib/router';
import { age, countdown, when } from '../../lib/time';
import { actionPreview } from '../../render/action-text';
import { escalationTarget } from '../approval/Escalation';

// One request in the inbox list: risk, title, who asks, task, age, time left, quorum progress,
// delegation, escalation, and the action in one line; the selected row says why the viewer
// cannot decide it, if so. Below it, what the page puts there: the confirmation of a quick
// decision and its result or refusal, next to the row it is about.
// The fields the inbox itself reads (InboxItem) are passed in, not asked again here: every field of
// a row weighs heavily in the query's cost estimate (Armor multiplies at each level and fragment
// spread; TASKBAY_GRAPHQL_MAX_COST, docs/SECURITY.md), and the inbox must stay well under it.

export const InboxRowFields = graphql(`
  fragment InboxRow on Approval {
    task {
      id
      state
    }
    requester {
      id
      name
    }
    assignee {
      id
      name
    }
    assigneeGroup {
      name
    }
    escalatedAt
    riskRaisedFrom
    command {
      agentId
    }
    quorumRequired
    quorumCount
  }
`);

export function InboxRow(props: {
  /** What the inbox reads of the request (id, title, risk, status, times, agent): not asked twice. */
  item: InboxItemFragment;
  row: FragmentType<typeof InboxRowFields>;
  selected: boolean;
  /** The row Tab reaches (roving tabindex): the selected one, else the first. */
  tabbable: boolean;
  now: number;
  viewerId: string;
  /** The row's element, to move the focus to it (null when it leaves). */
  register: (el: HTMLLIElement | null) => void;
  onFocus: () => void;
  /** The confirmation, result or refusal of a decision on this row. */
  children?: ReactNode;
}) {
  const it = { ...props.item, ...getFragmentData(InboxRowFields, props.row) };
  const { now, selected } = props;
  const cd = countdown(it.expiresAt, now);
  const stale = it.status !== 'PENDING';
  const urgent = !stale && !cd.expired && cd.leftMs !== null && cd.leftMs < URGENT_MS;
  // Escalated: to the group it is assigned to and/or the person (the escalation's targets).
  const target = it.escalatedAt ? escalationTarget({ toGroup: it.assigneeGroup, toUser: it.assignee }) : null;
  return (
    <li
      ref={props.register}
      tabIndex={props.tabbable ? 0 : -1}
      className={`row risk-row-${it.risk.toLowerCase()}${selected ? ' selected' : ''}${stale ? ' closed' : ''}`}
      data-status={it.status}
      data-id={it.id}
      aria-current={selected ? 'true' : undefined}
      onFocus={props.onFocus}
    >
      <span className={`risk risk-${it.risk.toLowerCase()}`}>{`${riskMark(it.risk)} ${it.risk}`}</span>
      <Link to={`/approvals/${encodeURIComponent(it.id)}`} className="title">
        {it.title}
      </Link>
      {stale && <span className={`badge status-${it.status.toLowerCase()}`}>{it.status.replace('_', ' ')}</span>}
      <span className="meta">
        {it.command
          ? `coding agent ${it.command.agentId} · token of ${it.requester?.name ?? 'unknown'}`
          : it.task
            ? (it.agent?.name ?? '')
            : `${it.agent ? `${it.agent.name} · ` : ''}${it.requester ? `by ${it.requester.name} · ` : ''}${it.agent?.kind === 'MCP_CLIENT' ? 'MCP client: the decision is its answer' : `${it.agent ? 'no task' : 'no agent'}: approving sends nothing`}`}
        {it.task && (
          <>
            {' · task '}
            <Link to={`/tasks/${encodeURIComponent(it.task.id)}`}>{it.task.state.toLowerCase().replace('_', ' ')}</Link>
          </>
        )}
        {` · ${age(it.createdAt, now)}`}
        {it.status === 'PENDING' && (
          <>
            {' · '}
            <span className={cd.expired ? 'warn' : urgent ? 'urgent' : ''} data-urgent={urgent || undefined}>
              {urgent ? `Urgent: ${cd.text}` : cd.text}
            </span>
          </>
        )}
        {it.status === 'PENDING' && it.quorumRequired > 1 && (
          <>
            {' · '}
            <span className="quorum-badge" data-testid="quorum-badge">{`${it.quorumCount} of ${it.quorumRequired} approvals`}</span>
          </>
        )}
        {it.assignee && !it.escalatedAt && ` · delegated to ${it.assignee.id === props.viewerId ? 'you' : it.assignee.name}`}
        {it.escalatedAt && (
          <span className="escalated" data-testid="escalated">
            {` · escalated${target ? ` to ${target}` : ''} at ${when(it.escalatedAt)}`}
            {it.riskRaisedFrom && ` (risk raised from ${it.riskRaisedFrom.toLowerCase()})`}
          </span>
        )}
      </span>
      <span className="preview" data-testid="row-preview">
        {actionPreview(it.action)}
      </span>
      {selected && !stale && it.viewerCannotDecide && (
        <span className="muted row-note" data-testid="row-cannot-decide">{`You cannot decide this: ${it.viewerCannotDecide}.`}</span>
      )}
      {props.children}
    </li>
  );
}
