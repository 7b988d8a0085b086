import { type Client, type Exchange, makeOperation, type Operation, type OperationResult } from 'urql';
import { pipe, tap } from 'wonka';

// Answers about one approval can reach the console out of order. A decision's answer (HTTP) is
// read right after the decision committed, while the delivery it started may already have been
// recorded and pushed (approvalChanged, WebSocket) before that answer arrives; graphcache writes
// whatever arrives last, so the page would keep the older view. An approval's version is the seq
// of its own stream's last event (`events`, which the approval page's fragments select
// everywhere): every change the page shows is such an event. A result from the server carrying an
// older version than one already seen is let through, then every active query that showed that
// approval is asked again from the network. That answer is read after the newer event committed,
// so it is at least as new, and it replaces the older view in the cache.

/** The version of each approval (with its `events`) anywhere in a result. */
export function approvalVersions(data: unknown): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (o.__typename === 'Approval' && typeof o.id === 'string' && Array.isArray(o.events)) {
      let version = -1;
      for (const e of o.events as { seq?: unknown }[]) if (typeof e?.seq === 'number' && e.seq > version) version = e.seq;
      if (version >= 0) found.set(o.id, Math.max(version, found.get(o.id) ?? -1));
    }
    for (const x of Object.values(o)) walk(x);
  };
  walk(data);
  return found;
}

/**
 * Placed between the cache and the transports, so it sees what the server answered. Re-asks
 * (network-only) the active queries that showed an approval whenever an answer about it
 * arrives older than one already seen.
 */
export function approvalFreshnessExchange(): Exchange {
  return ({ client, forward }) =>
    (operations$) => {
      const newest = new Map<string, number>();
      /** Active queries by key, and the approvals each one's last answer showed. */
      const queries = new Map<number, { operation: Operation; approvals: Set<string> }>();

      const onResult = (result: OperationResult) => {
        const { operation } = result;
        const versions = approvalVersions(result.data);
        if (operation.kind === 'query' && queries.has(operation.key)) queries.get(operation.key)!.approvals = new Set(versions.keys());
        for (const [id, version] of versions) {
          const seen = newest.get(id) ?? -1;
          if (version >= seen) newest.set(id, version);
          else askAgain(client, queries, id);
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
