import type { FieldNode, FragmentDefinitionNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';

// What a list's caller selected on its items, fragments and inline fragments included, so the
// list can read the rows those fields need in one batch before it answers (the inbox: docs/PERFORMANCE.md).
// A field under @skip/@include counts as selected: reading a batch too many costs a statement,
// one too few only the promise-per-row path the fields fall back to.

function collect(set: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>, into: FieldNode[], seen: Set<string>) {
  for (const s of set?.selections ?? []) {
    if (s.kind === 'Field') into.push(s);
    else if (s.kind === 'InlineFragment') collect(s.selectionSet, fragments, into, seen);
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      collect(fragments[s.name.value]?.selectionSet, fragments, into, seen);
    }
  }
}

/** The field names selected at `path` below the field being resolved (e.g. ['edges', 'node']). */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[]): Set<string> {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path) {
    const next: FieldNode[] = [];
    for (const f of level) collect(f.selectionSet, info.fragments, next, new Set());
    level = next.filter((f) => f.name.value === name);
  }
  const names: FieldNode[] = [];
  for (const f of level) collect(f.selectionSet, info.fragments, names, new Set());
  return new Set(names.map((f) => f.name.value));
}
