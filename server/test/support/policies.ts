import { OPS, ok, rawId, type TestInstance } from './harness.js';

export { REVIEWER_CONDITION } from './hostile-conditions.js';

// Shared by the tests of policies and groups (integration/policies/, groups/ and the tests that give
// requests a policy): GraphQL of policies and groups, and opening requests.

export const POLICY_FIELDS = `id name position enabled
  currentVersion { version condition allowedOutcomes excludeTaskStarter quorum { approvals fromGroupIds rejectionRejects } escalation { afterSeconds toUser { id } toGroup { id } raiseRiskTo } }
  versions { version condition }`;

export const Q = {
  policies: `{ policies { ${POLICY_FIELDS} } }`,
  create: `mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { ${POLICY_FIELDS} } }`,
  update: `mutation($input: UpdatePolicyInput!) { updatePolicy(input: $input) { ${POLICY_FIELDS} } }`,
  setEnabled: `mutation($id: ID!, $enabled: Boolean!) { setPolicyEnabled(id: $id, enabled: $enabled) { id enabled } }`,
  reorder: `mutation($ids: [ID!]!) { reorderPolicies(ids: $ids) { id name position } }`,
  delete: `mutation($id: ID!) { deletePolicy(id: $id) }`,
  createApproval: `mutation($input: CreateApprovalInput!) { createApproval(input: $input) { id revision digest
    policy { policyId name version isDefault allowedOutcomes excludeTaskStarter conditionError quorum { approvals rejectionRejects } escalation { afterSeconds } } } }`,
  approvalPolicy: `query($id: ID!) { approval(id: $id) { id revision digest status policy { policyId name version isDefault allowedOutcomes excludeTaskStarter conditionError } } }`,
  approvalsOfTask: `query($taskId: ID!) { approvals(taskId: $taskId) { edges { node { id revision digest status policy { name version } } } } }`,
};

export async function clearPolicies(t: TestInstance) {
  for (const p of ok(await t.gql(Q.policies)).policies) ok(await t.gql(Q.delete, { id: p.id }));
}

export async function createPolicy(t: TestInstance, input: Record<string, unknown>) {
  return ok(await t.gql(Q.create, { input })).createPolicy;
}

export interface RequestInput {
  agentId?: string;
  skillId?: string;
  title?: string;
  summary?: string;
  risk?: string;
  action?: unknown;
}

/** createApproval (source USER) and the policy it opened under. */
export async function open(t: TestInstance, input: RequestInput, token?: string) {
  const r = await t.gql(Q.createApproval, { input: { title: 'A request', risk: 'MEDIUM', action: { kind: 'send_message', text: 'hello' }, ...input } }, token);
  return ok(r).createApproval;
}

export const policyOf = async (t: TestInstance, input: RequestInput) => (await open(t, input)).policy;

export async function requestedEvent(t: TestInstance, approvalGlobalId: string) {
  const [row] = await t.sql<{ data: any }>(`select data from audit_event where stream = $1 and type in ('approval.requested', 'REQUESTED')`, [
    `approval:${rawId(approvalGlobalId)}`,
  ]);
  return row?.data;
}

export async function tenantEvents(t: TestInstance, typePrefix: string) {
  return t.sql<{ type: string; data: any }>(`select type, data from audit_event where stream like 'tenant:%' and type like $1 order by seq`, [
    `${typePrefix}%`,
  ]);
}

export const startTask = OPS.startTask;

// Reviewer groups and policies through the admin API, for the tests of what a policy does
// (quorum, escalation): a test creates the group and the policy an admin would, then opens a
// request its condition matches.

export const GROUP_OPS = {
  create: `mutation($input: CreateReviewerGroupInput!) { createReviewerGroup(input: $input) { id name members { id } } }`,
  removeMember: `mutation($g: ID!, $u: ID!) { removeReviewerGroupMember(groupId: $g, userId: $u) { id } }`,
  addMember: `mutation($g: ID!, $u: ID!) { addReviewerGroupMember(groupId: $g, userId: $u) { id } }`,
};

/** A reviewer group with these members (global user ids), created by the instance's admin. */
export async function createGroup(t: TestInstance, name: string, memberIds: string[]): Promise<{ id: string; uuid: string; name: string }> {
  const g = ok(await t.gql(GROUP_OPS.create, { input: { name, memberIds } })).createReviewerGroup;
  return { id: g.id, uuid: rawId(g.id), name: g.name };
}

export async function removeGroupMember(t: TestInstance, groupId: string, userId: string): Promise<void> {
  ok(await t.gql(GROUP_OPS.removeMember, { g: groupId, u: userId }));
}

export async function updatePolicy(t: TestInstance, input: Record<string, unknown>) {
  return ok(await t.gql(Q.update, { input })).updatePolicy;
}

/** A CEL string literal (JSON's escaping is a subset CEL reads). */
export const celString = (s: string) => JSON.stringify(s);
