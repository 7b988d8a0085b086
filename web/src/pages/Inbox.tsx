import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { graphql, getFragmentData, type FragmentType } from '../gql';
import { ConfirmDecision } from '../components/ConfirmDecision';
import { onConnection } from '../lib/client';
import { errorInfo } from '../lib/errors';
import { compareBy, needsDeliberateStep, rejectNeedsReason, RISKS_DESC, riskMark, SORTS, type SortKey } from '../lib/risk';
import { useRouter } from '../lib/router';
import { useNow } from '../lib/time';
import { InboxRow, InboxRowFields } from './InboxRow';
import { WaitingForInput } from './Waiting';
import { NoAccessNote } from '../components/NoAccess';

// What the inbox itself reads of a request (filter, order, selection, quick decisions). The row
// reads its own fragment, spread beside this one: a fragment nested in another costs a level more
// in the GraphQL cost estimate (TASKBAY_GRAPHQL_MAX_COST), and the inbox asks for 100 rows.
export const InboxItem = graphql(`
  fragment InboxItem on Approval {
    id
    version
    title
    risk
    status
    createdAt
    expiresAt
    revision
    digest
    agent {
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
          ...InboxRow
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
      ...InboxRow
    }
  }
`);

const Changed = graphql(`
  subscription InboxChanged {
    approvalChanged {
      id
      ...InboxItem
      ...InboxRow
    }
  }
`);

const QuickApprove = graphql(`
  mutation InboxApprove($input: DecideInput!) {
    approve(input: $input) {
      id
      vote
      approval {
        id
        ...InboxItem
        ...InboxRow
      }
    }
  }
`);

const QuickReject = graphql(`
  mutation InboxReject($input: DecideInput!) {
    reject(input: $input) {
      id
      vote
      approval {
        id
        ...InboxItem
        ...InboxRow
      }
    }
  }
`);

const STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'CHANGES_REQUESTED', 'SUPERSEDED', 'EXPIRED'] as const;

/** What the inbox keeps of a request: its own fields, and the row's fragment to render it with. */
const itemOf = (node: FragmentType<typeof InboxItem> & FragmentType<typeof InboxRowFields>) => ({ ...getFragmentData(InboxItem, node), row: node });
type Item = ReturnType<typeof itemOf>;

/** What a quick decision names: the request as it was on screen when `a` or `r` was pressed. */
type Confirming = { kind: 'approve' | 'reject'; id: string; title: string; risk: string; revision: number; digest: string };

