import { type Client, type Exchange, makeOperation, type Operation, type OperationResult } from 'urql';
import { pipe, tap } from 'wonka';

// Answers about one request can reach the console out of order. A decision's answer (HTTP) is
// read right after the decision committed, while the delivery it started may already have been
// recorded and pushed (approvalChanged, WebSocket) before that answer arrives; an inbox list read
// just before another reviewer's decision may arrive after that decision was pushed. graphcache
// writes whatever arrives last, so the console would keep the older view. Two versions tell which
// answer is newer, each compared only with itself:
// - `version`: the request's row (status, revision, assignee, risk...), read with the row; the
//   database adds one with every change (approval version migration);
// - the seq of the request's last audit event (`events`, which the approval page selects
//   everywhere): every change the page shows is such an event (delivery, votes, evidence...).
// A result from the server older than one already seen in either is let through, then every
// active query that showed that request is asked again from the network. That answer is read
// after the newer change committed, so it is at least as new, and replaces the older view.

export interface ApprovalVersions {
  row?: number;
  events?: number;
}

/** The versions of each request (by id) anywhere in a result. */
export function approvalVersions(data: unknown): Map<string, ApprovalVersions> {
  const found = new Map<string, ApprovalVersions>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (o.__typename === 'Approval' && typeof o.id === 'string') {
      const seen = found.get(o.id) ?? {};
      if (typeof o.version === 'number') seen.row = Math.max(o.version, seen.row ?? -1);
      if (Array.isArray(o.events)) {
        for (const e of o.events as { seq?: unknown }[]) if (typeof e?.seq === 'number') seen.events = Math.max(e.seq, seen.events ?? -1);
      }
      if (seen.row !== undefined || seen.events !== undefined) found.set(o.id, seen);
    }
    for (const x of Object.values(o)) walk(x);
  };
  walk(data);
  return found;
}

/** Whether `v` is older than `seen` in either version (a version missing on either side says nothing). */
export const isOlder = (v: ApprovalVersions, seen: ApprovalVersions): boolean =>
  (v.row !== undefined && seen.row !== undefined && v.row < seen.row) || (v.events !== undefined && seen.events !== undefined && v.events < seen.events);

const newer = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/**
 * Placed between the cache and the transports, so it sees what the server answered. Re-asks
 * (network-only) the active queries that showed a request whenever an answer about it arrives
 * older than one already seen.
 */
export function approvalFreshnessExchange(): Exchange {
  return ({ client, forward }) =>
    (operations$) => {
      const newest = new Map<string, ApprovalVersions>();
      /** Active queries by key, and the requests each one's last answer showed. */
      const queries = new Map<number, { operation: Operation; approvals: Set<string> }>();

      const onResult = (result: OperationResult) => {
        const { operation } = result;
        const versions = approvalVersions(result.data);
        const query = operation.kind === 'query' ? queries.get(operation.key) : undefined;
        if (query) query.approvals = new Set(versions.keys());
        for (const [id, v] of versions) {
          const seen = newest.get(id) ?? {};
          newest.set(id, { row: newer(v.row, seen.row), events: newer(v.events, seen.events) });
          if (isOlder(v, seen)) askAgain(client, queries, id);
        }
      };

      const ops$ = pipe(
        operations$,
        tap((operation: Operation) => {
          if (operation.kind === 'teardown') queries.delete(operation.key);
          else if (operation.kind === 'query') queries.set(operation.key, { operation, approvals: queries.get(operation.key)?.approvals ?? new Set() });
        }),
      );
      return pipe(forward(ops$), tap(onResult));
    };
}

function askAgain(client: Client, queries: Map<number, { operation: Operation; approvals: Set<string> }>, approvalId: string) {
  for (const { operation, approvals } of queries.values()) {
    if (!approvals.has(approvalId)) continue;
    // After this answer is written (the cache writes it first; it is on its way there now).
    queueMicrotask(() => client.reexecuteOperation(makeOperation('query', operation, { ...operation.context, requestPolicy: 'network-only' })));
  }
}
