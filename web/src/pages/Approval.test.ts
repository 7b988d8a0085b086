import { type DocumentNode, type FragmentDefinitionNode, Kind, type SelectionSetNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  ApprovalLiveDocument,
  ApprovalPageDocument,
  ApprovalViewFragmentDoc,
  ApproveDocument,
  DelegateDocument,
  EditAndApproveDocument,
  RejectDocument,
  RequestChangesDocument,
} from '../gql/graphql';

// The approval page reads a request through one selection (ApprovalView): its query, its live
// subscription and every decision's answer must read exactly the same fields of it, so that
// none of them leaves a panel without what it shows. Compared on the generated documents, with
// every fragment spread expanded.

/** Every field path under `set`, fragments expanded ("decisions.reviewer.name"). */
function paths(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, prefix = ''): string[] {
  return set.selections.flatMap((s) => {
    if (s.kind === Kind.FRAGMENT_SPREAD) return paths(fragments.get(s.name.value)!.selectionSet, fragments, prefix);
    if (s.kind === Kind.INLINE_FRAGMENT) return paths(s.selectionSet, fragments, prefix);
    const path = `${prefix}${s.alias?.value ?? s.name.value}`;
    return s.selectionSet ? paths(s.selectionSet, fragments, `${path}.`) : [path];
  });
}

/** The fields a document reads of the object at `at` (root field first), as sorted unique paths. */
function readAt(doc: DocumentNode, at: string[]): string[] {
  const fragments = new Map(doc.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const operation = doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const all = operation ? paths(operation.selectionSet, fragments) : paths((doc.definitions[0] as FragmentDefinitionNode).selectionSet, fragments);
  const prefix = at.length ? `${at.join('.')}.` : '';
  return [...new Set(all.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length)))].sort();
}

describe('the approval page reads a request through one fragment', () => {
  const page = readAt(ApprovalViewFragmentDoc as DocumentNode, []);

  it('ApprovalView reads what the panels read', () => {
    expect(page).toEqual(expect.arrayContaining(['version', 'events.seq', 'events.actor.name', 'revisions.action', 'decisions.reviewer.name']));
  });

  it.each([
    ['the query', ApprovalPageDocument, ['approval']],
    ['the live subscription', ApprovalLiveDocument, ['approvalChanged']],
    ['approve', ApproveDocument, ['approve', 'approval']],
    ['reject', RejectDocument, ['reject', 'approval']],
    ['request changes', RequestChangesDocument, ['requestChanges', 'approval']],
    ['edit then approve', EditAndApproveDocument, ['editAndApprove', 'approval']],
    ['delegate', DelegateDocument, ['delegate', 'approval']],
  ] as const)('%s reads exactly those fields of the request', (_name, doc, at) => {
    expect(readAt(doc as DocumentNode, [...at])).toEqual(page);
  });
});
