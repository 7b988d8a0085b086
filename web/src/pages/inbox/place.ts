import { SORTS, type SortKey } from '../../lib/risk';
import type { Filters } from './InboxFilters';

// The reviewer's place in the inbox: filters, order and selection live in its URL
// (?status=&agent=&risk=&mine=1&sort=&sel=), so back, a reload or a shared link restores them;
// the defaults are left out. The last inbox URL and its order are kept for the approval page
// (its "← Inbox" link and j/k, which walk the same list).

export const DEFAULT_FILTERS: Filters = { status: 'PENDING', agentId: '', risk: '', mine: false, sort: 'urgency' };

export type Place = Filters & { sel: string | null };

export function readPlace(search: string): Place {
  const q = new URLSearchParams(search);
  const sort = q.get('sort');
  return {
    // An empty status is "any": kept in the URL as status= so it is not read as the default.
    status: q.has('status') ? (q.get('status') ?? '') : DEFAULT_FILTERS.status,
    agentId: q.get('agent') ?? '',
    risk: q.get('risk') ?? '',
    mine: q.get('mine') === '1',
    sort: sort && sort in SORTS ? (sort as SortKey) : DEFAULT_FILTERS.sort,
    sel: q.get('sel') || null,
  };
}

export function placePath(p: Place): string {
  const q = new URLSearchParams();
  if (p.status !== DEFAULT_FILTERS.status) q.set('status', p.status);
  if (p.agentId) q.set('agent', p.agentId);
  if (p.risk) q.set('risk', p.risk);
  if (p.mine) q.set('mine', '1');
  if (p.sort !== DEFAULT_FILTERS.sort) q.set('sort', p.sort);
  if (p.sel) q.set('sel', p.sel);
  const s = q.toString();
  return s ? `/?${s}` : '/';
}

let last: { path: string; ids: string[] } = { path: '/', ids: [] };

/** The inbox as last shown: its URL and its requests in order. */
export function rememberInbox(path: string, ids: string[]) {
  last = { path, ids };
}

/** The inbox URL to go back to, selecting `sel` when given (the request the reviewer is on). */
export function inboxPath(sel?: string): string {
  if (!sel) return last.path;
  const [, search = ''] = last.path.split('?');
  return placePath({ ...readPlace(search), sel });
}

/** The request `step` places from `id` in the inbox as last shown, or null. */
export function besideInInbox(id: string, step: 1 | -1): string | null {
  const i = last.ids.indexOf(id);
  if (i === -1) return null;
  return last.ids[i + step] ?? null;
}