export function InboxPage({ viewerId }: { viewerId: string }) {
  const [status, setStatus] = useState<string>('PENDING');
  const [agentId, setAgentId] = useState('');
  const [risk, setRisk] = useState('');
  const [mine, setMine] = useState(false);
  const [sort, setSort] = useState<SortKey>('urgency');
  const vars = useMemo(
    () => ({ status: status ? [status as (typeof STATUSES)[number]] : null, agentId: agentId || null, assignedToMe: mine || null }),
    [status, agentId, mine],
  );
  const [{ data, error, fetching }, refetch] = useQuery({ query: InboxQuery, variables: vars });
  // Items seen in this session stay on screen, marked, when they leave the filter (superseded,
  // expired, decided elsewhere): nothing disappears silently under the reviewer's eyes.
  const [seen, setSeen] = useState<Map<string, Item>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const upsert = (items: Item[]) =>
    setSeen((m) => {
      const n = new Map(m);
      for (const it of items) n.set(it.id, it);
      return n;
    });
  useEffect(() => {
    setSeen(new Map());
    setLoaded(false);
  }, [vars]);
  useEffect(() => {
    if (data) {
      upsert(data.approvals.edges.map((e) => itemOf(e.node)));
      setLoaded(true);
    }
  }, [data]);
  useSubscription({ query: Requested }, (_p, r) => {
    const it = itemOf(r.approvalRequested);
    if ((!status || status === 'PENDING') && (!agentId || it.agent?.id === agentId) && !mine) upsert([it]);
    return r;
  });
  useSubscription({ query: Changed }, (_p, r) => {
    const it = itemOf(r.approvalChanged);
    setSeen((m) => (m.has(it.id) ? new Map(m).set(it.id, it) : m));
    // "Assigned to me" gains a request when it is delegated or escalated to me or to a group of
    // mine (membership is the server's to know): the list is asked again.
    const row = getFragmentData(InboxRowFields, r.approvalChanged);
    if (mine && !seen.has(it.id) && it.status === 'PENDING' && (row.assignee?.id === viewerId || row.escalatedAt)) {
      refetch({ requestPolicy: 'network-only' });
    }
    return r;
  });
  // Catch up after a dropped socket: what happened meanwhile comes from a fresh query.
  useEffect(() => onConnection((s) => s === 'reconnected' && refetch({ requestPolicy: 'network-only' })), [refetch]);

  const now = useNow();
  const all = [...seen.values()];
  const items = all.filter((it) => !risk || it.risk === risk).sort(compareBy(sort));
  const counts = Object.fromEntries(RISKS_DESC.map((r) => [r, all.filter((it) => it.status === 'PENDING' && it.risk === r).length]));

  // The selection is a request id, never a position: rows arriving, leaving or re-sorting
  // above it do not move it, and a/r act on that id only.
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const selected = items.find((it) => it.id === selectedId) ?? null;
  const [confirm, setConfirm] = useState<Confirming | null>(null);
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [, approve] = useMutation(QuickApprove);
  const [, reject] = useMutation(QuickReject);
  const { navigate } = useRouter();
  const rows = useRef(new Map<string, HTMLLIElement>());

  // A request that changes while its confirmation is open is not decided on the old view. Not
  // once this page decided it: its live update (or the mutation's result in the cache) can reach
  // this check before or after the answer and must not read as someone else's change. Cleared
  // when the next confirmation opens.
  const confirmedItem = confirm ? seen.get(confirm.id) : undefined;
  const deciding = useRef<string | null>(null);
  useEffect(() => {
    if (!confirm || !confirmedItem || deciding.current === confirm.id) return;
    if (confirmedItem.revision !== confirm.revision || confirmedItem.digest !== confirm.digest || confirmedItem.status !== 'PENDING') {
      setConfirm(null);
      setMessage(
        `“${confirm.title}” changed while you were confirming (now ${confirmedItem.status.toLowerCase()}, revision ${confirmedItem.revision}); nothing was decided.`,
      );
    }
  }, [confirm, confirmedItem]);

  const focusRow = (id: string | null) => {
    if (id) rows.current.get(id)?.focus();
  };
  const closeConfirm = () => {
    setConfirm(null);
    setReason('');
    requestAnimationFrame(() => focusRow(selectedId));
  };

  const decide = async () => {
    if (!confirm) return;
    const c = confirm;
    setBusy(true);
    deciding.current = c.id;
    const input = { approvalId: c.id, revision: c.revision, digest: c.digest, comment: reason.trim() || null };
    const r = c.kind === 'approve' ? await approve({ input }) : await reject({ input });
    setBusy(false);
    closeConfirm();
    const e = errorInfo(r.error);
    const d = r.data && ('approve' in r.data ? r.data.approve : r.data.reject);
    // A vote toward a policy's quorum leaves the request pending (the row shows "1 of 2 approvals").
    const vote = d?.vote ? '; it counts toward the quorum and the request stays pending' : '';
    setMessage(e ? `Refused (${e.code}): ${e.message}` : `${c.kind === 'approve' ? 'Approved' : 'Rejected'} “${c.title}” (revision ${c.revision})${vote}.`);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if (confirm) {
        // The dialog handles its own keys; y confirms when nothing more is asked for.
        if (e.key === 'Escape' || e.key === 'n') closeConfirm();
        else if (e.key === 'y' && !needsDeliberateStep(confirm.risk) && !(confirm.kind === 'reject' && rejectNeedsReason(confirm.risk))) {
          e.preventDefault();
          void decide();
        }
        return;
      }
      const index = selected ? items.indexOf(selected) : -1;
      const move = (d: number) => {
        e.preventDefault();
        if (!items.length) return;
        const next = items[index === -1 ? (d > 0 ? 0 : items.length - 1) : Math.max(0, Math.min(items.length - 1, index + d))]!;
        setSelectedId(next.id);
        focusRow(next.id);
      };
      if (e.key === 'j') move(1);
      else if (e.key === 'k') move(-1);
      else if (e.key === 'Enter' && selected) navigate(`/approvals/${encodeURIComponent(selected.id)}`);
      else if ((e.key === 'a' || e.key === 'r') && selected && selected.status === 'PENDING') {
        e.preventDefault();
        setMessage(null);
        setReason('');
        deciding.current = null;
        setConfirm({
          kind: e.key === 'a' ? 'approve' : 'reject',
          id: selected.id,
          title: selected.title,
          risk: selected.risk,
          revision: selected.revision,
          digest: selected.digest,
        });
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });

  return (
    <section aria-labelledby="inbox-h">
      <h1 id="inbox-h">Inbox</h1>
      <div className="risk-counts" role="group" aria-label="Pending by risk (click to filter)" data-testid="risk-counts">
        {RISKS_DESC.map((r) => (
          <button
            key={r}
            type="button"
            className={`count risk-${r.toLowerCase()}`}
            aria-pressed={risk === r}
            onClick={() => setRisk(risk === r ? '' : r)}
            data-risk={r}
          >
            {`${riskMark(r)} ${counts[r]} ${r.toLowerCase()}`}
          </button>
        ))}
      </div>
      <div className="sorts" role="group" aria-label="Order">
        {(Object.keys(SORTS) as SortKey[]).map((k) => (
          <button key={k} type="button" className="sort" aria-pressed={sort === k} onClick={() => setSort(k)}>
            {SORTS[k]}
          </button>
        ))}
      </div>
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
            {RISKS_DESC.map((r) => (
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
        Keys: <kbd>j</kbd>/<kbd>k</kbd> select, <kbd>Enter</kbd> open, <kbd>a</kbd> approve, <kbd>r</kbd> reject (each asks to confirm).
      </p>
      {confirm && (
        <ConfirmDecision
          kind={confirm.kind}
          title={confirm.title}
          risk={confirm.risk}
          revision={confirm.revision}
          digest={confirm.digest}
          reason={reason}
          onReason={setReason}
          onConfirm={() => void decide()}
          onCancel={closeConfirm}
          busy={busy}
        />
      )}
      {message && (
        <p className="status-msg" role="status">
          {message}
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
      {!loaded && (fetching || !error) ? (
        <p className="loading" role="status" data-testid="inbox-loading">
          Loading requests…
        </p>
      ) : items.length === 0 ? (
        <>
          <p className="muted" data-testid="inbox-empty">
            {risk ? `No ${risk.toLowerCase()} risk requests here.` : 'Nothing here. New requests appear live.'}
          </p>
          <NoAccessNote what="requests" />
        </>
      ) : (
        <ul className="inbox" aria-label="Approval requests">
          {items.map((it) => (
            <InboxRow
              key={it.id}
              item={it}
              row={it.row}
              selected={it.id === selectedId}
              tabbable={it.id === selectedId || (!selected && it === items[0])}
              now={now}
              viewerId={viewerId}
              register={(el) => {
                if (el) rows.current.set(it.id, el);
                else rows.current.delete(it.id);
              }}
              onFocus={() => setSelectedId(it.id)}
            />
          ))}
        </ul>
      )}
      <WaitingForInput />
    </section>
  );
}
