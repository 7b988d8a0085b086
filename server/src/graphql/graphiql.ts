import { createHash } from 'node:crypto';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

// GraphiQL from the installed @graphql-yoga/render-graphiql (everything inline in one page, no
// CDN), under a Content-Security-Policy that allows exactly the page's own inline script (by
// hash), the editor's workers (blob: URLs the script makes) and requests to this origin. Off
// unless configured (TASKBAY_GRAPHIQL=1): the API needs no browser page of its own.

const OPTIONS: GraphiQLOptions = { title: 'Taskbay GraphiQL', subscriptionsProtocol: 'WS' };

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The policy for a rendered page: its inline scripts by hash, nothing else executable. */
export function graphiqlCsp(html: string): string {
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => sha256(m[1]!));
  return [
    "default-src 'none'",
    `script-src ${scripts.join(' ')}`,
    // Monaco creates its editor and language workers from blob: URLs of inline sources.
    'worker-src blob:',
    // The page's <style> plus the style elements and attributes the editor adds at run time
    // (hashes cannot allow style attributes); its fonts and icons are data: URLs.
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    // HTTP and WebSocket requests to this origin ('self' covers ws: and wss: of the same host).
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

let page: { html: string; csp: string } | null = null;

/** The rendered page and its policy (the same for every request: computed once). */
function graphiqlPage(): { html: string; csp: string } {
  if (!page) {
    const html = renderGraphiQL(OPTIONS);
    page = { html, csp: graphiqlCsp(html) };
  }
  return page;
}

/** createYoga options for GraphiQL: off, or the local page with its policy. */
export function graphiqlYogaOptions(enabled: boolean): { graphiql: false | GraphiQLOptions; renderGraphiQL?: () => string; plugins: Plugin[] } {
  if (!enabled) return { graphiql: false, plugins: [] };
  return {
    graphiql: OPTIONS,
    renderGraphiQL: () => graphiqlPage().html,
    plugins: [
      {
        onResponse({ response }) {
          if (!response.headers.get('content-type')?.startsWith('text/html')) return;
          response.headers.set('content-security-policy', graphiqlPage().csp);
          response.headers.set('x-content-type-options', 'nosniff');
          response.headers.set('referrer-policy', 'no-referrer');
          response.headers.set('x-frame-options', 'DENY');
          response.headers.set('cache-control', 'no-cache');
        },
      },
    ],
  };
}
