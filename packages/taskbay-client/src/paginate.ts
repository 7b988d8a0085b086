import { TaskbayError } from './errors.js';

// Relay pagination (the contract's connections: edges { node cursor }, pageInfo).

/** A Relay connection page, as the contract's connections answer. */
export interface Connection<N> {
  edges: ReadonlyArray<{ node: N; cursor?: string }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** The node type of a connection type. */
export type NodeOf<C> = C extends { edges: ReadonlyArray<{ node: infer N }> } ? N : never;

/**
 * Every node of a connection, page after page: `fetchPage(after)` is asked for the first page
 * with `after` null, then with the previous page's endCursor while hasNextPage. Pages are fetched
 * as the iteration reaches them; `break` stops fetching.
 */
export async function* paginate<N>(fetchPage: (after: string | null) => Promise<Connection<N>>): AsyncGenerator<N, void, undefined> {
  let after: string | null = null;
  for (;;) {
    const page: Connection<N> = await fetchPage(after);
    for (const edge of page.edges) yield edge.node;
    if (!page.pageInfo.hasNextPage) return;
    if (!page.pageInfo.endCursor || page.pageInfo.endCursor === after) {
      throw new TaskbayError('INTERNAL_SERVER_ERROR', 'the connection says it has a next page but gave no new endCursor');
    }
    after = page.pageInfo.endCursor;
  }
}
