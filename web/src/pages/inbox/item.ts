import { graphql, getFragmentData, type FragmentType } from '../../gql';
import type { InboxRowFields } from './InboxRow';

// What the inbox itself reads of a request (filter, order, selection, quick decisions: the
// action of exactly the revision and digest a confirmation names, and why the viewer cannot
// decide it, asked before the ritual). The row
// reads its own fragment, spread beside this one: a fragment nested in another costs a level more
// in the GraphQL cost estimate (TASKBAY_GRAPHQL_MAX_COST), and the inbox asks for 100 rows.
export const InboxItem = graphql(`
  fragment InboxItem on Approval {
    id
    version
    title
    risk
    status
    createdAt
    expiresAt
    revision
    digest
    action
    viewerCannotDecide
    agent {
      id
      name
      kind
    }
  }
`);

/** What the inbox keeps of a request: its own fields, and the row's fragment to render it with. */
export const itemOf = (node: FragmentType<typeof InboxItem> & FragmentType<typeof InboxRowFields>) => ({ ...getFragmentData(InboxItem, node), row: node });
export type Item = ReturnType<typeof itemOf>;
