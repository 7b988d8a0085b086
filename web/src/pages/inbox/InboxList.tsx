import type { ReactNode } from 'react';
import { NoAccessNote } from '../../components/NoAccess';
import { InboxRow } from './InboxRow';
import type { Item } from './item';

// The list itself, or what stands in for it: loading, or why it is empty. Each row reads its
// own fragment (InboxRow), carried by the item, and shows what the page puts below it.

export function InboxList(props: {
  items: Item[];
  /** The query's first answer has arrived (until then: loading, unless it failed). */
  loaded: boolean;
  fetching: boolean;
  failed: boolean;
  /** The risk filter, to say what is empty. */
  risk: string;
  selectedId: string | null;
  now: number;
  viewerId: string;
  /** Each row's element, to move the focus to it (null when it leaves). */
  register: (id: string, el: HTMLLIElement | null) => void;
  onSelect: (id: string) => void;
  /** What goes below a row: the confirmation, result or refusal of a decision on it. */
  below: (id: string) => ReactNode;
}) {
  const { items, selectedId } = props;
  const selected = items.find((it) => it.id === selectedId) ?? null;
  if (!props.loaded && (props.fetching || !props.failed))
    return (
      <p className="loading" role="status" data-testid="inbox-loading">
        Loading requests…
      </p>
    );
  if (items.length === 0)
    return (
      <>
        <p className="muted" data-testid="inbox-empty">
          {props.risk ? `No ${props.risk.toLowerCase()} risk requests here.` : 'Nothing here. New requests appear live.'}
        </p>
        <NoAccessNote what="requests" />
      </>
    );
  return (
    <ul className="inbox" aria-label="Approval requests">
      {items.map((it) => (
        <InboxRow
          key={it.id}
          item={it}
          row={it.row}
          selected={it.id === selectedId}
          tabbable={it.id === selectedId || (!selected && it === items[0])}
          now={props.now}
          viewerId={props.viewerId}
          register={(el) => props.register(it.id, el)}
          onFocus={() => props.onSelect(it.id)}
        >
          {props.below(it.id)}
        </InboxRow>
      ))}
    </ul>
  );
}
