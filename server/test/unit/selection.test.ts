import { buildSchema, graphql, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { selectedFields } from '../../src/graphql/selection.js';

// graphql/selection.ts: what a list's caller selected on its items decides what the list reads in
// one batch before answering (approvals/graphql.ts prefetchShown). Fragments the console uses
// (named, inline, nested in each other) must count; fields of other levels must not.

const schema = buildSchema(`
  type User { id: ID! name: String! }
  type Item { id: ID! title: String! requester: User agent: User }
  type Edge { cursor: String! node: Item! }
  type Page { edges: [Edge!]! nodes: [Item!]! }
  type Query { page: Page! }
`);

async function seen(query: string, path: string[]): Promise<string[]> {
  let info: GraphQLResolveInfo | null = null;
  const result = await graphql({
    schema,
    source: query,
    rootValue: {
      page: (_a: unknown, _c: unknown, i: GraphQLResolveInfo) => {
        info = i;
        return { edges: [], nodes: [] };
      },
    },
  });
  expect(result.errors).toBeUndefined();
  return [...selectedFields(info!, path)].sort();
}

describe('selectedFields', () => {
  it('names the fields selected on the items, directly and through fragments', async () => {
    expect(await seen('{ page { edges { cursor node { id requester { name } } } } }', ['edges', 'node'])).toEqual(['id', 'requester']);
    const withFragments = `
      query { page { edges { ...E } } }
      fragment E on Edge { node { ...Row ... on Item { agent { id } } } }
      fragment Row on Item { title ...More }
      fragment More on Item { requester { id } }`;
    expect(await seen(withFragments, ['edges', 'node'])).toEqual(['agent', 'requester', 'title']);
    expect(await seen('{ page { nodes { title } edges { node { id } } } }', ['nodes'])).toEqual(['title']);
  });

  it('names nothing the caller did not select there', async () => {
    expect(await seen('{ page { edges { cursor } } }', ['edges', 'node'])).toEqual([]);
    expect(await seen('{ page { nodes { requester { name } } } }', ['edges', 'node'])).toEqual([]);
  });
});
