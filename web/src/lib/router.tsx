import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes, type ReactNode } from 'react';

// A tiny history router: the path is the state. Links are same-origin app paths only.
// `replace` rewrites the current entry (a page's filters and selection, so back restores them);
// `navigate` adds one. After a navigation (and back or forward) the focus goes to the new page's
// heading, unless the page put it somewhere itself: it never stays on the body or on a link of
// the page that left.

type Nav = { path: string; navigate: (to: string) => void; replace: (to: string) => void };
const Ctx = createContext<Nav>({ path: '/', navigate: () => {}, replace: () => {} });

const appPath = (to: string) => to.startsWith('/') && !to.startsWith('//');

let stopWatching: (() => void) | null = null;

/** Once the next page's main heading is there, focus it unless the page focused something of its own. */
function focusNextHeading() {
  stopWatching?.();
  const old = document.querySelector('main h1');
  const tryFocus = () => {
    const h = document.querySelector<HTMLElement>('main h1');
    if (!h || h === old) return false;
    const active = document.activeElement;
    const main = document.querySelector('main');
    // The page's own choice (a selected row, a field) stands.
    if (active && active !== document.body && main?.contains(active) && active.isConnected) return true;
    if (!h.hasAttribute('tabindex')) h.tabIndex = -1;
    h.focus({ preventScroll: true });
    return true;
  };
  const observer = new MutationObserver(() => {
    if (tryFocus()) stop();
  });
  // A page that never shows a heading (not found) leaves the watch to the next navigation or this bound.
  const bound = setTimeout(() => stop(), 10_000);
  const stop = () => {
    observer.disconnect();
    clearTimeout(bound);
    stopWatching = null;
  };
  stopWatching = stop;
  observer.observe(document.body, { childList: true, subtree: true });
}

export function Router({ children }: { children: ReactNode }) {
  const [path, setPath] = useState(() => location.pathname + location.search);
  useEffect(() => {
    const on = () => {
      focusNextHeading();
      setPath(location.pathname + location.search);
    };
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const navigate = (to: string) => {
    if (!appPath(to)) return;
    history.pushState(null, '', to);
    focusNextHeading();
    setPath(to);
    scrollTo(0, 0);
  };
  const replace = (to: string) => {
    if (!appPath(to) || to === location.pathname + location.search) return;
    history.replaceState(null, '', to);
    setPath(to);
  };
  return <Ctx.Provider value={{ path, navigate, replace }}>{children}</Ctx.Provider>;
}

export const useRouter = () => useContext(Ctx);

export function Link({ to, children, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { navigate } = useRouter();
  return (
    <a
      href={to}
      {...rest}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
