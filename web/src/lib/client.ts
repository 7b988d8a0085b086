import { cacheExchange, type Cache } from '@urql/exchange-graphcache';
import { createClient as createWsClient } from 'graphql-ws';
import { Client, fetchExchange, subscriptionExchange } from 'urql';
import { approvalFreshnessExchange } from './approval-freshness';

// urql with a normalized cache (graphcache) and subscriptions over graphql-ws on the same
// origin. The session is the HTTP-only cookie: fetches send it (same-origin) plus the CSRF
// header; the WebSocket upgrade carries it as well. After a dropped socket graphql-ws
// reconnects; onReconnect listeners then re-fetch what they show (catch-up).

export const CSRF_HEADER = 'x-taskbay-csrf';

type Listener = (state: 'connected' | 'reconnected' | 'closed') => void;
const listeners = new Set<Listener>();
export function onConnection(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

// A connection after a drop is a reconnect even when the drop came before the first
// acknowledgement: what happened meanwhile must be caught up either way.
let everConnected = false;
let dropped = false;
export const ws = createWsClient({
  url: () => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
  lazy: true,
  keepAlive: 10_000,
  retryAttempts: Number.POSITIVE_INFINITY,
  shouldRetry: () => true,
  // Back online (the browser says so): try at once rather than at the end of the back-off.
  retryWait: async (n) =>
    new Promise((r) => {
      const done = () => {
        clearTimeout(timer);
        removeEventListener('online', done);
        r();
      };
      const timer = setTimeout(done, Math.min(500 * 2 ** n, 5000));
      addEventListener('online', done);
    }),
  on: {
    connected: () => {
      const state = everConnected || dropped ? 'reconnected' : 'connected';
      everConnected = true;
      dropped = false;
      for (const l of listeners) l(state);
    },
    closed: (event) => {
      // 1000 is the lazy close when no subscription is left (page change), not a drop.
      if ((event as { code?: number } | undefined)?.code === 1000) return;
      dropped = true;
      for (const l of listeners) l('closed');
    },
  },
});

// Offline (the browser says so): a socket that looks open is not trusted to be; closing it makes
// the drop visible at once (the banner, disabled decisions), and its reconnect catches up.
addEventListener('offline', () => ws.terminate());

/** Drops every cached approvals / tasks list so active queries fetch them again. */
function invalidateField(cache: Cache, field: string) {
  for (const f of cache.inspectFields('Query')) if (f.fieldName === field) cache.invalidate('Query', f.fieldName, f.arguments ?? undefined);
}

// Types without an id are embedded in their parent.
const embedded = () => null;
const keys = Object.fromEntries(
  [
    'Actor',
    'AgentSkill',
    'ApiTokenResult',
    'ApprovalConnection',
    'ApprovalEdge',
    'ApprovalRevision',
    'ApprovalSuperseded',
    'AuditChainStatus',
    'AuditEvent',
    'CardSnapshot',
    'Execution',
    'McpCallRule',
    'McpHeldCall',
    'PageInfo',
    'TaskConnection',
    'TaskEdge',
    'TaskMessage',
    'TaskStatusChange',
    'WaitingTask',
  ].map((t) => [t, embedded]),
);

export function createClient(): Client {
  return new Client({
    url: '/graphql',
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ credentials: 'same-origin', headers: { [CSRF_HEADER]: '1' } }),
    exchanges: [
      cacheExchange({
        keys,
        updates: {
          Subscription: {
            approvalRequested: (_r, _a, cache) => invalidateField(cache, 'approvals'),
            approvalSuperseded: (_r, _a, cache) => invalidateField(cache, 'approvals'),
          },
          Mutation: {
            startTask: (_r, _a, cache) => invalidateField(cache, 'tasks'),
            registerAgent: (_r, _a, cache) => invalidateField(cache, 'agents'),
            registerAgUiAgent: (_r, _a, cache) => invalidateField(cache, 'agents'),
            createUser: (_r, _a, cache) => invalidateField(cache, 'users'),
          },
        },
      }),
      approvalFreshnessExchange(),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }),
          };
        },
      }),
    ],
  });
}
