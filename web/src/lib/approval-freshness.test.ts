import { type Client, gql, makeOperation, makeResult, type Operation, type OperationContext, type OperationResult } from 'urql';
import { describe, expect, it } from 'vitest';
import { fromArray, fromValue, pipe, type Source, subscribe } from 'wonka';
import { approvalFreshnessExchange, approvalVersions } from './approval-freshness';

// The order of answers about one request (approval-freshness.ts): an answer older than one
// already seen, by the row's `version` or by the seq of its last event, makes every active query
// that showed that request ask again from the network; newer and equal answers change nothing.
// The exchange is fed operations and answers directly; the browser run is console.e2e.ts.

const DOCUMENT = gql`
  {
    __typename
  }
`;
const CONTEXT = { url: '/graphql', requestPolicy: 'cache-and-network' } as OperationContext;
const op = (kind: 'query' | 'subscription' | 'mutation', key: number): Operation => makeOperation(kind, { key, query: DOCUMENT, variables: {} }, CONTEXT);
const approval = (id: string, v: { version?: number; seqs?: number[] }) => ({
  __typename: 'Approval',
  id,
  ...(v.version !== undefined ? { version: v.version } : {}),
  ...(v.seqs ? { events: v.seqs.map((seq) => ({ __typename: 'AuditEvent', seq })) } : {}),
});

/** Runs the exchange on one active query and then the given answers; the operations it re-executed. */
async function run(answers: [Operation, unknown][]): Promise<Operation[]> {
  const reexecuted: Operation[] = [];
  const fakeClient = { reexecuteOperation: (o: Operation) => reexecuted.push(o) } as unknown as Client;
  // The transports: take the operations (the active query), answer with `answers` in order.
  const forward = (ops$: Source<Operation>) => {
    pipe(
      ops$,
      subscribe(() => {}),
    );
    return fromArray(answers.map(([o, data]) => makeResult(o, { data: data as object })));
  };
  const exchange = approvalFreshnessExchange()({ client: fakeClient, forward, dispatchDebug: () => {} });
  const results: OperationResult[] = [];
  pipe(
    exchange(fromValue(answers[0]![0])),
    subscribe((r) => results.push(r)),
  );
  await new Promise((r) => queueMicrotask(() => r(null)));
  expect(results).toHaveLength(answers.length); // every answer is let through
  return reexecuted;
}

describe('approvalVersions', () => {
  it('finds each request anywhere in an answer, with its row version and its last event', () => {
    const data = { approvals: { edges: [{ node: approval('a', { version: 3 }) }, { node: approval('b', { seqs: [4, 9, 7] }) }] }, x: approval('c', {}) };
    expect([...approvalVersions(data)]).toEqual([
      ['a', { row: 3 }],
      ['b', { events: 9 }],
    ]);
  });
});

describe('approvalFreshnessExchange', () => {
  const list = op('query', 1);
  const live = op('subscription', 2);
  const answer = op('mutation', 3);

  it('a list older by row version than a pushed change: the list is asked again, network-only', async () => {
    const again = await run([
      [list, { approvals: [approval('a', { version: 1 })] }],
      [live, { approvalChanged: approval('a', { version: 2 }) }],
      [list, { approvals: [approval('a', { version: 1 })] }],
    ]);
    expect(again.map((o) => [o.key, o.kind, o.context.requestPolicy])).toEqual([[1, 'query', 'network-only']]);
  });

  it("a decision's answer older by events than the delivery pushed before it: the page's query is asked again", async () => {
    const again = await run([
      [list, { approval: approval('a', { version: 2, seqs: [10, 11] }) }],
      [live, { approvalChanged: approval('a', { version: 2, seqs: [10, 11, 12, 14] }) }],
      [answer, { approve: { approval: approval('a', { version: 2, seqs: [10, 11, 12] }) } }],
    ]);
    expect(again.map((o) => o.key)).toEqual([1]);
  });

  it('newer or equal answers, and answers about other requests, ask nothing again', async () => {
    const again = await run([
      [list, { approvals: [approval('a', { version: 1, seqs: [1] }), approval('b', { version: 5 })] }],
      [live, { approvalChanged: approval('a', { version: 2, seqs: [1, 2] }) }],
      [answer, { approve: { approval: approval('a', { version: 2, seqs: [1, 2] }) } }],
      [live, { approvalChanged: approval('c', { version: 1 }) }],
      [list, { approvals: [approval('a', { version: 3, seqs: [1, 2, 3] }), approval('b', { version: 5 })] }],
    ]);
    expect(again).toEqual([]);
  });
});
