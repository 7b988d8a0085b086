import { useLink } from '../lib/connection';

/** Above every page while the connection is down: what it means for the reviewer, and that it catches up. */
export function ConnectionBanner() {
  const link = useLink();
  if (link === 'up') return null;
  return (
    <div className="banner warn" role="status" data-testid="connection-banner">
      {link === 'offline'
        ? 'You are offline. Live updates disconnected; decisions are disabled until the connection is back, then the page catches up.'
        : 'Live updates disconnected; reconnecting… Decisions are disabled until the connection is back, then the page catches up.'}
    </div>
  );
}
