import { useMemo, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import { ConfirmDecision } from '../components/ConfirmDecision';
import { compareBy, RISKS_DESC } from '../lib/risk';
import { useRouter } from '../lib/router';
import { useNow } from '../lib/time';
import { InboxFilters, type Filters, type STATUSES } from './inbox/InboxFilters';
import { InboxList } from './inbox/InboxList';
import { useInboxItems } from './inbox/useInboxItems';
import { useInboxKeys } from './inbox/useInboxKeys';
import { useQuickDecision } from './inbox/useQuickDecision';
import { WaitingForInput } from './Waiting';

// The inbox: the filters bar (inbox/InboxFilters.tsx), the list (inbox/InboxList.tsx, a row each:
// inbox/InboxRow.tsx), the requests it keeps as they arrive (inbox/useInboxItems.ts), quick
// decisions from the list (inbox/useQuickDecision.ts) and its keys (inbox/useInboxKeys.ts).
// The page holds what they share: the filters, the query, and the selection.

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
    ...InboxFilters
  }
`);

export function InboxPage({ viewerId }: { viewerId: string }) {
  const [filters, setFilters] = useState<Filters>({ status: 'PENDING', agentId: '', risk: '', mine: false, sort: 'urgency' });
  const { status, agentId, risk, mine, sort } = filters;
  const vars = useMemo(
    () => ({ status: status ? [status as (typeof STATUSES)[number]] : null, agentId: agentId || null, assignedToMe: mine || null }),
    [status, agentId, mine],
  );
  const [{ data, error, fetching }, refetch] = useQuery({ query: InboxQuery, variables: vars });
  const { seen, loaded } = useInboxItems({ vars, filter: { status, agentId, mine }, data, viewerId, refetch });

  const now = useNow();
  const all = [...seen.values()];
  const items = all.filter((it) => !risk || it.risk === risk).sort(compareBy(sort));
  const counts = Object.fromEntries(RISKS_DESC.map((r) => [r, all.filter((it) => it.status === 'PENDING' && it.risk === r).length]));

  // The selection is a request id, never a position: rows arriving, leaving or re-sorting
  // above it do not move it, and a/r act on that id only.
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const selected = items.find((it) => it.id === selectedId) ?? null;
  const rows = useRef(new Map<string, HTMLLIElement>());
  const focusRow = (id: string | null) => {
    if (id) rows.current.get(id)?.focus();
  };
  const quick = useQuickDecision({ seen, onClosed: () => requestAnimationFrame(() => focusRow(selectedId)) });
  const { navigate } = useRouter();
  useInboxKeys({
    items,
    selected,
    select: (id) => {
      setSelectedId(id);
      focusRow(id);
    },
    confirm: quick.confirm,
    openConfirm: quick.open,
    closeConfirm: quick.close,
    decide: () => void quick.decide(),
    open: (it) => navigate(`/approvals/${encodeURIComponent(it.id)}`),
  });

  return (
    <section aria-labelledby="inbox-h">
      <h1 id="inbox-h">Inbox</h1>
      <InboxFilters query={data} filters={filters} onChange={(change) => setFilters((f) => ({ ...f, ...change }))} counts={counts} />
      <p className="muted keys">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> select, <kbd>Enter</kbd> open, <kbd>a</kbd> approve, <kbd>r</kbd> reject (each asks to confirm).
      </p>
      {quick.confirm && (
        <ConfirmDecision
          kind={quick.confirm.kind}
          title={quick.confirm.title}
          risk={quick.confirm.risk}
          revision={quick.confirm.revision}
          digest={quick.confirm.digest}
          reason={quick.reason}
          onReason={quick.setReason}
          onConfirm={() => void quick.decide()}
          onCancel={quick.close}
          busy={quick.busy}
        />
      )}
      {quick.message && (
        <p className="status-msg" role="status">
          {quick.message}
        </p>
      )}
      {error && <p className="error">{error.message}</p>}
      <InboxList
        items={items}
        loaded={loaded}
        fetching={fetching}
        failed={!!error}
        risk={risk}
        selectedId={selectedId}
        now={now}
        viewerId={viewerId}
        register={(id, el) => {
          if (el) rows.current.set(id, el);
          else rows.current.delete(id);
        }}
        onSelect={setSelectedId}
      />
      <WaitingForInput />
    </section>
  );
}
