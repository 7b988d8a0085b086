import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { graphql, useFragment, type FragmentType } from '../gql';
import type { InboxItemFragment } from '../gql/graphql';
import { errorInfo, onConnection } from '../lib/client';
import { Link, useRouter } from '../lib/router';
import { age, countdown, useNow } from '../lib/time';

export const InboxItem = graphql(`
  fragment InboxItem on Approval {
    id
    title
    risk
    status
    source
    createdAt
    expiresAt
    revision
    digest
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
    }
    assignee {
      id
      name
    }
  }
`);

const InboxQuery = graphql(`
  query Inbox($status: [ApprovalStatus!], $agentId: ID, $assignedToMe: Boolean) {
    approvals(first: 100, status: $status, agentId: $agentId, assignedToMe: $assignedToMe) {
      edges {
        node {
          id
          ...InboxItem
        }
      }
    }
    agents {
      id
      name
    }
  }
`);

const Requested = graphql(`
  subscription InboxRequested {
    approvalRequested {
      id
      ...InboxItem
    }
  }
`);

const Changed = graphql(`
  subscription InboxChanged {
    approvalChanged {
      id
      ...InboxItem
    }
  }
`);

const QuickApprove = graphql(`
  mutation InboxApprove($input: DecideInput!) {
    approve(input: $input) {
      id
      approval {
        id
        ...InboxItem
      }
    }
  }
`);

const QuickReject = graphql(`
  mutation InboxReject($input: DecideInput!) {
    reject(input: $input) {
      id
      approval {
        id
        ...InboxItem
      }
    }
  }
`);

const RISKS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
const STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED'] as const;

const unmask = (f: FragmentType<typeof InboxItem>) => useFragment(InboxItem, f);

