import { useSyncExternalStore } from 'react';
import { onConnection } from './client';

// Whether the console can decide now: the browser is online and the live connection (graphql-ws)
// is not known to be down. While it is down the banner says so, decisions are disabled (their
// answer could not arrive, and the view could be stale), and the reconnect catches up
// (useInboxItems, the approval page).

export type Link = 'up' | 'offline' | 'dropped';

let dropped = false;
const listeners = new Set<() => void>();
const emit = () => {
  for (const l of listeners) l();
};
onConnection((s) => {
  dropped = s === 'closed';
  emit();
});
addEventListener('online', emit);
addEventListener('offline', emit);

export function linkState(): Link {
  if (!navigator.onLine) return 'offline';
  return dropped ? 'dropped' : 'up';
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => {
    listeners.delete(l);
  };
};

/** The link as it is now, re-rendering on every change. */
export const useLink = (): Link => useSyncExternalStore(subscribe, linkState, () => 'up');

/** Why a decision cannot be made now for want of a connection, or null. */
export function linkReason(link: Link): string | null {
  if (link === 'offline') return 'You are offline: decisions are disabled until the connection is back.';
  if (link === 'dropped') return 'The live connection is down: decisions are disabled until it is back.';
  return null;
}
