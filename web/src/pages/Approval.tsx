import { useEffect, useRef, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { graphql, getFragmentData, type FragmentType } from '../gql';
import type { ApprovalViewFragment } from '../gql/graphql';
import { onConnection } from '../lib/client';
import { linkReason, useLink } from '../lib/connection';
import { Link, useRouter } from '../lib/router';
import { riskMark, URGENT_MS } from '../lib/risk';
import { age, countdown, useNow } from '../lib/time';
import { ActionView } from '../render/ActionView';
import { ActionDiff } from '../render/Diff';
import { AuditTrailView } from './approval/AuditTrail';
import { DecisionPanel, type DecisionOutcomeText, type DecisionState, type Shown, useDecisionState } from './approval/DecisionPanel';
import { DeliveryLedgerView } from './approval/DeliveryLedger';
import { QuorumProgressView } from './approval/QuorumProgress';
import { EscalationView } from './approval/Escalation';
import { IntegrityAlertsView } from './approval/IntegrityAlerts';
import { McpCallPanel } from './approval/McpCall';
import { RevisionHistoryView } from './approval/RevisionHistory';
import { besideInInbox, inboxPath } from './inbox/place';

// One approval request: what it asks, the exact revision on screen, and one panel each for the
// decision (approval/DecisionPanel.tsx, with its editor), the delivery ledger, the revisions and
// the audit trail. Each panel owns its fragment; the page's own fragment (ApprovalView) spreads
// them beside what the page shows itself.

// Every revision is immutable (number, digest, action). The page shows the one whose number and
// digest are the approval's current ones, so form, values, text, data, digest, buttons and diff
// always come from the same revision record.
const CurrentRevisionFields = graphql(`
  fragment ApprovalCurrentRevision on Approval {
    id
    revision
    digest
    revisions {
      number
      digest
      action
      ...ActionEditor
    }
  }
`);

// Everything the page shows, in one selection: the page's query, its live subscription and a
// decision's answer (DecisionResult, approval/DecisionPanel.tsx) each spread it, so every panel
// is refreshed by all three and a field added here reaches all three. `version` (with `events`,
// in AuditTrail) is what lib/approval-freshness.ts orders answers by.
export const ApprovalViewFields = graphql(`
  fragment ApprovalView on Approval {
    id
    version
    title
    summary
    risk
    status
    source
    createdAt
    expiresAt
    agent {
      id
      name
      kind
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
    ...ApprovalEscalation
    ...ApprovalIntegrityAlerts
    ...ApprovalCurrentRevision
    ...ApprovalRevisions
    ...DecisionPanel
    ...QuorumProgress
    ...DeliveryLedger
    ...AuditTrail
    ...ApprovalMcpCall
  }
`);

const ApprovalQuery = graphql(`
  query ApprovalPage($id: ID!) {
    approval(id: $id) {
      id
      ...ApprovalView
    }
  }
`);

const ApprovalLive = graphql(`
  subscription ApprovalLive($id: ID!) {
    approvalChanged(approvalId: $id) {
      id
      ...ApprovalView
    }
  }
`);

export function ApprovalPage({ id, viewerId }: { id: string; viewerId: string }) {
  const [{ data, error, fetching }, refetch] = useQuery({ query: ApprovalQuery, variables: { id } });
  useSubscription({ query: ApprovalLive, variables: { id } });
  // Catch up after a dropped connection: what changed meanwhile comes from a fresh read.
  useEffect(() => onConnection((s) => s === 'reconnected' && refetch({ requestPolicy: 'network-only' })), [refetch]);
  if (!data && fetching)
    return (
      <p className="loading" role="status">
        Loading…
      </p>
    );
  if (error && !data) return <p className="error">{error.message}</p>;
  const a = data?.approval;
  if (!a) return <p>Approval not found.</p>;
  return <ApprovalView key={a.id} approval={a} viewerId={viewerId} refetch={() => refetch({ requestPolicy: 'network-only' })} />;
}

function ApprovalView(props: { approval: FragmentType<typeof ApprovalViewFields>; viewerId: string; refetch: () => void }) {
  const a = getFragmentData(ApprovalViewFields, props.approval);
  const { viewerId, refetch } = props;
  const now = useNow();
  const revs = getFragmentData(CurrentRevisionFields, a);
  const current = revs.revisions.find((r) => r.number === revs.revision && r.digest === revs.digest);
  const shown: Shown | null = current ? { number: current.number, digest: current.digest, action: current.action, editor: current } : null;
  // The revision this tab first showed, to say so when a newer one replaces it.
  const opened = useRef<number | null>(null);
  if (shown && opened.current === null) opened.current = shown.number;
  const [result, setResult] = useState<DecisionOutcomeText | null>(null);
  // The open confirmation outlives a new revision (RevisionView is keyed by it), to say so in place.
  const decision = useDecisionState();
  const offline = linkReason(useLink());
  const { navigate } = useRouter();
  // The page's own keys beside the decision's (DecisionPanel): j/k the next or previous request
  // of the inbox as last shown, u back to it with this request selected.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
      if (e.metaKey || e.ctrlKey || e.altKey || decision.pending) return;
      if (e.key === 'u') navigate(inboxPath(a.id));
      else if (e.key === 'j' || e.key === 'k') {
        const next = besideInInbox(a.id, e.key === 'j' ? 1 : -1);
        if (next) navigate(`/approvals/${encodeURIComponent(next)}`);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });
  // A revision number without its record in the cache yet: fetch it rather than mix revisions.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per revision it lacks; refetch is a new function every render
  useEffect(() => {
    if (!current) refetch();
  }, [revs.revision, revs.digest, !current]);

  const cd = countdown(a.expiresAt, now);
  const urgent = a.status === 'PENDING' && !cd.expired && cd.leftMs !== null && cd.leftMs < URGENT_MS;
  return (
    <article className="approval" aria-labelledby="approval-title">
      <p>
        <Link to={inboxPath(a.id)}>← Inbox</Link>
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
      <p className="muted keys">
        Keys: <kbd>a</kbd> approve, <kbd>r</kbd> reject, <kbd>c</kbd> request changes, <kbd>e</kbd> edit, <kbd>d</kbd> delegate, <kbd>j</kbd>/<kbd>k</kbd> next
        or previous request, <kbd>u</kbd> back to the inbox.
      </p>
      <IntegrityAlertsView approval={a} />
      <EscalationView approval={a} />
      {!a.task && a.source !== 'COMMAND' && (
        // Only a request on a task is delivered (to that task's agent); a person's request
        // scoped to an agent but on no task only names who decides. An MCP client's request is
        // its client's answer (request_approval, get_approval, or the gateway's held call).
        <p className="banner" data-testid="no-agent">
          {a.agent?.kind === 'MCP_CLIENT'
            ? `This request is from the MCP client ${a.agent.name}, on no task: the decision is the client's answer, and a call the MCP gateway holds is forwarded once if approved.`
            : `This request ${a.agent ? 'is on no task' : 'has no agent'}: approving records the decision and sends nothing to anyone.`}
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
        <RevisionView
          key={`${shown.number}:${shown.digest}`}
          approval={a}
          shown={shown}
          viewerId={viewerId}
          refetch={refetch}
          onResult={setResult}
          result={result}
          decision={decision}
          offline={offline}
        />
      )}
      <DeliveryLedgerView approval={a} />
      <RevisionHistoryView approval={a} />
      <AuditTrailView approval={a} />
    </article>
  );
}

