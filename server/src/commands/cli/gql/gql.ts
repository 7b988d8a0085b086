/* eslint-disable */
import * as types from './graphql.js';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment CliApprovalFields on Approval {\n    id\n    status\n    source\n    title\n    summary\n    risk\n    revision\n    digest\n    action\n    createdAt\n    expiresAt\n    requester {\n      email\n    }\n    decisions {\n      outcome\n      reviewer {\n        email\n      }\n      comment\n      decidedAt\n    }\n    command {\n      approvalId\n      kind\n      agentId\n      commands\n      status\n      fingerprint\n      grant {\n        status\n        expiresAt\n        consumedAt\n      }\n    }\n    events {\n      seq\n      type\n      actorType\n      at\n    }\n  }\n": typeof types.CliApprovalFieldsFragmentDoc,
    "\n  query CliCommandApproval($id: String!) {\n    commandApproval(approvalId: $id) {\n      approval {\n        ...CliApprovalFields\n      }\n    }\n  }\n": typeof types.CliCommandApprovalDocument,
    "\n  query CliApproval($id: ID!) {\n    approval(id: $id) {\n      ...CliApprovalFields\n    }\n  }\n": typeof types.CliApprovalDocument,
    "\n  query CliApprovals($status: [ApprovalStatus!], $first: Int) {\n    approvals(status: $status, first: $first) {\n      edges {\n        node {\n          ...CliApprovalFields\n        }\n      }\n    }\n  }\n": typeof types.CliApprovalsDocument,
    "\n    mutation CliApprove($id: ID!, $revision: Int!, $digest: String!, $comment: String) {\n      decision: approve(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {\n        id\n        outcome\n        revision\n        digest\n      }\n    }\n  ": typeof types.CliApproveDocument,
    "\n    mutation CliReject($id: ID!, $revision: Int!, $digest: String!, $comment: String) {\n      decision: reject(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {\n        id\n        outcome\n        revision\n        digest\n      }\n    }\n  ": typeof types.CliRejectDocument,
    "\n  subscription CliApprovalDecided($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      status\n    }\n  }\n": typeof types.CliApprovalDecidedDocument,
};
const documents: Documents = {
    "\n  fragment CliApprovalFields on Approval {\n    id\n    status\n    source\n    title\n    summary\n    risk\n    revision\n    digest\n    action\n    createdAt\n    expiresAt\n    requester {\n      email\n    }\n    decisions {\n      outcome\n      reviewer {\n        email\n      }\n      comment\n      decidedAt\n    }\n    command {\n      approvalId\n      kind\n      agentId\n      commands\n      status\n      fingerprint\n      grant {\n        status\n        expiresAt\n        consumedAt\n      }\n    }\n    events {\n      seq\n      type\n      actorType\n      at\n    }\n  }\n": types.CliApprovalFieldsFragmentDoc,
    "\n  query CliCommandApproval($id: String!) {\n    commandApproval(approvalId: $id) {\n      approval {\n        ...CliApprovalFields\n      }\n    }\n  }\n": types.CliCommandApprovalDocument,
    "\n  query CliApproval($id: ID!) {\n    approval(id: $id) {\n      ...CliApprovalFields\n    }\n  }\n": types.CliApprovalDocument,
    "\n  query CliApprovals($status: [ApprovalStatus!], $first: Int) {\n    approvals(status: $status, first: $first) {\n      edges {\n        node {\n          ...CliApprovalFields\n        }\n      }\n    }\n  }\n": types.CliApprovalsDocument,
    "\n    mutation CliApprove($id: ID!, $revision: Int!, $digest: String!, $comment: String) {\n      decision: approve(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {\n        id\n        outcome\n        revision\n        digest\n      }\n    }\n  ": types.CliApproveDocument,
    "\n    mutation CliReject($id: ID!, $revision: Int!, $digest: String!, $comment: String) {\n      decision: reject(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {\n        id\n        outcome\n        revision\n        digest\n      }\n    }\n  ": types.CliRejectDocument,
    "\n  subscription CliApprovalDecided($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      status\n    }\n  }\n": types.CliApprovalDecidedDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CliApprovalFields on Approval {\n    id\n    status\n    source\n    title\n    summary\n    risk\n    revision\n    digest\n    action\n    createdAt\n    expiresAt\n    requester {\n      email\n    }\n    decisions {\n      outcome\n      reviewer {\n        email\n      }\n      comment\n      decidedAt\n    }\n    command {\n      approvalId\n      kind\n      agentId\n      commands\n      status\n      fingerprint\n      grant {\n        status\n        expiresAt\n        consumedAt\n      }\n    }\n    events {\n      seq\n      type\n      actorType\n      at\n    }\n  }\n"): typeof import('./graphql.js').CliApprovalFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CliCommandApproval($id: String!) {\n    commandApproval(approvalId: $id) {\n      approval {\n        ...CliApprovalFields\n      }\n    }\n  }\n"): typeof import('./graphql.js').CliCommandApprovalDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CliApproval($id: ID!) {\n    approval(id: $id) {\n      ...CliApprovalFields\n    }\n  }\n"): typeof import('./graphql.js').CliApprovalDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CliApprovals($status: [ApprovalStatus!], $first: Int) {\n    approvals(status: $status, first: $first) {\n      edges {\n        node {\n          ...CliApprovalFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.js').CliApprovalsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation CliApprove($id: ID!, $revision: Int!, $digest: String!, $comment: String) {\n      decision: approve(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {\n        id\n        outcome\n        revision\n        digest\n      }\n    }\n  "): typeof import('./graphql.js').CliApproveDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation CliReject($id: ID!, $revision: Int!, $digest: String!, $comment: String) {\n      decision: reject(input: { approvalId: $id, revision: $revision, digest: $digest, comment: $comment }) {\n        id\n        outcome\n        revision\n        digest\n      }\n    }\n  "): typeof import('./graphql.js').CliRejectDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription CliApprovalDecided($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      status\n    }\n  }\n"): typeof import('./graphql.js').CliApprovalDecidedDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
