import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient, useSubscription, type UseQueryExecute } from 'urql';
import { graphql, getFragmentData } from '../../gql';
import type { InboxQuery } from '../../gql/graphql';
import { onConnection } from '../../lib/client';
import { InboxRowFields } from './InboxRow';
import { itemOf, type Item } from './item';

// The requests the inbox shows: the list its query read, and what arrives live. Items seen in
// this view stay on screen, marked, when they leave the filter (superseded, expired, decided
// elsewhere): nothing disappears silently under the reviewer's eyes, not even across a dropped
// connection: after it, the list is read again, and a pending request it no longer holds is
// read on its own (it was decided, superseded or expired meanwhile, and its live event was lost).

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

const ItemAgain = graphql(`
  query InboxItemAgain($id: ID!) {
    approval(id: $id) {
      id
      ...InboxItem
      ...InboxRow
    }
  }
`);

/** The query's filter, as the live events are matched against it. */
export type InboxFilter = { status: string; agentId: string; mine: boolean };

export function useInboxItems(opts: {
  /** The page query's variables: new ones start the view afresh. */
  vars: object;
  filter: InboxFilter;
  /** The page query's answer, once there. */
  data: InboxQuery | undefined;
  viewerId: string;
  /** The page query's re-execute function. */
  refetch: UseQueryExecute;
}): { seen: Map<string, Item>; loaded: boolean } {
  const { filter, data, viewerId, refetch } = opts;
  const [seen, setSeen] = useState<Map<string, Item>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const upsert = useCallback(
    (items: Item[]) =>
      setSeen((m) => {
        const n = new Map(m);
        for (const it of items) n.set(it.id, it);
        return n;
      }),
    [],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: what starts the view afresh is new variables, which the reset itself does not read
  useEffect(() => {
    setSeen(new Map());
    setLoaded(false);
  }, [opts.vars]);
  const client = useClient();
  const catchingUp = useRef(false);
  const seenNow = useRef(seen);
  seenNow.current = seen;
  useEffect(() => {
    if (!data) return;
    upsert(data.approvals.edges.map((e) => itemOf(e.node)));
    setLoaded(true);
    if (!catchingUp.current) return;
    catchingUp.current = false;
    const fresh = new Set(data.approvals.edges.map((e) => e.node.id));
    for (const it of seenNow.current.values()) {
      if (it.status !== 'PENDING' || fresh.has(it.id)) continue;
      void client
        .query(ItemAgain, { id: it.id }, { requestPolicy: 'network-only' })
        .toPromise()
        .then((r) => r.data?.approval && upsert([itemOf(r.data.approval)]));
    }
  }, [data, upsert, client]);
  useSubscription({ query: Requested }, (_p, r) => {
    const it = itemOf(r.approvalRequested);
    if ((!filter.status || filter.status === 'PENDING') && (!filter.agentId || it.agent?.id === filter.agentId) && !filter.mine) upsert([it]);
    return r;
  });
  useSubscription({ query: Changed }, (_p, r) => {
    const it = itemOf(r.approvalChanged);
    setSeen((m) => (m.has(it.id) ? new Map(m).set(it.id, it) : m));
    // "Assigned to me" gains a request when it is delegated or escalated to me or to a group of
    // mine (membership is the server's to know): the list is asked again.
    const row = getFragmentData(InboxRowFields, r.approvalChanged);
    if (filter.mine && !seen.has(it.id) && it.status === 'PENDING' && (row.assignee?.id === viewerId || row.escalatedAt)) {
      refetch({ requestPolicy: 'network-only' });
    }
    return r;
  });
  // Catch up after a dropped socket: what happened meanwhile comes from a fresh query (above).
  useEffect(
    () =>
      onConnection((s) => {
        if (s !== 'reconnected') return;
        catchingUp.current = true;
        refetch({ requestPolicy: 'network-only' });
      }),
    [refetch],
  );
  return { seen, loaded };
}