function whoAsks(a: ApprovalViewFragment): string {
  // A command request's agent record is its person's hook; name the coding agent and the token owner.
  if (a.source === 'COMMAND')
    return `Coding agent ${a.command?.agentId ?? '?'} · token of ${a.requester ? `${a.requester.name} (${a.requester.email})` : 'unknown'}`;
  if (a.agent && a.task) return `Agent: ${a.agent.name}`;
  const by = a.requester ? `Requested by ${a.requester.name} (${a.requester.email})` : a.source;
  return a.agent ? `${by} · decided by OPERATE on ${a.agent.name}` : by;
}

function RevisionView({
  approval,
  shown,
  viewerId,
  refetch,
  onResult,
  result,
  decision,
  offline,
}: {
  approval: ApprovalViewFragment;
  shown: Shown;
  viewerId: string;
  refetch: () => void;
  onResult: (r: DecisionOutcomeText | null) => void;
  result: DecisionOutcomeText | null;
  decision: DecisionState;
  offline: string | null;
}) {
  return (
    <>
      <section aria-labelledby="action-h" data-revision={shown.number}>
        <h2 id="action-h">
          The exact action <span className="digest" data-testid="revision">{`revision ${shown.number}`}</span>
        </h2>
        <DigestLine digest={shown.digest} />
        <ActionView action={shown.action} />
        <McpCallPanel approval={approval} shown={shown} />
      </section>
      <QuorumProgressView approval={approval} viewerId={viewerId} />
      <DecisionPanel
        approval={approval}
        shown={shown}
        viewerId={viewerId}
        onRefused={refetch}
        onResult={onResult}
        result={result}
        state={decision}
        offline={offline}
      />
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
        SHA-256 of this action as canonical JSON (RFC 8785). An approved message carries it as metadata.approval.revisionDigest, so the agent can recompute it
        from what it receives.
      </p>
    </div>
  );
}