export function InboxPage({ viewerId }: { viewerId: string }) {
  const [status, setStatus] = useState<string>('PENDING');
  const [agentId, setAgentId] = useState('');
  const [risk, setRisk] = useState('');
  const [mine, setMine] = useState(false);
  const vars = useMemo(
    () => ({ status: status ? [status as (typeof STATUSES)[number]] : null, agentId: agentId || null, assignedToMe: mine || null }),
    [status, agentId, mine],
  );
  const [{ data, error }, refetch] = useQuery({ query: InboxQuery, variables: vars });
  // Items seen in this session stay on screen, marked, when they leave the filter (superseded,
  // expired, decided elsewhere): nothing disappears silently under the reviewer's eyes.
  const [seen, setSeen] = useState<Map<string, InboxItemFragment>>(new Map());
  const upsert = (items: InboxItemFragment[]) =>
    setSeen((m) => {
      const n = new Map(m);
      for (const it of items) n.set(it.id, it);
      return n;
    });
  useEffect(() => setSeen(new Map()), [vars]);
  useEffect(() => {
    if (data) upsert(data.approvals.edges.map((e) => unmask(e.node)));
  }, [data]);
  useSubscription({ query: Requested }, (_p, r) => {
    const it = unmask(r.approvalRequested);
    if ((!status || status === 'PENDING') && (!agentId || it.agent?.id === agentId) && !mine) upsert([it]);
    return r;
  });
  useSubscription({ query: Changed }, (_p, r) => {
    const it = unmask(r.approvalChanged);
    setSeen((m) => (m.has(it.id) ? new Map(m).set(it.id, it) : m));
    return r;
  });
  // Catch up after a dropped socket: what happened meanwhile comes from a fresh query.
  useEffect(() => onConnection((s) => s === 'reconnected' && refetch({ requestPolicy: 'network-only' })), [refetch]);

  const now = useNow();
  const items = [...seen.values()]
    .filter((it) => !risk || it.risk === risk)
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));

  const [focus, setFocus] = useState(0);
  const [confirm, setConfirm] = useState<{ kind: 'approve' | 'reject'; item: InboxItemFragment } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [, approve] = useMutation(QuickApprove);
  const [, reject] = useMutation(QuickReject);
  const { navigate } = useRouter();
  const rows = useRef<(HTMLLIElement | null)[]>([]);
  useEffect(() => {
    if (focus >= items.length && items.length) setFocus(items.length - 1);
  }, [items.length, focus]);

  const decide = async () => {
    if (!confirm) return;
    const { kind, item } = confirm;
    setConfirm(null);
    const input = { approvalId: item.id, revision: item.revision, digest: item.digest };
    const r = kind === 'approve' ? await approve({ input }) : await reject({ input });
    const e = errorInfo(r.error);
    setMessage(e ? `Refused (${e.code}): ${e.message}` : `${kind === 'approve' ? 'Approved' : 'Rejected'} “${item.title}”.`);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if (confirm) {
        if (e.key === 'y' || e.key === 'Enter') {
          e.preventDefault();
          void decide();
        } else if (e.key === 'Escape' || e.key === 'n') setConfirm(null);
        return;
      }
      const move = (d: number) => {
        e.preventDefault();
        const next = Math.max(0, Math.min(items.length - 1, focus + d));
        setFocus(next);
        rows.current[next]?.focus();
      };
      const current = items[focus];
      if (e.key === 'j') move(1);
      else if (e.key === 'k') move(-1);
      else if (e.key === 'Enter' && current) navigate(`/approvals/${encodeURIComponent(current.id)}`);
      else if ((e.key === 'a' || e.key === 'r') && current && current.status === 'PENDING') {
        e.preventDefault();
        setConfirm({ kind: e.key === 'a' ? 'approve' : 'reject', item: current });
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });

  return (
    <section aria-labelledby="inbox-h">
      <h1 id="inbox-h">Inbox</h1>
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase().replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent{' '}
          <select value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">Any</option>
            {data?.agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Risk{' '}
          <select value={risk} onChange={(e) => setRisk(e.target.value)}>
            <option value="">Any</option>
            {RISKS.map((r) => (
              <option key={r} value={r}>
                {r.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={mine} onChange={(e) => setMine(e.target.checked)} /> Assigned to me
        </label>
      </form>
      <p className="muted keys">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> open, <kbd>a</kbd> approve, <kbd>r</kbd> reject.
      </p>
      {confirm && (
        <div className="confirm" role="alertdialog" aria-label="Confirm decision">
          {`${confirm.kind === 'approve' ? 'Approve' : 'Reject'} “${confirm.item.title}” at revision ${confirm.item.revision} (digest ${confirm.item.digest.slice(0, 12)})? `}
          <button type="button" onClick={() => void decide()}>
            Yes (y)
          </button>{' '}
          <button type="button" onClick={() => setConfirm(null)}>
            Cancel (Esc)
          </button>
        </div>
      )}
      {message && (
        <p className="status-msg" role="status">
          {message}
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
      {items.length === 0 ? (
        <p className="muted">Nothing here. New requests appear live.</p>
      ) : (
        <ul className="inbox" aria-label="Approval requests">
          {items.map((it, i) => {
            const cd = countdown(it.expiresAt, now);
            const stale = it.status !== 'PENDING';
            return (
              <li
                key={it.id}
                ref={(el) => {
                  rows.current[i] = el;
                }}
                tabIndex={i === focus ? 0 : -1}
                className={`row${i === focus ? ' focused' : ''}${stale ? ' closed' : ''}`}
                data-status={it.status}
                aria-current={i === focus ? 'true' : undefined}
                onFocus={() => setFocus(i)}
              >
                <span className={`risk risk-${it.risk.toLowerCase()}`}>{it.risk}</span>
                <Link to={`/approvals/${encodeURIComponent(it.id)}`} className="title">
                  {it.title}
                </Link>
                {stale && <span className={`badge status-${it.status.toLowerCase()}`}>{it.status.replace('_', ' ')}</span>}
                <span className="meta">
                  {it.agent ? it.agent.name : it.requester ? `by ${it.requester.name}` : it.source.toLowerCase()}
                  {it.task && (
                    <>
                      {' · task '}
                      <Link to={`/tasks/${encodeURIComponent(it.task.id)}`}>{it.task.state.toLowerCase().replace('_', ' ')}</Link>
                    </>
                  )}
                  {` · ${age(it.createdAt, now)}`}
                  {it.status === 'PENDING' && <span className={cd.expired ? 'warn' : ''}>{` · ${cd.text}`}</span>}
                  {it.assignee && ` · delegated to ${it.assignee.name}`}
                </span>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
