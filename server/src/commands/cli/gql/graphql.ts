/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type ApprovalSource =
  | 'AGENT'
  | 'COMMAND'
  | 'USER';

export type ApprovalStatus =
  | 'APPROVED'
  | 'CHANGES_REQUESTED'
  | 'EXPIRED'
  | 'PENDING'
  | 'REJECTED'
  | 'SUPERSEDED';

export type DecisionOutcome =
  | 'APPROVE'
  | 'DELEGATE'
  | 'EDIT_AND_APPROVE'
  | 'REJECT'
  | 'REQUEST_CHANGES';

export type Risk =
  | 'CRITICAL'
  | 'HIGH'
  | 'LOW'
  | 'MEDIUM';

export type CliApprovalFieldsFragment = { id: string, status: ApprovalStatus, source: ApprovalSource, title: string, summary: string | null, risk: Risk, revision: number, digest: string, action: unknown, createdAt: string, expiresAt: string | null, requester: { email: string } | null, decisions: Array<{ outcome: DecisionOutcome, comment: string | null, decidedAt: string, reviewer: { email: string } }>, command: { approvalId: string, kind: string, agentId: string, commands: Array<string>, status: string, fingerprint: string, grant: { status: string, expiresAt: string, consumedAt: string | null } | null } | null, events: Array<{ seq: number, type: string, actorType: string, at: string }> };

export type CliCommandApprovalQueryVariables = Exact<{
  id: string;
}>;


export type CliCommandApprovalQuery = { commandApproval: { approval: { id: string, status: ApprovalStatus, source: ApprovalSource, title: string, summary: string | null, risk: Risk, revision: number, digest: string, action: unknown, createdAt: string, expiresAt: string | null, requester: { email: string } | null, decisions: Array<{ outcome: DecisionOutcome, comment: string | null, decidedAt: string, reviewer: { email: string } }>, command: { approvalId: string, kind: string, agentId: string, commands: Array<string>, status: string, fingerprint: string, grant: { status: string, expiresAt: string, consumedAt: string | null } | null } | null, events: Array<{ seq: number, type: string, actorType: string, at: string }> } } | null };

export type CliApprovalQueryVariables = Exact<{
  id: string | number;
}>;


export type CliApprovalQuery = { approval: { id: string, status: ApprovalStatus, source: ApprovalSource, title: string, summary: string | null, risk: Risk, revision: number, digest: string, action: unknown, createdAt: string, expiresAt: string | null, requester: { email: string } | null, decisions: Array<{ outcome: DecisionOutcome, comment: string | null, decidedAt: string, reviewer: { email: string } }>, command: { approvalId: string, kind: string, agentId: string, commands: Array<string>, status: string, fingerprint: string, grant: { status: string, expiresAt: string, consumedAt: string | null } | null } | null, events: Array<{ seq: number, type: string, actorType: string, at: string }> } | null };

export type CliApprovalsQueryVariables = Exact<{
  status?: Array<ApprovalStatus> | ApprovalStatus | null | undefined;
  first?: number | null | undefined;
}>;


export type CliApprovalsQuery = { approvals: { edges: Array<{ node: { id: string, status: ApprovalStatus, source: ApprovalSource, title: string, summary: string | null, risk: Risk, revision: number, digest: string, action: unknown, createdAt: string, expiresAt: string | null, requester: { email: string } | null, decisions: Array<{ outcome: DecisionOutcome, comment: string | null, decidedAt: string, reviewer: { email: string } }>, command: { approvalId: string, kind: string, agentId: string, commands: Array<string>, status: string, fingerprint: string, grant: { status: string, expiresAt: string, consumedAt: string | null } | null } | null, events: Array<{ seq: number, type: string, actorType: string, at: string }> } }> } };

export type CliApproveMutationVariables = Exact<{
  id: string | number;
  revision: number;
  digest: string;
  comment?: string | null | undefined;
}>;


export type CliApproveMutation = { decision: { id: string, outcome: DecisionOutcome, revision: number, digest: string } };

export type CliRejectMutationVariables = Exact<{
  id: string | number;
  revision: number;
  digest: string;
  comment?: string | null | undefined;
}>;


export type CliRejectMutation = { decision: { id: string, outcome: DecisionOutcome, revision: number, digest: string } };

export type CliApprovalDecidedSubscriptionVariables = Exact<{
  id: string | number;
}>;


