import { useEffect, useRef, useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import { errorInfo } from '../../lib/errors';
import type { Item } from './item';

// A decision made from the list (a or r, then a confirmation): it names the request as it was on
// screen when the key was pressed, and nothing is decided on a view that changed meanwhile.

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

/** What a quick decision names: the request as it was on screen when `a` or `r` was pressed. */
export type Confirming = { kind: 'approve' | 'reject'; id: string; title: string; risk: string; revision: number; digest: string };

export function useQuickDecision(opts: {
  /** The items on screen, by id: the confirmed one is checked against its latest view. */
  seen: Map<string, Item>;
  /** After the confirmation closes: the focus goes back to the list. */
  onClosed: () => void;
}) {
  const [confirm, setConfirm] = useState<Confirming | null>(null);
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [, approve] = useMutation(QuickApprove);
  const [, reject] = useMutation(QuickReject);

  // A request that changes while its confirmation is open is not decided on the old view. Not
  // once this page decided it: its live update (or the mutation's result in the cache) can reach
  // this check before or after the answer and must not read as someone else's change. Cleared
  // when the next confirmation opens.
  const confirmedItem = confirm ? opts.seen.get(confirm.id) : undefined;
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

  const close = () => {
    setConfirm(null);
    setReason('');
    opts.onClosed();
  };

  /** Opens the confirmation of `kind` for the request as `item` shows it now. */
  const open = (kind: Confirming['kind'], item: Item) => {
    setMessage(null);
    setReason('');
    deciding.current = null;
    setConfirm({ kind, id: item.id, title: item.title, risk: item.risk, revision: item.revision, digest: item.digest });
  };

  const decide = async () => {
    if (!confirm) return;
    const c = confirm;
    setBusy(true);
    deciding.current = c.id;
    const input = { approvalId: c.id, revision: c.revision, digest: c.digest, comment: reason.trim() || null };
    const r = c.kind === 'approve' ? await approve({ input }) : await reject({ input });
    setBusy(false);
    close();
    const e = errorInfo(r.error);
    const d = r.data && ('approve' in r.data ? r.data.approve : r.data.reject);
    // A vote toward a policy's quorum leaves the request pending (the row shows "1 of 2 approvals").
    const vote = d?.vote ? '; it counts toward the quorum and the request stays pending' : '';
    setMessage(e ? `Refused (${e.code}): ${e.message}` : `${c.kind === 'approve' ? 'Approved' : 'Rejected'} “${c.title}” (revision ${c.revision})${vote}.`);
  };

  return { confirm, reason, setReason, message, busy, open, close, decide };
}
