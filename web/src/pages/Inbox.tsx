import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import { ConfirmDecision } from '../components/ConfirmDecision';
import { linkReason, useLink } from '../lib/connection';
import { compareBy, RISKS_DESC } from '../lib/risk';
import { useRouter } from '../lib/router';
import { useNow } from '../lib/time';
import { InboxFilters, type Filters, type STATUSES } from './inbox/InboxFilters';
import { InboxList } from './inbox/InboxList';
import { placePath, readPlace, rememberInbox } from './inbox/place';
import { useInboxItems } from './inbox/useInboxItems';
import { useInboxKeys } from './inbox/useInboxKeys';
import { useQuickDecision } from './inbox/useQuickDecision';
import { WaitingForInput } from './Waiting';

// The inbox: the filters bar (inbox/InboxFilters.tsx), the list (inbox/InboxList.tsx, a row each:
// inbox/InboxRow.tsx), the requests it keeps as they arrive (inbox/useInboxItems.ts), quick
// decisions from the list (inbox/useQuickDecision.ts) and its keys (inbox/useInboxKeys.ts).
// The page holds what they share: the filters, order and selection, which live in the URL
// (inbox/place.ts), and the query.

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
  const { path, replace, navigate } = useRouter();
  const place = readPlace(path.split('?')[1] ?? '');
  const { status, agentId, risk, mine, sort, sel: selectedId } = place;
  const setPlace = (change: Partial<typeof place>) => replace(placePath({ ...place, ...change }));
  const vars = useMemo(
    () => ({ status: status ? [status as (typeof STATUSES)[number]] : null, agentId: agentId || null, assignedToMe: mine || null }),
    [status, agentId, mine],
  );
  const [{ data, error, fetching }, refetch] = useQuery({ query: InboxQuery, variables: vars });
  const { seen, loaded } = useInboxItems({ vars, filter: { status, agentId, mine }, data, viewerId, refetch });

  // Requests decided from this view keep their place (with their result) until the view
  // changes: the list does not move under the reviewer, and the next request is where it was.
  const [decidedHere, setDecidedHere] = useState<ReadonlySet<string>>(new Set());
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new query or order is a new view; the reset reads neither
  useEffect(() => setDecidedHere(new Set()), [vars, sort]);

  const now = useNow();
  const all = [...seen.values()];
  const order = compareBy(sort);
  const asSorted = (it: (typeof all)[number]) => (decidedHere.has(it.id) ? { ...it, status: 'PENDING' } : it);
  const items = all.filter((it) => !risk || it.risk === risk).sort((x, y) => order(asSorted(x), asSorted(y)));
  const counts = Object.fromEntries(RISKS_DESC.map((r) => [r, all.filter((it) => it.status === 'PENDING' && it.risk === r).length]));
  const ids = items.map((it) => it.id).join(',');
  // The ids as one string: the effect runs when the order changes, not on every render.
  useEffect(() => rememberInbox(path, ids ? ids.split(',') : []), [path, ids]);

  // The selection is a request id, never a position: rows arriving, leaving or re-sorting
  // above it do not move it, and a/r act on that id only.
  const selected = items.find((it) => it.id === selectedId) ?? null;
  const rows = useRef(new Map<string, HTMLLIElement>());
  const focusRow = (id: string | null) => {
    if (id) rows.current.get(id)?.focus();
  };
  const select = (id: string) => {
    if (id !== selectedId) setPlace({ sel: id });
  };
  const link = useLink();
  const blocked = linkReason(link);
  const quick = useQuickDecision({
    seen,
    blocked,
    onClosed: () => requestAnimationFrame(() => focusRow(selectedId)),
    // The next request is the first pending one after it, as the list stands (it keeps its place).
    onDecided: (id) => {
      setDecidedHere((s) => new Set(s).add(id));
      const at = items.findIndex((it) => it.id === id);
      const pending = (it: (typeof items)[number]) => it.status === 'PENDING' && it.id !== id && !decidedHere.has(it.id);
      const next = items.slice(at + 1).find(pending) ?? items.slice(0, Math.max(at, 0)).reverse().find(pending);
      if (next) {
        select(next.id);
        requestAnimationFrame(() => focusRow(next.id));
      } else requestAnimationFrame(() => focusRow(id));
    },
  });
  useInboxKeys({
    items,
    selected,
    select: (id) => {
      quick.clearNote();
      select(id);
      focusRow(id);
    },
    confirm: quick.confirm,
    openConfirm: quick.open,
    closeConfirm: quick.close,
    decide: () => void quick.decide(),
    open: (it) => navigate(`/approvals/${encodeURIComponent(it.id)}`),
  });

  // Back here (or a link with a selection): the focus goes to the selected row once it is shown.
  const arrived = useRef(false);
  useEffect(() => {
    if (arrived.current || !loaded) return;
    arrived.current = true;
    const active = document.activeElement;
    if (selectedId && (!active || active === document.body || active.tagName === 'H1')) focusRow(selectedId);
  });

  const below = (id: string) => (
    <>
      {quick.confirm?.id === id && (
        <ConfirmDecision
          kind={quick.confirm.kind}
          title={quick.confirm.title}
          risk={quick.confirm.risk}
          revision={quick.confirm.revision}
          digest={quick.confirm.digest}
          action={quick.confirm.action}
          changed={quick.changed}
          blocked={blocked}
          reason={quick.reason}
          onReason={quick.setReason}
          onConfirm={() => void quick.decide()}
          onCancel={quick.close}
          busy={quick.busy}
        />
      )}
      {quick.note?.id === id && (
        <p className={quick.note.ok ? 'status-msg row-note' : 'error refusal row-note'} role="status" data-testid="row-result">
          {quick.note.text}
        </p>
      )}
    </>
  );

  return (
    <section aria-labelledby="inbox-h">
      <h1 id="inbox-h">Inbox</h1>
      <InboxFilters query={data} filters={place} onChange={(change: Partial<Filters>) => setPlace(change)} counts={counts} />
      <p className="muted keys">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> select, <kbd>Enter</kbd> open, <kbd>a</kbd> approve, <kbd>r</kbd> reject (each asks to confirm; the next request is
        selected after a decision).
      </p>
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
        onSelect={select}
        below={below}
      />
      <WaitingForInput />
    </section>
  );
}
