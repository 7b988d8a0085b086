import { useRef, useState } from 'react';
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
export type Confirming = { kind: 'approve' | 'reject'; id: string; title: string; risk: string; revision: number; digest: string; action: unknown };

/** A result or refusal, shown in the row it is about. */
export type RowNote = { id: string; ok: boolean; text: string };

/** What the confirmation says when the request changed under it (null: it did not). */
function changedWhileConfirming(c: Confirming, now: Item | undefined): string | null {
  if (!now) return null;
  const was = `“${c.title}”`;
  const nothing = 'Nothing was decided.';
  if (now.status === 'SUPERSEDED')
    return `${was} was superseded while you were confirming: its agent replaced it with a newer request, which the list shows. ${nothing}`;
  if (now.status === 'EXPIRED') return `${was} expired while you were confirming. ${nothing}`;
  if (now.status !== 'PENDING') return `${was} was ${now.status.toLowerCase().replace('_', ' ')} elsewhere while you were confirming. ${nothing}`;
  if (now.revision !== c.revision || now.digest !== c.digest)
    return `${was} changed to revision ${now.revision} while you were confirming. ${nothing} Close this and review revision ${now.revision}.`;
  return null;
}

export function useQuickDecision(opts: {
  /** The items on screen, by id: the confirmed one is checked against its latest view. */
  seen: Map<string, Item>;
  /** Why nothing can be decided now (offline), or null. */
  blocked: string | null;
  /** After the confirmation closes: the focus goes back to the list. */
  onClosed: () => void;
  /** After a decision was made: the page moves on to the next request. */
  onDecided: (id: string) => void;
}) {
  const [confirm, setConfirm] = useState<Confirming | null>(null);
  const [reason, setReason] = useState('');
  const [note, setNote] = useState<RowNote | null>(null);
  const [busy, setBusy] = useState(false);
  const [, approve] = useMutation(QuickApprove);
  const [, reject] = useMutation(QuickReject);

  // A request that changes while its confirmation is open is not decided on the old view: the
  // confirmation stays and says so in place. Not once this page decided it: its live update (or
  // the mutation's result in the cache) can arrive before the answer and must not read as
  // someone else's change.
  const deciding = useRef<string | null>(null);
  const changed = confirm && deciding.current !== confirm.id ? changedWhileConfirming(confirm, opts.seen.get(confirm.id)) : null;

  const close = () => {
    setConfirm(null);
    setReason('');
    opts.onClosed();
  };

  /** Opens the confirmation of `kind` for the request as `item` shows it now, or says why it cannot be decided. */
  const open = (kind: Confirming['kind'], item: Item) => {
    setReason('');
    deciding.current = null;
    const why = item.viewerCannotDecide ? `You cannot decide this: ${item.viewerCannotDecide}.` : opts.blocked;
    if (why) {
      setNote({ id: item.id, ok: false, text: why });
      return;
    }
    setNote(null);
    setConfirm({ kind, id: item.id, title: item.title, risk: item.risk, revision: item.revision, digest: item.digest, action: item.action });
  };

  const decide = async () => {
    if (!confirm || changed || opts.blocked || busy) return;
    const c = confirm;
    setBusy(true);
    deciding.current = c.id;
    const input = { approvalId: c.id, revision: c.revision, digest: c.digest, comment: reason.trim() || null };
    const r = c.kind === 'approve' ? await approve({ input }) : await reject({ input });
    setBusy(false);
    setConfirm(null);
    setReason('');
    const e = errorInfo(r.error);
    const d = r.data && ('approve' in r.data ? r.data.approve : r.data.reject);
    // A vote toward a policy's quorum leaves the request pending (the row shows "1 of 2 approvals").
    const vote = d?.vote ? '; it counts toward the quorum and the request stays pending' : '';
    setNote({
      id: c.id,
      ok: !e,
      text: e ? `Refused (${e.code}): ${e.message}` : `${c.kind === 'approve' ? 'Approved' : 'Rejected'} “${c.title}” (revision ${c.revision})${vote}.`,
    });
    if (e) opts.onClosed();
    else opts.onDecided(c.id);
  };

  return { confirm, changed, reason, setReason, note, clearNote: () => setNote(null), busy, open, close, decide };
}
