import { lazy, type ComponentType } from 'react';

// A page in its own chunk, fetched the first time it is shown (App.tsx wraps pages in
// Suspense, so "Loading…" shows meanwhile). A chunk that cannot be fetched (offline, or a new
// build replaced it on the server) shows a note with a reload link instead of a blank console.

function PageUnavailable() {
  return (
    <p className="error" role="alert">
      This page could not be loaded. <a href={location.pathname + location.search}>Reload</a>
    </p>
  );
}

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>) {
  return lazy(async () => {
    try {
      return { default: await load() };
    } catch {
      return { default: PageUnavailable as ComponentType<P> };
    }
  });
}