export type CliApprovalDecidedSubscription = { approvalChanged: { id: string, status: ApprovalStatus } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const CliApprovalFieldsFragmentDoc = new TypedDocumentString(`
    fragment CliApprovalFields on Approval {
  id
  status
  source
  title
  summary
  risk
  revision
  digest
  action
  createdAt
  expiresAt
  requester {
    email
  }
  decisions {
    outcome
    reviewer {
      email
    }
    comment
    decidedAt
  }
  command {
    approvalId
    kind
    agentId
    commands
    status
    fingerprint
    grant {
      status
      expiresAt
      consumedAt
    }
  }
  events {
    seq
    type
    actorType
    at
  }
}
    `, {"fragmentName":"CliApprovalFields"}) as unknown as TypedDocumentString<CliApprovalFieldsFragment, unknown>;
export const CliCommandApprovalDocument = new TypedDocumentString(`
    query CliCommandApproval($id: String!) {
  commandApproval(approvalId: $id) {
    approval {
      ...CliApprovalFields
    }
  }
}
    fragment CliApprovalFields on Approval {
  id
  status
  source
  title
  summary
  risk
  revision
  digest
  action
  createdAt
  expiresAt
  requester {
    email
  }
  decisions {
    outcome
    reviewer {
      email
    }
    comment
    decidedAt
  }
  command {
    approvalId
    kind
    agentId
    commands
    status
    fingerprint
    grant {
      status
      expiresAt
      consumedAt
    }
  }
  events {
    seq
    type
    actorType
    at
  }
}`) as unknown as TypedDocumentString<CliCommandApprovalQuery, CliCommandApprovalQueryVariables>;
export const CliApprovalDocument = new TypedDocumentString(`
    query CliApproval($id: ID!) {
  approval(id: $id) {
    ...CliApprovalFields
  }
}
    fragment CliApprovalFields on Approval {
  id
  status
  source
  title
  summary
  risk
  revision
  digest
  action
  createdAt
  expiresAt
  requester {
    email
  }
  decisions {
    outcome
    reviewer {
      email
    }
    comment
    decidedAt
  }
  command {
    approvalId
    kind
    agentId
    commands
    status
    fingerprint
    grant {
      status
      expiresAt
      consumedAt
    }
  }
  events {
    seq
    type
    actorType
    at
  }
}`) as unknown as TypedDocumentString<CliApprovalQuery, CliApprovalQueryVariables>;
export const CliApprovalsDocument = new TypedDocumentString(`
    query CliApprovals($status: [ApprovalStatus!], $first: Int) {
  approvals(status: $status, first: $first) {
    edges {
      node {
        ...CliApprovalFields
      }
    }
  }
}
    fragment CliApprovalFields on Approval {
  id
  status
  source
  title
  summary
  risk
  revision
  digest
  action
  createdAt
  expiresAt
  requester {
    email
  }
  decisions {
    outcome
    reviewer {
      email
    }
    comment
    decidedAt
  }
  command {
    approvalId
    kind
    agentId
    commands
    status
    fingerprint
    grant {
      status
      expiresAt
      consumedAt
    }
  }
  events {
    seq
    type
    actorType
    at
  }
}`) as unknown as TypedDocumentString<CliApprovalsQuery, CliApprovalsQueryVariables>;
export const CliApproveDocument = new TypedDocumentString(`
    mutation CliApprove($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
  decision: approve(
    input: {approvalId: $id, revision: $revision, digest: $digest, comment: $comment}
  ) {
    id
    outcome
    revision
    digest
  }
}
    `) as unknown as TypedDocumentString<CliApproveMutation, CliApproveMutationVariables>;
export const CliRejectDocument = new TypedDocumentString(`
    mutation CliReject($id: ID!, $revision: Int!, $digest: String!, $comment: String) {
  decision: reject(
    input: {approvalId: $id, revision: $revision, digest: $digest, comment: $comment}
  ) {
    id
    outcome
    revision
    digest
  }
}
    `) as unknown as TypedDocumentString<CliRejectMutation, CliRejectMutationVariables>;
export const CliApprovalDecidedDocument = new TypedDocumentString(`
    subscription CliApprovalDecided($id: ID!) {
  approvalChanged(approvalId: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<CliApprovalDecidedSubscription, CliApprovalDecidedSubscriptionVariables>;