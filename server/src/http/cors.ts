import type { Plugin } from 'graphql-yoga';
import { CSRF_HEADER } from './console.js';

// Cross-origin access to /graphql. None by default: the console is served from the same
// origin, and API clients (the CLI, agents' tooling) are not browsers. With
// TASKBAY_CORS_ORIGINS, exactly those origins get CORS with credentials; any other Origin gets
// no CORS headers at all (never a reflected Origin, never "null"). The CSRF header check and
// the WebSocket same-origin rule for cookie sessions stay as they are.

type CorsDecision = false | { origin: string[]; credentials: true; methods: string[]; allowedHeaders: string[]; maxAge: number };

/** createYoga options: `cors` and a plugin that marks responses as varying by Origin. */
export function corsYogaOptions(origins: readonly string[]): { cors: false | ((request: Request) => CorsDecision); plugins: Plugin[] } {
  if (!origins.length) return { cors: false, plugins: [] };
  const allowed = new Set(origins);
  return {
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (!origin || !allowed.has(origin)) return false;
      return {
        origin: [origin],
        credentials: true,
        methods: ['GET', 'POST'],
        allowedHeaders: ['content-type', 'authorization', CSRF_HEADER],
        maxAge: 600,
      };
    },
    plugins: [
      {
        onResponse({ response }) {
          response.headers.append('vary', 'Origin');
        },
      },
    ],
  };
}
