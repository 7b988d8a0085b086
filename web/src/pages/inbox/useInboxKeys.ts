import { useEffect } from 'react';
import { needsDeliberateStep, rejectNeedsReason } from '../../lib/risk';
import type { Item } from './item';
import type { Confirming } from './useQuickDecision';

// The inbox's keys: j/k move the selection, Enter opens the selected request, a/r ask to approve
// or reject it; with a confirmation open, Escape or n closes it and y confirms when nothing more
// is asked for. Not while typing in a field, nor with a modifier (the browser's shortcuts).

export function useInboxKeys(opts: {
  /** The list as shown (filtered, in order). */
  items: Item[];
  selected: Item | null;
  select: (id: string) => void;
  confirm: Confirming | null;
  openConfirm: (kind: Confirming['kind'], item: Item) => void;
  closeConfirm: () => void;
  decide: () => void;
  open: (item: Item) => void;
}) {
  // Re-attached on every render, so the handler always reads this render's list and selection.
  useEffect(() => {
    const { items, selected, confirm } = opts;
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if (confirm) {
        // The dialog handles its own keys; y confirms when nothing more is asked for.
        if (e.key === 'Escape' || e.key === 'n') opts.closeConfirm();
        else if (e.key === 'y' && !needsDeliberateStep(confirm.risk) && !(confirm.kind === 'reject' && rejectNeedsReason(confirm.risk))) {
          e.preventDefault();
          opts.decide();
        }
        return;
      }
      const index = selected ? items.indexOf(selected) : -1;
      const move = (d: number) => {
        e.preventDefault();
        if (!items.length) return;
        const next = items[index === -1 ? (d > 0 ? 0 : items.length - 1) : Math.max(0, Math.min(items.length - 1, index + d))]!;
        opts.select(next.id);
      };
      if (e.key === 'j') move(1);
      else if (e.key === 'k') move(-1);
      else if (e.key === 'Enter' && selected) opts.open(selected);
      else if ((e.key === 'a' || e.key === 'r') && selected && selected.status === 'PENDING') {
        e.preventDefault();
        opts.openConfirm(e.key === 'a' ? 'approve' : 'reject', selected);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  });
}
