/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

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
    "\n  query Viewer {\n    viewer {\n      id\n      name\n      email\n      role\n    }\n  }\n": typeof types.ViewerDocument,
    "\n  mutation SignOut {\n    signOut\n  }\n": typeof types.SignOutDocument,
    "\n  query AuditFailure {\n    auditChain {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n": typeof types.AuditFailureDocument,
    "\n  mutation AcknowledgeAuditFailureInConsole($failureId: ID!, $note: String!) {\n    acknowledgeAuditFailure(failureId: $failureId, note: $note) {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n": typeof types.AcknowledgeAuditFailureInConsoleDocument,
    "\n  query MyAccess {\n    viewer {\n      id\n      role\n      grants {\n        id\n      }\n    }\n  }\n": typeof types.MyAccessDocument,
    "\n  query Agents {\n    agents {\n      id\n      name\n      kind\n      cardUrl\n      endpointUrl\n      hookUser {\n        id\n        email\n      }\n      createdAt\n      extensions\n      lastError {\n        kind\n        message\n        detail\n        at\n      }\n      skills {\n        id\n        name\n        description\n      }\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n": typeof types.AgentsDocument,
    "\n  mutation RefreshAgent($id: ID!) {\n    refreshAgentCard(id: $id) {\n      id\n      extensions\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n": typeof types.RefreshAgentDocument,
    "\n  fragment ApprovalCurrentRevision on Approval {\n    id\n    revision\n    digest\n    revisions {\n      number\n      digest\n      action\n      ...ActionEditor\n    }\n  }\n": typeof types.ApprovalCurrentRevisionFragmentDoc,
    "\n  fragment ApprovalView on Approval {\n    id\n    version\n    title\n    summary\n    risk\n    status\n    source\n    createdAt\n    expiresAt\n    agent {\n      id\n      name\n      kind\n    }\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n      email\n    }\n    assignee {\n      id\n      name\n      email\n    }\n    supersededBy {\n      id\n      title\n    }\n    supersedes {\n      id\n      title\n      status\n      revision\n      digest\n      action\n    }\n    command {\n      agentId\n    }\n    ...ApprovalEscalation\n    ...ApprovalIntegrityAlerts\n    ...ApprovalCurrentRevision\n    ...ApprovalRevisions\n    ...DecisionPanel\n    ...QuorumProgress\n    ...DeliveryLedger\n    ...AuditTrail\n    ...ApprovalMcpCall\n  }\n": typeof types.ApprovalViewFragmentDoc,
    "\n  query ApprovalPage($id: ID!) {\n    approval(id: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n": typeof types.ApprovalPageDocument,
    "\n  subscription ApprovalLive($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n": typeof types.ApprovalLiveDocument,
    "\n  query ReviewerGroups {\n    reviewerGroups {\n      id\n      name\n      members {\n        id\n        name\n        email\n      }\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n": typeof types.ReviewerGroupsDocument,
    "\n  mutation CreateReviewerGroup($input: CreateReviewerGroupInput!) {\n    createReviewerGroup(input: $input) {\n      id\n    }\n  }\n": typeof types.CreateReviewerGroupDocument,
    "\n  mutation RenameReviewerGroup($id: ID!, $name: String!) {\n    renameReviewerGroup(id: $id, name: $name) {\n      id\n      name\n    }\n  }\n": typeof types.RenameReviewerGroupDocument,
    "\n  mutation DeleteReviewerGroup($id: ID!) {\n    deleteReviewerGroup(id: $id)\n  }\n": typeof types.DeleteReviewerGroupDocument,
    "\n  mutation AddReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    addReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n": typeof types.AddReviewerGroupMemberDocument,
    "\n  mutation RemoveReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    removeReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n": typeof types.RemoveReviewerGroupMemberDocument,
    "\n  query Inbox($status: [ApprovalStatus!], $agentId: ID, $assignedToMe: Boolean) {\n    approvals(first: 100, status: $status, agentId: $agentId, assignedToMe: $assignedToMe) {\n      edges {\n        node {\n          id\n          ...InboxItem\n          ...InboxRow\n        }\n      }\n    }\n    ...InboxFilters\n  }\n": typeof types.InboxDocument,
    "\n  fragment McpServerFields on McpServer {\n    id\n    name\n    transport\n    url\n    command\n    args\n    gatewayPath\n    holdSeconds\n    createdAt\n    rules {\n      condition\n      outcome\n      reason\n    }\n  }\n": typeof types.McpServerFieldsFragmentDoc,
    "\n  query McpServers {\n    mcpServers {\n      id\n      ...McpServerFields\n    }\n  }\n": typeof types.McpServersDocument,
    "\n  mutation RegisterMcpServer($name: String!, $url: String!, $rules: [McpCallRuleInput!], $holdSeconds: Int) {\n    registerMcpServer(name: $name, url: $url, rules: $rules, holdSeconds: $holdSeconds) {\n      id\n      ...McpServerFields\n    }\n  }\n": typeof types.RegisterMcpServerDocument,
    "\n  mutation SetMcpServerRules($id: ID!, $rules: [McpCallRuleInput!]!) {\n    setMcpServerRules(id: $id, rules: $rules) {\n      id\n      ...McpServerFields\n    }\n  }\n": typeof types.SetMcpServerRulesDocument,
    "\n  mutation RemoveMcpServer($id: ID!) {\n    removeMcpServer(id: $id) {\n      id\n      removedAt\n    }\n  }\n": typeof types.RemoveMcpServerDocument,
    "\n  query People {\n    users {\n      id\n      name\n      email\n      role\n    }\n    agents {\n      id\n      name\n    }\n    agentGrants {\n      id\n      permission\n      skillId\n      user {\n        id\n        name\n        email\n      }\n      agent {\n        id\n        name\n      }\n    }\n  }\n": typeof types.PeopleDocument,
    "\n  mutation RevokeGrant($grantId: ID!) {\n    revokeAgentAccess(grantId: $grantId) {\n      id\n    }\n  }\n": typeof types.RevokeGrantDocument,
    "\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) {\n      id\n      name\n      email\n      role\n    }\n  }\n": typeof types.CreateUserDocument,
    "\n  mutation CreateToken($input: CreateApiTokenInput!) {\n    createApiToken(input: $input) {\n      token\n    }\n  }\n": typeof types.CreateTokenDocument,
    "\n  mutation CreateSignInLinkPage($userId: ID!) {\n    createSignInLink(userId: $userId) {\n      url\n      expiresAt\n      user {\n        id\n        email\n      }\n    }\n  }\n": typeof types.CreateSignInLinkPageDocument,
    "\n  mutation Grant($input: GrantAgentAccessInput!) {\n    grantAgentAccess(input: $input) {\n      id\n      permission\n      skillId\n    }\n  }\n": typeof types.GrantDocument,
    "\n  query Policies {\n    policies {\n      id\n      name\n      position\n      enabled\n      currentVersion {\n        version\n        condition\n        allowedOutcomes\n        excludeTaskStarter\n        quorum {\n          approvals\n          fromGroupIds\n          rejectionRejects\n        }\n        escalation {\n          afterSeconds\n          toGroup {\n            id\n          }\n          toUser {\n            id\n          }\n          raiseRiskTo\n        }\n      }\n      versions {\n        version\n        condition\n        allowedOutcomes\n        createdAt\n        createdBy {\n          name\n        }\n      }\n    }\n    reviewerGroups {\n      id\n      name\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n": typeof types.PoliciesDocument,
    "\n  mutation CreatePolicy($input: CreatePolicyInput!) {\n    createPolicy(input: $input) {\n      id\n    }\n  }\n": typeof types.CreatePolicyDocument,
    "\n  mutation UpdatePolicy($input: UpdatePolicyInput!) {\n    updatePolicy(input: $input) {\n      id\n    }\n  }\n": typeof types.UpdatePolicyDocument,
    "\n  mutation SetPolicyEnabled($id: ID!, $enabled: Boolean!) {\n    setPolicyEnabled(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n": typeof types.SetPolicyEnabledDocument,
    "\n  mutation ReorderPolicies($ids: [ID!]!) {\n    reorderPolicies(ids: $ids) {\n      id\n      position\n    }\n  }\n": typeof types.ReorderPoliciesDocument,
    "\n  mutation DeletePolicy($id: ID!) {\n    deletePolicy(id: $id)\n  }\n": typeof types.DeletePolicyDocument,
    "\n  fragment RegisteredAgent on Agent {\n    id\n    name\n    kind\n    cardUrl\n    endpointUrl\n  }\n": typeof types.RegisteredAgentFragmentDoc,
    "\n  mutation RegisterAgent($cardUrl: String!) {\n    registerAgent(input: { cardUrl: $cardUrl }) {\n      ...RegisteredAgent\n    }\n  }\n": typeof types.RegisterAgentDocument,
    "\n  mutation RegisterAgUiAgent($endpointUrl: String!, $name: String!) {\n    registerAgUiAgent(input: { endpointUrl: $endpointUrl, name: $name }) {\n      ...RegisteredAgent\n    }\n  }\n": typeof types.RegisterAgUiAgentDocument,
    "\n  query SignInLinkPage($secret: String!) {\n    signInLink(secret: $secret) {\n      email\n      name\n      expiresAt\n    }\n  }\n": typeof types.SignInLinkPageDocument,
    "\n  mutation SetPasswordWithLinkPage($secret: String!, $password: String!) {\n    setPasswordWithLink(secret: $secret, password: $password) {\n      id\n    }\n  }\n": typeof types.SetPasswordWithLinkPageDocument,
    "\n  mutation SignIn($email: String!, $password: String!) {\n    signIn(email: $email, password: $password) {\n      id\n      email\n    }\n  }\n": typeof types.SignInDocument,
    "\n  fragment TranscriptMessage on TaskMessage {\n    messageId\n    role\n    stepSeq\n    createdAt\n    parts\n    form\n    formPartIndex\n    a2ui\n    a2uiPartIndex\n  }\n": typeof types.TranscriptMessageFragmentDoc,
    "\n  fragment Transcript on Task {\n    id\n    state\n    limitReason\n    messages(last: 50) {\n      ...TranscriptMessage\n    }\n    statusHistory {\n      state\n      at\n    }\n  }\n": typeof types.TranscriptFragmentDoc,
    "\n  query TaskEarlierMessages($id: ID!, $before: Int!) {\n    task(id: $id) {\n      id\n      messages(last: 50, before: $before) {\n        ...TranscriptMessage\n      }\n    }\n  }\n": typeof types.TaskEarlierMessagesDocument,
    "\n  query TaskPage($id: ID!) {\n    task(id: $id) {\n      id\n      state\n      skillId\n      createdAt\n      contextId\n      agent {\n        id\n        name\n      }\n      createdBy {\n        id\n        name\n      }\n      ...Transcript\n    }\n    approvals(taskId: $id, first: 20) {\n      edges {\n        node {\n          id\n          title\n          status\n          revision\n        }\n      }\n    }\n  }\n": typeof types.TaskPageDocument,
    "\n  subscription TaskLive($id: ID!) {\n    taskUpdated(taskId: $id) {\n      id\n      ...Transcript\n    }\n  }\n": typeof types.TaskLiveDocument,
    "\n  mutation SubmitTaskForm($input: SubmitTaskFormInput!) {\n    submitTaskForm(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n": typeof types.SubmitTaskFormDocument,
    "\n  mutation SendA2uiAction($input: SendA2uiActionInput!) {\n    sendA2uiAction(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n": typeof types.SendA2uiActionDocument,
    "\n  mutation SendTaskMessage($input: SendTaskMessageInput!) {\n    sendTaskMessage(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n": typeof types.SendTaskMessageDocument,
    "\n  query Tasks {\n    tasks(first: 100) {\n      edges {\n        node {\n          id\n          state\n          skillId\n          createdAt\n          updatedAt\n          agent {\n            id\n            name\n          }\n        }\n      }\n    }\n    agents {\n      id\n      name\n      kind\n      startForm\n      skills {\n        id\n        name\n        description\n      }\n    }\n  }\n": typeof types.TasksDocument,
    "\n  mutation StartTask($input: StartTaskInput!) {\n    startTask(input: $input) {\n      id\n      state\n    }\n  }\n": typeof types.StartTaskDocument,
    "\n  query WaitingForInput {\n    tasksWaitingForInput(first: 50) {\n      reason\n      detail\n      messageId\n      since\n      task {\n        id\n        state\n        agent {\n          id\n          name\n        }\n      }\n    }\n  }\n": typeof types.WaitingForInputDocument,
    "\n  subscription WaitingForInputChanged {\n    waitingForInputChanged {\n      id\n      state\n    }\n  }\n": typeof types.WaitingForInputChangedDocument,
    "\n  fragment WebhookEndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    eventTypes\n    enabled\n    createdAt\n    secrets {\n      createdAt\n      expiresAt\n    }\n    deliveries(first: 20) {\n      edges {\n        node {\n          id\n          webhookId\n          type\n          status\n          createdAt\n          deliveredAt\n          nextAttemptAt\n          lastStatusCode\n          lastError\n          payload\n          attempts {\n            number\n            at\n            statusCode\n            error\n            durationMs\n            nextRetryAt\n          }\n        }\n      }\n    }\n  }\n": typeof types.WebhookEndpointFieldsFragmentDoc,
    "\n  query Webhooks {\n    webhookEndpoints {\n      id\n      ...WebhookEndpointFields\n    }\n    eventTypes: __type(name: \"WebhookEventType\") {\n      enumValues {\n        name\n        description\n      }\n    }\n  }\n": typeof types.WebhooksDocument,
    "\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n      }\n    }\n  }\n": typeof types.CreateWebhookEndpointDocument,
    "\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      ...WebhookEndpointFields\n    }\n  }\n": typeof types.UpdateWebhookEndpointDocument,
    "\n  mutation RotateWebhookSecret($id: ID!, $graceSeconds: Int) {\n    rotateWebhookSecret(id: $id, graceSeconds: $graceSeconds) {\n      secret\n      endpoint {\n        id\n        ...WebhookEndpointFields\n      }\n    }\n  }\n": typeof types.RotateWebhookSecretDocument,
    "\n  mutation SendWebhookTestEvent($id: ID!) {\n    sendWebhookTestEvent(id: $id) {\n      id\n      webhookId\n    }\n  }\n": typeof types.SendWebhookTestEventDocument,
    "\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n": typeof types.DeleteWebhookEndpointDocument,
    "\n  fragment ActionEditor on ApprovalRevision {\n    action\n  }\n": typeof types.ActionEditorFragmentDoc,
    "\n  fragment AuditTrail on Approval {\n    agent {\n      id\n      name\n    }\n    events {\n      seq\n      type\n      actorType\n      actorId\n      actor {\n        id\n        name\n      }\n      at\n      hash\n      prevHash\n      data\n    }\n    chain {\n      ok\n      events\n      firstBrokenSeq\n      reason\n    }\n  }\n": typeof types.AuditTrailFragmentDoc,
    "\n  fragment DecisionPanel on Approval {\n    id\n    title\n    risk\n    status\n    source\n    editable\n    command {\n      approvalId\n    }\n    policy {\n      name\n      version\n      isDefault\n      allowedOutcomes\n      conditionError\n    }\n    assignee {\n      id\n      name\n    }\n    viewerCannotDecide\n    supersededBy {\n      id\n      title\n    }\n    quorum {\n      required\n      count\n    }\n    decisions {\n      id\n      outcome\n      vote\n      revision\n      digest\n      comment\n      decidedAt\n      reviewer {\n        id\n        name\n        email\n      }\n      delegatedTo {\n        id\n        name\n      }\n    }\n  }\n": typeof types.DecisionPanelFragmentDoc,
    "\n  fragment DecisionResult on Decision {\n    id\n    outcome\n    revision\n    approval {\n      id\n      ...ApprovalView\n    }\n  }\n": typeof types.DecisionResultFragmentDoc,
    "\n  mutation Approve($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n": typeof types.ApproveDocument,
    "\n  mutation Reject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n": typeof types.RejectDocument,
    "\n  mutation RequestChanges($input: DecideInput!) {\n    requestChanges(input: $input) {\n      ...DecisionResult\n    }\n  }\n": typeof types.RequestChangesDocument,
    "\n  mutation EditAndApprove($input: EditAndApproveInput!) {\n    editAndApprove(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n": typeof types.EditAndApproveDocument,
    "\n  mutation Delegate($input: DelegateInput!) {\n    delegate(input: $input) {\n      ...DecisionResult\n    }\n  }\n": typeof types.DelegateDocument,
    "\n  query DelegateCandidates($id: ID!) {\n    approval(id: $id) {\n      id\n      delegateCandidates {\n        id\n        name\n        email\n      }\n    }\n  }\n": typeof types.DelegateCandidatesDocument,
    "\n  fragment DeliveryLedger on Approval {\n    id\n    status\n    source\n    agent {\n      id\n      kind\n    }\n    task {\n      id\n    }\n    execution {\n      status\n      attempts\n      messageId\n      lastError\n      ...ExecutionEvidence\n    }\n    command {\n      agentId\n      status\n      grant {\n        status\n        consumedAt\n        expiresAt\n      }\n    }\n    events {\n      seq\n      type\n      data\n    }\n  }\n": typeof types.DeliveryLedgerFragmentDoc,
    "\n  mutation RetryDelivery($id: ID!) {\n    retryDelivery(approvalId: $id) {\n      id\n      version\n      ...DeliveryLedger\n    }\n  }\n": typeof types.RetryDeliveryDocument,
    "\n  fragment ApprovalEscalation on Approval {\n    id\n    status\n    risk\n    assigneeGroup {\n      id\n      name\n    }\n    escalation {\n      dueAt\n      escalatedAt\n      toGroup {\n        id\n        name\n      }\n      toUser {\n        id\n        name\n      }\n      raiseRiskTo\n      riskRaisedFrom\n    }\n  }\n": typeof types.ApprovalEscalationFragmentDoc,
    "\n  fragment ExecutionEvidence on Execution {\n    observedTaskState\n    observedAt\n    digestMismatch\n    evidence {\n      id\n      outcome\n      detail\n      reportedDigest\n      approvedDigest\n      digestMatches\n      messageId\n      reportedAt\n    }\n  }\n": typeof types.ExecutionEvidenceFragmentDoc,
    "\n  fragment ApprovalIntegrityAlerts on Approval {\n    id\n    integrityAlerts {\n      id\n      at\n      kind\n      problem\n      message\n    }\n  }\n": typeof types.ApprovalIntegrityAlertsFragmentDoc,
    "\n  fragment ApprovalMcpCall on Approval {\n    id\n    status\n    revisions {\n      number\n      action\n    }\n    mcpCall {\n      ...McpHeldCall\n    }\n  }\n": typeof types.ApprovalMcpCallFragmentDoc,
    "\n  fragment McpHeldCall on McpHeldCall {\n    server\n    tool\n    waiting\n    forwardedAt\n    resultDigest\n    resultIsError\n  }\n": typeof types.McpHeldCallFragmentDoc,
    "\n  query McpCallNow($id: ID!) {\n    approval(id: $id) {\n      id\n      mcpCall {\n        ...McpHeldCall\n      }\n    }\n  }\n": typeof types.McpCallNowDocument,
    "\n  fragment QuorumProgress on Approval {\n    id\n    status\n    quorum {\n      required\n      count\n      met\n      revision\n      rejectionRejects\n      fromGroupNames\n      approvals {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n          email\n        }\n      }\n      rejections {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n        }\n      }\n    }\n  }\n": typeof types.QuorumProgressFragmentDoc,
    "\n  fragment ApprovalRevisions on Approval {\n    id\n    revision\n    revisions {\n      number\n      digest\n      action\n      createdAt\n      createdBy {\n        type\n        id\n        user {\n          id\n          name\n        }\n      }\n    }\n  }\n": typeof types.ApprovalRevisionsFragmentDoc,
    "\n  fragment InboxFilters on Query {\n    agents {\n      id\n      name\n    }\n  }\n": typeof types.InboxFiltersFragmentDoc,
    "\n  fragment InboxRow on Approval {\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n    }\n    assignee {\n      id\n      name\n    }\n    assigneeGroup {\n      name\n    }\n    escalatedAt\n    riskRaisedFrom\n    command {\n      agentId\n    }\n    quorumRequired\n    quorumCount\n  }\n": typeof types.InboxRowFragmentDoc,
    "\n  fragment InboxItem on Approval {\n    id\n    version\n    title\n    risk\n    status\n    createdAt\n    expiresAt\n    revision\n    digest\n    action\n    viewerCannotDecide\n    agent {\n      id\n      name\n      kind\n    }\n  }\n": typeof types.InboxItemFragmentDoc,
    "\n  subscription InboxRequested {\n    approvalRequested {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n": typeof types.InboxRequestedDocument,
    "\n  subscription InboxChanged {\n    approvalChanged {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n": typeof types.InboxChangedDocument,
    "\n  query InboxItemAgain($id: ID!) {\n    approval(id: $id) {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n": typeof types.InboxItemAgainDocument,
    "\n  mutation InboxApprove($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n": typeof types.InboxApproveDocument,
    "\n  mutation InboxReject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n": typeof types.InboxRejectDocument,
    "\n  query McpServerTools($id: ID!) {\n    mcpServer(id: $id) {\n      id\n      tools {\n        error\n        tools {\n          name\n          title\n          description\n          readOnlyHint\n          destructiveHint\n          outcome\n          rule\n          argumentsMatter\n        }\n      }\n      recentCalls(first: 20) {\n        tool\n        createdAt\n        forwardedAt\n        resultIsError\n        approval {\n          id\n          status\n          title\n        }\n      }\n    }\n  }\n": typeof types.McpServerToolsDocument,
};
const documents: Documents = {
    "\n  query Viewer {\n    viewer {\n      id\n      name\n      email\n      role\n    }\n  }\n": types.ViewerDocument,
    "\n  mutation SignOut {\n    signOut\n  }\n": types.SignOutDocument,
    "\n  query AuditFailure {\n    auditChain {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n": types.AuditFailureDocument,
    "\n  mutation AcknowledgeAuditFailureInConsole($failureId: ID!, $note: String!) {\n    acknowledgeAuditFailure(failureId: $failureId, note: $note) {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n": types.AcknowledgeAuditFailureInConsoleDocument,
    "\n  query MyAccess {\n    viewer {\n      id\n      role\n      grants {\n        id\n      }\n    }\n  }\n": types.MyAccessDocument,
    "\n  query Agents {\n    agents {\n      id\n      name\n      kind\n      cardUrl\n      endpointUrl\n      hookUser {\n        id\n        email\n      }\n      createdAt\n      extensions\n      lastError {\n        kind\n        message\n        detail\n        at\n      }\n      skills {\n        id\n        name\n        description\n      }\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n": types.AgentsDocument,
    "\n  mutation RefreshAgent($id: ID!) {\n    refreshAgentCard(id: $id) {\n      id\n      extensions\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n": types.RefreshAgentDocument,
    "\n  fragment ApprovalCurrentRevision on Approval {\n    id\n    revision\n    digest\n    revisions {\n      number\n      digest\n      action\n      ...ActionEditor\n    }\n  }\n": types.ApprovalCurrentRevisionFragmentDoc,
    "\n  fragment ApprovalView on Approval {\n    id\n    version\n    title\n    summary\n    risk\n    status\n    source\n    createdAt\n    expiresAt\n    agent {\n      id\n      name\n      kind\n    }\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n      email\n    }\n    assignee {\n      id\n      name\n      email\n    }\n    supersededBy {\n      id\n      title\n    }\n    supersedes {\n      id\n      title\n      status\n      revision\n      digest\n      action\n    }\n    command {\n      agentId\n    }\n    ...ApprovalEscalation\n    ...ApprovalIntegrityAlerts\n    ...ApprovalCurrentRevision\n    ...ApprovalRevisions\n    ...DecisionPanel\n    ...QuorumProgress\n    ...DeliveryLedger\n    ...AuditTrail\n    ...ApprovalMcpCall\n  }\n": types.ApprovalViewFragmentDoc,
    "\n  query ApprovalPage($id: ID!) {\n    approval(id: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n": types.ApprovalPageDocument,
    "\n  subscription ApprovalLive($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n": types.ApprovalLiveDocument,
    "\n  query ReviewerGroups {\n    reviewerGroups {\n      id\n      name\n      members {\n        id\n        name\n        email\n      }\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n": types.ReviewerGroupsDocument,
    "\n  mutation CreateReviewerGroup($input: CreateReviewerGroupInput!) {\n    createReviewerGroup(input: $input) {\n      id\n    }\n  }\n": types.CreateReviewerGroupDocument,
    "\n  mutation RenameReviewerGroup($id: ID!, $name: String!) {\n    renameReviewerGroup(id: $id, name: $name) {\n      id\n      name\n    }\n  }\n": types.RenameReviewerGroupDocument,
    "\n  mutation DeleteReviewerGroup($id: ID!) {\n    deleteReviewerGroup(id: $id)\n  }\n": types.DeleteReviewerGroupDocument,
    "\n  mutation AddReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    addReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n": types.AddReviewerGroupMemberDocument,
    "\n  mutation RemoveReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    removeReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n": types.RemoveReviewerGroupMemberDocument,
    "\n  query Inbox($status: [ApprovalStatus!], $agentId: ID, $assignedToMe: Boolean) {\n    approvals(first: 100, status: $status, agentId: $agentId, assignedToMe: $assignedToMe) {\n      edges {\n        node {\n          id\n          ...InboxItem\n          ...InboxRow\n        }\n      }\n    }\n    ...InboxFilters\n  }\n": types.InboxDocument,
    "\n  fragment McpServerFields on McpServer {\n    id\n    name\n    transport\n    url\n    command\n    args\n    gatewayPath\n    holdSeconds\n    createdAt\n    rules {\n      condition\n      outcome\n      reason\n    }\n  }\n": types.McpServerFieldsFragmentDoc,
    "\n  query McpServers {\n    mcpServers {\n      id\n      ...McpServerFields\n    }\n  }\n": types.McpServersDocument,
    "\n  mutation RegisterMcpServer($name: String!, $url: String!, $rules: [McpCallRuleInput!], $holdSeconds: Int) {\n    registerMcpServer(name: $name, url: $url, rules: $rules, holdSeconds: $holdSeconds) {\n      id\n      ...McpServerFields\n    }\n  }\n": types.RegisterMcpServerDocument,
    "\n  mutation SetMcpServerRules($id: ID!, $rules: [McpCallRuleInput!]!) {\n    setMcpServerRules(id: $id, rules: $rules) {\n      id\n      ...McpServerFields\n    }\n  }\n": types.SetMcpServerRulesDocument,
    "\n  mutation RemoveMcpServer($id: ID!) {\n    removeMcpServer(id: $id) {\n      id\n      removedAt\n    }\n  }\n": types.RemoveMcpServerDocument,
    "\n  query People {\n    users {\n      id\n      name\n      email\n      role\n    }\n    agents {\n      id\n      name\n    }\n    agentGrants {\n      id\n      permission\n      skillId\n      user {\n        id\n        name\n        email\n      }\n      agent {\n        id\n        name\n      }\n    }\n  }\n": types.PeopleDocument,
    "\n  mutation RevokeGrant($grantId: ID!) {\n    revokeAgentAccess(grantId: $grantId) {\n      id\n    }\n  }\n": types.RevokeGrantDocument,
    "\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) {\n      id\n      name\n      email\n      role\n    }\n  }\n": types.CreateUserDocument,
    "\n  mutation CreateToken($input: CreateApiTokenInput!) {\n    createApiToken(input: $input) {\n      token\n    }\n  }\n": types.CreateTokenDocument,
    "\n  mutation CreateSignInLinkPage($userId: ID!) {\n    createSignInLink(userId: $userId) {\n      url\n      expiresAt\n      user {\n        id\n        email\n      }\n    }\n  }\n": types.CreateSignInLinkPageDocument,
    "\n  mutation Grant($input: GrantAgentAccessInput!) {\n    grantAgentAccess(input: $input) {\n      id\n      permission\n      skillId\n    }\n  }\n": types.GrantDocument,
    "\n  query Policies {\n    policies {\n      id\n      name\n      position\n      enabled\n      currentVersion {\n        version\n        condition\n        allowedOutcomes\n        excludeTaskStarter\n        quorum {\n          approvals\n          fromGroupIds\n          rejectionRejects\n        }\n        escalation {\n          afterSeconds\n          toGroup {\n            id\n          }\n          toUser {\n            id\n          }\n          raiseRiskTo\n        }\n      }\n      versions {\n        version\n        condition\n        allowedOutcomes\n        createdAt\n        createdBy {\n          name\n        }\n      }\n    }\n    reviewerGroups {\n      id\n      name\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n": types.PoliciesDocument,
    "\n  mutation CreatePolicy($input: CreatePolicyInput!) {\n    createPolicy(input: $input) {\n      id\n    }\n  }\n": types.CreatePolicyDocument,
    "\n  mutation UpdatePolicy($input: UpdatePolicyInput!) {\n    updatePolicy(input: $input) {\n      id\n    }\n  }\n": types.UpdatePolicyDocument,
    "\n  mutation SetPolicyEnabled($id: ID!, $enabled: Boolean!) {\n    setPolicyEnabled(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n": types.SetPolicyEnabledDocument,
    "\n  mutation ReorderPolicies($ids: [ID!]!) {\n    reorderPolicies(ids: $ids) {\n      id\n      position\n    }\n  }\n": types.ReorderPoliciesDocument,
    "\n  mutation DeletePolicy($id: ID!) {\n    deletePolicy(id: $id)\n  }\n": types.DeletePolicyDocument,
    "\n  fragment RegisteredAgent on Agent {\n    id\n    name\n    kind\n    cardUrl\n    endpointUrl\n  }\n": types.RegisteredAgentFragmentDoc,
    "\n  mutation RegisterAgent($cardUrl: String!) {\n    registerAgent(input: { cardUrl: $cardUrl }) {\n      ...RegisteredAgent\n    }\n  }\n": types.RegisterAgentDocument,
    "\n  mutation RegisterAgUiAgent($endpointUrl: String!, $name: String!) {\n    registerAgUiAgent(input: { endpointUrl: $endpointUrl, name: $name }) {\n      ...RegisteredAgent\n    }\n  }\n": types.RegisterAgUiAgentDocument,
    "\n  query SignInLinkPage($secret: String!) {\n    signInLink(secret: $secret) {\n      email\n      name\n      expiresAt\n    }\n  }\n": types.SignInLinkPageDocument,
    "\n  mutation SetPasswordWithLinkPage($secret: String!, $password: String!) {\n    setPasswordWithLink(secret: $secret, password: $password) {\n      id\n    }\n  }\n": types.SetPasswordWithLinkPageDocument,
    "\n  mutation SignIn($email: String!, $password: String!) {\n    signIn(email: $email, password: $password) {\n      id\n      email\n    }\n  }\n": types.SignInDocument,
    "\n  fragment TranscriptMessage on TaskMessage {\n    messageId\n    role\n    stepSeq\n    createdAt\n    parts\n    form\n    formPartIndex\n    a2ui\n    a2uiPartIndex\n  }\n": types.TranscriptMessageFragmentDoc,
    "\n  fragment Transcript on Task {\n    id\n    state\n    limitReason\n    messages(last: 50) {\n      ...TranscriptMessage\n    }\n    statusHistory {\n      state\n      at\n    }\n  }\n": types.TranscriptFragmentDoc,
    "\n  query TaskEarlierMessages($id: ID!, $before: Int!) {\n    task(id: $id) {\n      id\n      messages(last: 50, before: $before) {\n        ...TranscriptMessage\n      }\n    }\n  }\n": types.TaskEarlierMessagesDocument,
    "\n  query TaskPage($id: ID!) {\n    task(id: $id) {\n      id\n      state\n      skillId\n      createdAt\n      contextId\n      agent {\n        id\n        name\n      }\n      createdBy {\n        id\n        name\n      }\n      ...Transcript\n    }\n    approvals(taskId: $id, first: 20) {\n      edges {\n        node {\n          id\n          title\n          status\n          revision\n        }\n      }\n    }\n  }\n": types.TaskPageDocument,
    "\n  subscription TaskLive($id: ID!) {\n    taskUpdated(taskId: $id) {\n      id\n      ...Transcript\n    }\n  }\n": types.TaskLiveDocument,
    "\n  mutation SubmitTaskForm($input: SubmitTaskFormInput!) {\n    submitTaskForm(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n": types.SubmitTaskFormDocument,
    "\n  mutation SendA2uiAction($input: SendA2uiActionInput!) {\n    sendA2uiAction(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n": types.SendA2uiActionDocument,
    "\n  mutation SendTaskMessage($input: SendTaskMessageInput!) {\n    sendTaskMessage(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n": types.SendTaskMessageDocument,
    "\n  query Tasks {\n    tasks(first: 100) {\n      edges {\n        node {\n          id\n          state\n          skillId\n          createdAt\n          updatedAt\n          agent {\n            id\n            name\n          }\n        }\n      }\n    }\n    agents {\n      id\n      name\n      kind\n      startForm\n      skills {\n        id\n        name\n        description\n      }\n    }\n  }\n": types.TasksDocument,
    "\n  mutation StartTask($input: StartTaskInput!) {\n    startTask(input: $input) {\n      id\n      state\n    }\n  }\n": types.StartTaskDocument,
    "\n  query WaitingForInput {\n    tasksWaitingForInput(first: 50) {\n      reason\n      detail\n      messageId\n      since\n      task {\n        id\n        state\n        agent {\n          id\n          name\n        }\n      }\n    }\n  }\n": types.WaitingForInputDocument,
    "\n  subscription WaitingForInputChanged {\n    waitingForInputChanged {\n      id\n      state\n    }\n  }\n": types.WaitingForInputChangedDocument,
    "\n  fragment WebhookEndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    eventTypes\n    enabled\n    createdAt\n    secrets {\n      createdAt\n      expiresAt\n    }\n    deliveries(first: 20) {\n      edges {\n        node {\n          id\n          webhookId\n          type\n          status\n          createdAt\n          deliveredAt\n          nextAttemptAt\n          lastStatusCode\n          lastError\n          payload\n          attempts {\n            number\n            at\n            statusCode\n            error\n            durationMs\n            nextRetryAt\n          }\n        }\n      }\n    }\n  }\n": types.WebhookEndpointFieldsFragmentDoc,
    "\n  query Webhooks {\n    webhookEndpoints {\n      id\n      ...WebhookEndpointFields\n    }\n    eventTypes: __type(name: \"WebhookEventType\") {\n      enumValues {\n        name\n        description\n      }\n    }\n  }\n": types.WebhooksDocument,
    "\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n      }\n    }\n  }\n": types.CreateWebhookEndpointDocument,
    "\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      ...WebhookEndpointFields\n    }\n  }\n": types.UpdateWebhookEndpointDocument,
    "\n  mutation RotateWebhookSecret($id: ID!, $graceSeconds: Int) {\n    rotateWebhookSecret(id: $id, graceSeconds: $graceSeconds) {\n      secret\n      endpoint {\n        id\n        ...WebhookEndpointFields\n      }\n    }\n  }\n": types.RotateWebhookSecretDocument,
    "\n  mutation SendWebhookTestEvent($id: ID!) {\n    sendWebhookTestEvent(id: $id) {\n      id\n      webhookId\n    }\n  }\n": types.SendWebhookTestEventDocument,
    "\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n": types.DeleteWebhookEndpointDocument,
    "\n  fragment ActionEditor on ApprovalRevision {\n    action\n  }\n": types.ActionEditorFragmentDoc,
    "\n  fragment AuditTrail on Approval {\n    agent {\n      id\n      name\n    }\n    events {\n      seq\n      type\n      actorType\n      actorId\n      actor {\n        id\n        name\n      }\n      at\n      hash\n      prevHash\n      data\n    }\n    chain {\n      ok\n      events\n      firstBrokenSeq\n      reason\n    }\n  }\n": types.AuditTrailFragmentDoc,
    "\n  fragment DecisionPanel on Approval {\n    id\n    title\n    risk\n    status\n    source\n    editable\n    command {\n      approvalId\n    }\n    policy {\n      name\n      version\n      isDefault\n      allowedOutcomes\n      conditionError\n    }\n    assignee {\n      id\n      name\n    }\n    viewerCannotDecide\n    supersededBy {\n      id\n      title\n    }\n    quorum {\n      required\n      count\n    }\n    decisions {\n      id\n      outcome\n      vote\n      revision\n      digest\n      comment\n      decidedAt\n      reviewer {\n        id\n        name\n        email\n      }\n      delegatedTo {\n        id\n        name\n      }\n    }\n  }\n": types.DecisionPanelFragmentDoc,
    "\n  fragment DecisionResult on Decision {\n    id\n    outcome\n    revision\n    approval {\n      id\n      ...ApprovalView\n    }\n  }\n": types.DecisionResultFragmentDoc,
    "\n  mutation Approve($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n": types.ApproveDocument,
    "\n  mutation Reject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n": types.RejectDocument,
    "\n  mutation RequestChanges($input: DecideInput!) {\n    requestChanges(input: $input) {\n      ...DecisionResult\n    }\n  }\n": types.RequestChangesDocument,
    "\n  mutation EditAndApprove($input: EditAndApproveInput!) {\n    editAndApprove(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n": types.EditAndApproveDocument,
    "\n  mutation Delegate($input: DelegateInput!) {\n    delegate(input: $input) {\n      ...DecisionResult\n    }\n  }\n": types.DelegateDocument,
    "\n  query DelegateCandidates($id: ID!) {\n    approval(id: $id) {\n      id\n      delegateCandidates {\n        id\n        name\n        email\n      }\n    }\n  }\n": types.DelegateCandidatesDocument,
    "\n  fragment DeliveryLedger on Approval {\n    id\n    status\n    source\n    agent {\n      id\n      kind\n    }\n    task {\n      id\n    }\n    execution {\n      status\n      attempts\n      messageId\n      lastError\n      ...ExecutionEvidence\n    }\n    command {\n      agentId\n      status\n      grant {\n        status\n        consumedAt\n        expiresAt\n      }\n    }\n    events {\n      seq\n      type\n      data\n    }\n  }\n": types.DeliveryLedgerFragmentDoc,
    "\n  mutation RetryDelivery($id: ID!) {\n    retryDelivery(approvalId: $id) {\n      id\n      version\n      ...DeliveryLedger\n    }\n  }\n": types.RetryDeliveryDocument,
    "\n  fragment ApprovalEscalation on Approval {\n    id\n    status\n    risk\n    assigneeGroup {\n      id\n      name\n    }\n    escalation {\n      dueAt\n      escalatedAt\n      toGroup {\n        id\n        name\n      }\n      toUser {\n        id\n        name\n      }\n      raiseRiskTo\n      riskRaisedFrom\n    }\n  }\n": types.ApprovalEscalationFragmentDoc,
    "\n  fragment ExecutionEvidence on Execution {\n    observedTaskState\n    observedAt\n    digestMismatch\n    evidence {\n      id\n      outcome\n      detail\n      reportedDigest\n      approvedDigest\n      digestMatches\n      messageId\n      reportedAt\n    }\n  }\n": types.ExecutionEvidenceFragmentDoc,
    "\n  fragment ApprovalIntegrityAlerts on Approval {\n    id\n    integrityAlerts {\n      id\n      at\n      kind\n      problem\n      message\n    }\n  }\n": types.ApprovalIntegrityAlertsFragmentDoc,
    "\n  fragment ApprovalMcpCall on Approval {\n    id\n    status\n    revisions {\n      number\n      action\n    }\n    mcpCall {\n      ...McpHeldCall\n    }\n  }\n": types.ApprovalMcpCallFragmentDoc,
    "\n  fragment McpHeldCall on McpHeldCall {\n    server\n    tool\n    waiting\n    forwardedAt\n    resultDigest\n    resultIsError\n  }\n": types.McpHeldCallFragmentDoc,
    "\n  query McpCallNow($id: ID!) {\n    approval(id: $id) {\n      id\n      mcpCall {\n        ...McpHeldCall\n      }\n    }\n  }\n": types.McpCallNowDocument,
    "\n  fragment QuorumProgress on Approval {\n    id\n    status\n    quorum {\n      required\n      count\n      met\n      revision\n      rejectionRejects\n      fromGroupNames\n      approvals {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n          email\n        }\n      }\n      rejections {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n        }\n      }\n    }\n  }\n": types.QuorumProgressFragmentDoc,
    "\n  fragment ApprovalRevisions on Approval {\n    id\n    revision\n    revisions {\n      number\n      digest\n      action\n      createdAt\n      createdBy {\n        type\n        id\n        user {\n          id\n          name\n        }\n      }\n    }\n  }\n": types.ApprovalRevisionsFragmentDoc,
    "\n  fragment InboxFilters on Query {\n    agents {\n      id\n      name\n    }\n  }\n": types.InboxFiltersFragmentDoc,
    "\n  fragment InboxRow on Approval {\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n    }\n    assignee {\n      id\n      name\n    }\n    assigneeGroup {\n      name\n    }\n    escalatedAt\n    riskRaisedFrom\n    command {\n      agentId\n    }\n    quorumRequired\n    quorumCount\n  }\n": types.InboxRowFragmentDoc,
    "\n  fragment InboxItem on Approval {\n    id\n    version\n    title\n    risk\n    status\n    createdAt\n    expiresAt\n    revision\n    digest\n    action\n    viewerCannotDecide\n    agent {\n      id\n      name\n      kind\n    }\n  }\n": types.InboxItemFragmentDoc,
    "\n  subscription InboxRequested {\n    approvalRequested {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n": types.InboxRequestedDocument,
    "\n  subscription InboxChanged {\n    approvalChanged {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n": types.InboxChangedDocument,
    "\n  query InboxItemAgain($id: ID!) {\n    approval(id: $id) {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n": types.InboxItemAgainDocument,
    "\n  mutation InboxApprove($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n": types.InboxApproveDocument,
    "\n  mutation InboxReject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n": types.InboxRejectDocument,
    "\n  query McpServerTools($id: ID!) {\n    mcpServer(id: $id) {\n      id\n      tools {\n        error\n        tools {\n          name\n          title\n          description\n          readOnlyHint\n          destructiveHint\n          outcome\n          rule\n          argumentsMatter\n        }\n      }\n      recentCalls(first: 20) {\n        tool\n        createdAt\n        forwardedAt\n        resultIsError\n        approval {\n          id\n          status\n          title\n        }\n      }\n    }\n  }\n": types.McpServerToolsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer {\n      id\n      name\n      email\n      role\n    }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer {\n      id\n      name\n      email\n      role\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SignOut {\n    signOut\n  }\n"): (typeof documents)["\n  mutation SignOut {\n    signOut\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AuditFailure {\n    auditChain {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n"): (typeof documents)["\n  query AuditFailure {\n    auditChain {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AcknowledgeAuditFailureInConsole($failureId: ID!, $note: String!) {\n    acknowledgeAuditFailure(failureId: $failureId, note: $note) {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation AcknowledgeAuditFailureInConsole($failureId: ID!, $note: String!) {\n    acknowledgeAuditFailure(failureId: $failureId, note: $note) {\n      ok\n      failure {\n        id\n        foundAt\n        reason\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MyAccess {\n    viewer {\n      id\n      role\n      grants {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  query MyAccess {\n    viewer {\n      id\n      role\n      grants {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Agents {\n    agents {\n      id\n      name\n      kind\n      cardUrl\n      endpointUrl\n      hookUser {\n        id\n        email\n      }\n      createdAt\n      extensions\n      lastError {\n        kind\n        message\n        detail\n        at\n      }\n      skills {\n        id\n        name\n        description\n      }\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n"): (typeof documents)["\n  query Agents {\n    agents {\n      id\n      name\n      kind\n      cardUrl\n      endpointUrl\n      hookUser {\n        id\n        email\n      }\n      createdAt\n      extensions\n      lastError {\n        kind\n        message\n        detail\n        at\n      }\n      skills {\n        id\n        name\n        description\n      }\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RefreshAgent($id: ID!) {\n    refreshAgentCard(id: $id) {\n      id\n      extensions\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RefreshAgent($id: ID!) {\n    refreshAgentCard(id: $id) {\n      id\n      extensions\n      snapshots {\n        number\n        fetchedAt\n        extensions\n        card\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalCurrentRevision on Approval {\n    id\n    revision\n    digest\n    revisions {\n      number\n      digest\n      action\n      ...ActionEditor\n    }\n  }\n"): (typeof documents)["\n  fragment ApprovalCurrentRevision on Approval {\n    id\n    revision\n    digest\n    revisions {\n      number\n      digest\n      action\n      ...ActionEditor\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalView on Approval {\n    id\n    version\n    title\n    summary\n    risk\n    status\n    source\n    createdAt\n    expiresAt\n    agent {\n      id\n      name\n      kind\n    }\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n      email\n    }\n    assignee {\n      id\n      name\n      email\n    }\n    supersededBy {\n      id\n      title\n    }\n    supersedes {\n      id\n      title\n      status\n      revision\n      digest\n      action\n    }\n    command {\n      agentId\n    }\n    ...ApprovalEscalation\n    ...ApprovalIntegrityAlerts\n    ...ApprovalCurrentRevision\n    ...ApprovalRevisions\n    ...DecisionPanel\n    ...QuorumProgress\n    ...DeliveryLedger\n    ...AuditTrail\n    ...ApprovalMcpCall\n  }\n"): (typeof documents)["\n  fragment ApprovalView on Approval {\n    id\n    version\n    title\n    summary\n    risk\n    status\n    source\n    createdAt\n    expiresAt\n    agent {\n      id\n      name\n      kind\n    }\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n      email\n    }\n    assignee {\n      id\n      name\n      email\n    }\n    supersededBy {\n      id\n      title\n    }\n    supersedes {\n      id\n      title\n      status\n      revision\n      digest\n      action\n    }\n    command {\n      agentId\n    }\n    ...ApprovalEscalation\n    ...ApprovalIntegrityAlerts\n    ...ApprovalCurrentRevision\n    ...ApprovalRevisions\n    ...DecisionPanel\n    ...QuorumProgress\n    ...DeliveryLedger\n    ...AuditTrail\n    ...ApprovalMcpCall\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApprovalPage($id: ID!) {\n    approval(id: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n"): (typeof documents)["\n  query ApprovalPage($id: ID!) {\n    approval(id: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ApprovalLive($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n"): (typeof documents)["\n  subscription ApprovalLive($id: ID!) {\n    approvalChanged(approvalId: $id) {\n      id\n      ...ApprovalView\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ReviewerGroups {\n    reviewerGroups {\n      id\n      name\n      members {\n        id\n        name\n        email\n      }\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n"): (typeof documents)["\n  query ReviewerGroups {\n    reviewerGroups {\n      id\n      name\n      members {\n        id\n        name\n        email\n      }\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateReviewerGroup($input: CreateReviewerGroupInput!) {\n    createReviewerGroup(input: $input) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation CreateReviewerGroup($input: CreateReviewerGroupInput!) {\n    createReviewerGroup(input: $input) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RenameReviewerGroup($id: ID!, $name: String!) {\n    renameReviewerGroup(id: $id, name: $name) {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  mutation RenameReviewerGroup($id: ID!, $name: String!) {\n    renameReviewerGroup(id: $id, name: $name) {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteReviewerGroup($id: ID!) {\n    deleteReviewerGroup(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteReviewerGroup($id: ID!) {\n    deleteReviewerGroup(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    addReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation AddReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    addReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    removeReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RemoveReviewerGroupMember($groupId: ID!, $userId: ID!) {\n    removeReviewerGroupMember(groupId: $groupId, userId: $userId) {\n      id\n      members {\n        id\n        name\n        email\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Inbox($status: [ApprovalStatus!], $agentId: ID, $assignedToMe: Boolean) {\n    approvals(first: 100, status: $status, agentId: $agentId, assignedToMe: $assignedToMe) {\n      edges {\n        node {\n          id\n          ...InboxItem\n          ...InboxRow\n        }\n      }\n    }\n    ...InboxFilters\n  }\n"): (typeof documents)["\n  query Inbox($status: [ApprovalStatus!], $agentId: ID, $assignedToMe: Boolean) {\n    approvals(first: 100, status: $status, agentId: $agentId, assignedToMe: $assignedToMe) {\n      edges {\n        node {\n          id\n          ...InboxItem\n          ...InboxRow\n        }\n      }\n    }\n    ...InboxFilters\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment McpServerFields on McpServer {\n    id\n    name\n    transport\n    url\n    command\n    args\n    gatewayPath\n    holdSeconds\n    createdAt\n    rules {\n      condition\n      outcome\n      reason\n    }\n  }\n"): (typeof documents)["\n  fragment McpServerFields on McpServer {\n    id\n    name\n    transport\n    url\n    command\n    args\n    gatewayPath\n    holdSeconds\n    createdAt\n    rules {\n      condition\n      outcome\n      reason\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpServers {\n    mcpServers {\n      id\n      ...McpServerFields\n    }\n  }\n"): (typeof documents)["\n  query McpServers {\n    mcpServers {\n      id\n      ...McpServerFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RegisterMcpServer($name: String!, $url: String!, $rules: [McpCallRuleInput!], $holdSeconds: Int) {\n    registerMcpServer(name: $name, url: $url, rules: $rules, holdSeconds: $holdSeconds) {\n      id\n      ...McpServerFields\n    }\n  }\n"): (typeof documents)["\n  mutation RegisterMcpServer($name: String!, $url: String!, $rules: [McpCallRuleInput!], $holdSeconds: Int) {\n    registerMcpServer(name: $name, url: $url, rules: $rules, holdSeconds: $holdSeconds) {\n      id\n      ...McpServerFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetMcpServerRules($id: ID!, $rules: [McpCallRuleInput!]!) {\n    setMcpServerRules(id: $id, rules: $rules) {\n      id\n      ...McpServerFields\n    }\n  }\n"): (typeof documents)["\n  mutation SetMcpServerRules($id: ID!, $rules: [McpCallRuleInput!]!) {\n    setMcpServerRules(id: $id, rules: $rules) {\n      id\n      ...McpServerFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveMcpServer($id: ID!) {\n    removeMcpServer(id: $id) {\n      id\n      removedAt\n    }\n  }\n"): (typeof documents)["\n  mutation RemoveMcpServer($id: ID!) {\n    removeMcpServer(id: $id) {\n      id\n      removedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query People {\n    users {\n      id\n      name\n      email\n      role\n    }\n    agents {\n      id\n      name\n    }\n    agentGrants {\n      id\n      permission\n      skillId\n      user {\n        id\n        name\n        email\n      }\n      agent {\n        id\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  query People {\n    users {\n      id\n      name\n      email\n      role\n    }\n    agents {\n      id\n      name\n    }\n    agentGrants {\n      id\n      permission\n      skillId\n      user {\n        id\n        name\n        email\n      }\n      agent {\n        id\n        name\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeGrant($grantId: ID!) {\n    revokeAgentAccess(grantId: $grantId) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeGrant($grantId: ID!) {\n    revokeAgentAccess(grantId: $grantId) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) {\n      id\n      name\n      email\n      role\n    }\n  }\n"): (typeof documents)["\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) {\n      id\n      name\n      email\n      role\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateToken($input: CreateApiTokenInput!) {\n    createApiToken(input: $input) {\n      token\n    }\n  }\n"): (typeof documents)["\n  mutation CreateToken($input: CreateApiTokenInput!) {\n    createApiToken(input: $input) {\n      token\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateSignInLinkPage($userId: ID!) {\n    createSignInLink(userId: $userId) {\n      url\n      expiresAt\n      user {\n        id\n        email\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateSignInLinkPage($userId: ID!) {\n    createSignInLink(userId: $userId) {\n      url\n      expiresAt\n      user {\n        id\n        email\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Grant($input: GrantAgentAccessInput!) {\n    grantAgentAccess(input: $input) {\n      id\n      permission\n      skillId\n    }\n  }\n"): (typeof documents)["\n  mutation Grant($input: GrantAgentAccessInput!) {\n    grantAgentAccess(input: $input) {\n      id\n      permission\n      skillId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Policies {\n    policies {\n      id\n      name\n      position\n      enabled\n      currentVersion {\n        version\n        condition\n        allowedOutcomes\n        excludeTaskStarter\n        quorum {\n          approvals\n          fromGroupIds\n          rejectionRejects\n        }\n        escalation {\n          afterSeconds\n          toGroup {\n            id\n          }\n          toUser {\n            id\n          }\n          raiseRiskTo\n        }\n      }\n      versions {\n        version\n        condition\n        allowedOutcomes\n        createdAt\n        createdBy {\n          name\n        }\n      }\n    }\n    reviewerGroups {\n      id\n      name\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n"): (typeof documents)["\n  query Policies {\n    policies {\n      id\n      name\n      position\n      enabled\n      currentVersion {\n        version\n        condition\n        allowedOutcomes\n        excludeTaskStarter\n        quorum {\n          approvals\n          fromGroupIds\n          rejectionRejects\n        }\n        escalation {\n          afterSeconds\n          toGroup {\n            id\n          }\n          toUser {\n            id\n          }\n          raiseRiskTo\n        }\n      }\n      versions {\n        version\n        condition\n        allowedOutcomes\n        createdAt\n        createdBy {\n          name\n        }\n      }\n    }\n    reviewerGroups {\n      id\n      name\n    }\n    users {\n      id\n      name\n      email\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePolicy($input: CreatePolicyInput!) {\n    createPolicy(input: $input) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation CreatePolicy($input: CreatePolicyInput!) {\n    createPolicy(input: $input) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdatePolicy($input: UpdatePolicyInput!) {\n    updatePolicy(input: $input) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation UpdatePolicy($input: UpdatePolicyInput!) {\n    updatePolicy(input: $input) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetPolicyEnabled($id: ID!, $enabled: Boolean!) {\n    setPolicyEnabled(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n"): (typeof documents)["\n  mutation SetPolicyEnabled($id: ID!, $enabled: Boolean!) {\n    setPolicyEnabled(id: $id, enabled: $enabled) {\n      id\n      enabled\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReorderPolicies($ids: [ID!]!) {\n    reorderPolicies(ids: $ids) {\n      id\n      position\n    }\n  }\n"): (typeof documents)["\n  mutation ReorderPolicies($ids: [ID!]!) {\n    reorderPolicies(ids: $ids) {\n      id\n      position\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeletePolicy($id: ID!) {\n    deletePolicy(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeletePolicy($id: ID!) {\n    deletePolicy(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment RegisteredAgent on Agent {\n    id\n    name\n    kind\n    cardUrl\n    endpointUrl\n  }\n"): (typeof documents)["\n  fragment RegisteredAgent on Agent {\n    id\n    name\n    kind\n    cardUrl\n    endpointUrl\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RegisterAgent($cardUrl: String!) {\n    registerAgent(input: { cardUrl: $cardUrl }) {\n      ...RegisteredAgent\n    }\n  }\n"): (typeof documents)["\n  mutation RegisterAgent($cardUrl: String!) {\n    registerAgent(input: { cardUrl: $cardUrl }) {\n      ...RegisteredAgent\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RegisterAgUiAgent($endpointUrl: String!, $name: String!) {\n    registerAgUiAgent(input: { endpointUrl: $endpointUrl, name: $name }) {\n      ...RegisteredAgent\n    }\n  }\n"): (typeof documents)["\n  mutation RegisterAgUiAgent($endpointUrl: String!, $name: String!) {\n    registerAgUiAgent(input: { endpointUrl: $endpointUrl, name: $name }) {\n      ...RegisteredAgent\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SignInLinkPage($secret: String!) {\n    signInLink(secret: $secret) {\n      email\n      name\n      expiresAt\n    }\n  }\n"): (typeof documents)["\n  query SignInLinkPage($secret: String!) {\n    signInLink(secret: $secret) {\n      email\n      name\n      expiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetPasswordWithLinkPage($secret: String!, $password: String!) {\n    setPasswordWithLink(secret: $secret, password: $password) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation SetPasswordWithLinkPage($secret: String!, $password: String!) {\n    setPasswordWithLink(secret: $secret, password: $password) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SignIn($email: String!, $password: String!) {\n    signIn(email: $email, password: $password) {\n      id\n      email\n    }\n  }\n"): (typeof documents)["\n  mutation SignIn($email: String!, $password: String!) {\n    signIn(email: $email, password: $password) {\n      id\n      email\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TranscriptMessage on TaskMessage {\n    messageId\n    role\n    stepSeq\n    createdAt\n    parts\n    form\n    formPartIndex\n    a2ui\n    a2uiPartIndex\n  }\n"): (typeof documents)["\n  fragment TranscriptMessage on TaskMessage {\n    messageId\n    role\n    stepSeq\n    createdAt\n    parts\n    form\n    formPartIndex\n    a2ui\n    a2uiPartIndex\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment Transcript on Task {\n    id\n    state\n    limitReason\n    messages(last: 50) {\n      ...TranscriptMessage\n    }\n    statusHistory {\n      state\n      at\n    }\n  }\n"): (typeof documents)["\n  fragment Transcript on Task {\n    id\n    state\n    limitReason\n    messages(last: 50) {\n      ...TranscriptMessage\n    }\n    statusHistory {\n      state\n      at\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TaskEarlierMessages($id: ID!, $before: Int!) {\n    task(id: $id) {\n      id\n      messages(last: 50, before: $before) {\n        ...TranscriptMessage\n      }\n    }\n  }\n"): (typeof documents)["\n  query TaskEarlierMessages($id: ID!, $before: Int!) {\n    task(id: $id) {\n      id\n      messages(last: 50, before: $before) {\n        ...TranscriptMessage\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TaskPage($id: ID!) {\n    task(id: $id) {\n      id\n      state\n      skillId\n      createdAt\n      contextId\n      agent {\n        id\n        name\n      }\n      createdBy {\n        id\n        name\n      }\n      ...Transcript\n    }\n    approvals(taskId: $id, first: 20) {\n      edges {\n        node {\n          id\n          title\n          status\n          revision\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query TaskPage($id: ID!) {\n    task(id: $id) {\n      id\n      state\n      skillId\n      createdAt\n      contextId\n      agent {\n        id\n        name\n      }\n      createdBy {\n        id\n        name\n      }\n      ...Transcript\n    }\n    approvals(taskId: $id, first: 20) {\n      edges {\n        node {\n          id\n          title\n          status\n          revision\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription TaskLive($id: ID!) {\n    taskUpdated(taskId: $id) {\n      id\n      ...Transcript\n    }\n  }\n"): (typeof documents)["\n  subscription TaskLive($id: ID!) {\n    taskUpdated(taskId: $id) {\n      id\n      ...Transcript\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubmitTaskForm($input: SubmitTaskFormInput!) {\n    submitTaskForm(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n"): (typeof documents)["\n  mutation SubmitTaskForm($input: SubmitTaskFormInput!) {\n    submitTaskForm(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendA2uiAction($input: SendA2uiActionInput!) {\n    sendA2uiAction(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n"): (typeof documents)["\n  mutation SendA2uiAction($input: SendA2uiActionInput!) {\n    sendA2uiAction(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendTaskMessage($input: SendTaskMessageInput!) {\n    sendTaskMessage(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n"): (typeof documents)["\n  mutation SendTaskMessage($input: SendTaskMessageInput!) {\n    sendTaskMessage(input: $input) {\n      id\n      ...Transcript\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Tasks {\n    tasks(first: 100) {\n      edges {\n        node {\n          id\n          state\n          skillId\n          createdAt\n          updatedAt\n          agent {\n            id\n            name\n          }\n        }\n      }\n    }\n    agents {\n      id\n      name\n      kind\n      startForm\n      skills {\n        id\n        name\n        description\n      }\n    }\n  }\n"): (typeof documents)["\n  query Tasks {\n    tasks(first: 100) {\n      edges {\n        node {\n          id\n          state\n          skillId\n          createdAt\n          updatedAt\n          agent {\n            id\n            name\n          }\n        }\n      }\n    }\n    agents {\n      id\n      name\n      kind\n      startForm\n      skills {\n        id\n        name\n        description\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartTask($input: StartTaskInput!) {\n    startTask(input: $input) {\n      id\n      state\n    }\n  }\n"): (typeof documents)["\n  mutation StartTask($input: StartTaskInput!) {\n    startTask(input: $input) {\n      id\n      state\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WaitingForInput {\n    tasksWaitingForInput(first: 50) {\n      reason\n      detail\n      messageId\n      since\n      task {\n        id\n        state\n        agent {\n          id\n          name\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WaitingForInput {\n    tasksWaitingForInput(first: 50) {\n      reason\n      detail\n      messageId\n      since\n      task {\n        id\n        state\n        agent {\n          id\n          name\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WaitingForInputChanged {\n    waitingForInputChanged {\n      id\n      state\n    }\n  }\n"): (typeof documents)["\n  subscription WaitingForInputChanged {\n    waitingForInputChanged {\n      id\n      state\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment WebhookEndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    eventTypes\n    enabled\n    createdAt\n    secrets {\n      createdAt\n      expiresAt\n    }\n    deliveries(first: 20) {\n      edges {\n        node {\n          id\n          webhookId\n          type\n          status\n          createdAt\n          deliveredAt\n          nextAttemptAt\n          lastStatusCode\n          lastError\n          payload\n          attempts {\n            number\n            at\n            statusCode\n            error\n            durationMs\n            nextRetryAt\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment WebhookEndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    eventTypes\n    enabled\n    createdAt\n    secrets {\n      createdAt\n      expiresAt\n    }\n    deliveries(first: 20) {\n      edges {\n        node {\n          id\n          webhookId\n          type\n          status\n          createdAt\n          deliveredAt\n          nextAttemptAt\n          lastStatusCode\n          lastError\n          payload\n          attempts {\n            number\n            at\n            statusCode\n            error\n            durationMs\n            nextRetryAt\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Webhooks {\n    webhookEndpoints {\n      id\n      ...WebhookEndpointFields\n    }\n    eventTypes: __type(name: \"WebhookEventType\") {\n      enumValues {\n        name\n        description\n      }\n    }\n  }\n"): (typeof documents)["\n  query Webhooks {\n    webhookEndpoints {\n      id\n      ...WebhookEndpointFields\n    }\n    eventTypes: __type(name: \"WebhookEventType\") {\n      enumValues {\n        name\n        description\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      ...WebhookEndpointFields\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      ...WebhookEndpointFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RotateWebhookSecret($id: ID!, $graceSeconds: Int) {\n    rotateWebhookSecret(id: $id, graceSeconds: $graceSeconds) {\n      secret\n      endpoint {\n        id\n        ...WebhookEndpointFields\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RotateWebhookSecret($id: ID!, $graceSeconds: Int) {\n    rotateWebhookSecret(id: $id, graceSeconds: $graceSeconds) {\n      secret\n      endpoint {\n        id\n        ...WebhookEndpointFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendWebhookTestEvent($id: ID!) {\n    sendWebhookTestEvent(id: $id) {\n      id\n      webhookId\n    }\n  }\n"): (typeof documents)["\n  mutation SendWebhookTestEvent($id: ID!) {\n    sendWebhookTestEvent(id: $id) {\n      id\n      webhookId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ActionEditor on ApprovalRevision {\n    action\n  }\n"): (typeof documents)["\n  fragment ActionEditor on ApprovalRevision {\n    action\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AuditTrail on Approval {\n    agent {\n      id\n      name\n    }\n    events {\n      seq\n      type\n      actorType\n      actorId\n      actor {\n        id\n        name\n      }\n      at\n      hash\n      prevHash\n      data\n    }\n    chain {\n      ok\n      events\n      firstBrokenSeq\n      reason\n    }\n  }\n"): (typeof documents)["\n  fragment AuditTrail on Approval {\n    agent {\n      id\n      name\n    }\n    events {\n      seq\n      type\n      actorType\n      actorId\n      actor {\n        id\n        name\n      }\n      at\n      hash\n      prevHash\n      data\n    }\n    chain {\n      ok\n      events\n      firstBrokenSeq\n      reason\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment DecisionPanel on Approval {\n    id\n    title\n    risk\n    status\n    source\n    editable\n    command {\n      approvalId\n    }\n    policy {\n      name\n      version\n      isDefault\n      allowedOutcomes\n      conditionError\n    }\n    assignee {\n      id\n      name\n    }\n    viewerCannotDecide\n    supersededBy {\n      id\n      title\n    }\n    quorum {\n      required\n      count\n    }\n    decisions {\n      id\n      outcome\n      vote\n      revision\n      digest\n      comment\n      decidedAt\n      reviewer {\n        id\n        name\n        email\n      }\n      delegatedTo {\n        id\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment DecisionPanel on Approval {\n    id\n    title\n    risk\n    status\n    source\n    editable\n    command {\n      approvalId\n    }\n    policy {\n      name\n      version\n      isDefault\n      allowedOutcomes\n      conditionError\n    }\n    assignee {\n      id\n      name\n    }\n    viewerCannotDecide\n    supersededBy {\n      id\n      title\n    }\n    quorum {\n      required\n      count\n    }\n    decisions {\n      id\n      outcome\n      vote\n      revision\n      digest\n      comment\n      decidedAt\n      reviewer {\n        id\n        name\n        email\n      }\n      delegatedTo {\n        id\n        name\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment DecisionResult on Decision {\n    id\n    outcome\n    revision\n    approval {\n      id\n      ...ApprovalView\n    }\n  }\n"): (typeof documents)["\n  fragment DecisionResult on Decision {\n    id\n    outcome\n    revision\n    approval {\n      id\n      ...ApprovalView\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Approve($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n"): (typeof documents)["\n  mutation Approve($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Reject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n"): (typeof documents)["\n  mutation Reject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RequestChanges($input: DecideInput!) {\n    requestChanges(input: $input) {\n      ...DecisionResult\n    }\n  }\n"): (typeof documents)["\n  mutation RequestChanges($input: DecideInput!) {\n    requestChanges(input: $input) {\n      ...DecisionResult\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EditAndApprove($input: EditAndApproveInput!) {\n    editAndApprove(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n"): (typeof documents)["\n  mutation EditAndApprove($input: EditAndApproveInput!) {\n    editAndApprove(input: $input) {\n      id\n      vote\n      ...DecisionResult\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Delegate($input: DelegateInput!) {\n    delegate(input: $input) {\n      ...DecisionResult\n    }\n  }\n"): (typeof documents)["\n  mutation Delegate($input: DelegateInput!) {\n    delegate(input: $input) {\n      ...DecisionResult\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DelegateCandidates($id: ID!) {\n    approval(id: $id) {\n      id\n      delegateCandidates {\n        id\n        name\n        email\n      }\n    }\n  }\n"): (typeof documents)["\n  query DelegateCandidates($id: ID!) {\n    approval(id: $id) {\n      id\n      delegateCandidates {\n        id\n        name\n        email\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment DeliveryLedger on Approval {\n    id\n    status\n    source\n    agent {\n      id\n      kind\n    }\n    task {\n      id\n    }\n    execution {\n      status\n      attempts\n      messageId\n      lastError\n      ...ExecutionEvidence\n    }\n    command {\n      agentId\n      status\n      grant {\n        status\n        consumedAt\n        expiresAt\n      }\n    }\n    events {\n      seq\n      type\n      data\n    }\n  }\n"): (typeof documents)["\n  fragment DeliveryLedger on Approval {\n    id\n    status\n    source\n    agent {\n      id\n      kind\n    }\n    task {\n      id\n    }\n    execution {\n      status\n      attempts\n      messageId\n      lastError\n      ...ExecutionEvidence\n    }\n    command {\n      agentId\n      status\n      grant {\n        status\n        consumedAt\n        expiresAt\n      }\n    }\n    events {\n      seq\n      type\n      data\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RetryDelivery($id: ID!) {\n    retryDelivery(approvalId: $id) {\n      id\n      version\n      ...DeliveryLedger\n    }\n  }\n"): (typeof documents)["\n  mutation RetryDelivery($id: ID!) {\n    retryDelivery(approvalId: $id) {\n      id\n      version\n      ...DeliveryLedger\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalEscalation on Approval {\n    id\n    status\n    risk\n    assigneeGroup {\n      id\n      name\n    }\n    escalation {\n      dueAt\n      escalatedAt\n      toGroup {\n        id\n        name\n      }\n      toUser {\n        id\n        name\n      }\n      raiseRiskTo\n      riskRaisedFrom\n    }\n  }\n"): (typeof documents)["\n  fragment ApprovalEscalation on Approval {\n    id\n    status\n    risk\n    assigneeGroup {\n      id\n      name\n    }\n    escalation {\n      dueAt\n      escalatedAt\n      toGroup {\n        id\n        name\n      }\n      toUser {\n        id\n        name\n      }\n      raiseRiskTo\n      riskRaisedFrom\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ExecutionEvidence on Execution {\n    observedTaskState\n    observedAt\n    digestMismatch\n    evidence {\n      id\n      outcome\n      detail\n      reportedDigest\n      approvedDigest\n      digestMatches\n      messageId\n      reportedAt\n    }\n  }\n"): (typeof documents)["\n  fragment ExecutionEvidence on Execution {\n    observedTaskState\n    observedAt\n    digestMismatch\n    evidence {\n      id\n      outcome\n      detail\n      reportedDigest\n      approvedDigest\n      digestMatches\n      messageId\n      reportedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalIntegrityAlerts on Approval {\n    id\n    integrityAlerts {\n      id\n      at\n      kind\n      problem\n      message\n    }\n  }\n"): (typeof documents)["\n  fragment ApprovalIntegrityAlerts on Approval {\n    id\n    integrityAlerts {\n      id\n      at\n      kind\n      problem\n      message\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalMcpCall on Approval {\n    id\n    status\n    revisions {\n      number\n      action\n    }\n    mcpCall {\n      ...McpHeldCall\n    }\n  }\n"): (typeof documents)["\n  fragment ApprovalMcpCall on Approval {\n    id\n    status\n    revisions {\n      number\n      action\n    }\n    mcpCall {\n      ...McpHeldCall\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment McpHeldCall on McpHeldCall {\n    server\n    tool\n    waiting\n    forwardedAt\n    resultDigest\n    resultIsError\n  }\n"): (typeof documents)["\n  fragment McpHeldCall on McpHeldCall {\n    server\n    tool\n    waiting\n    forwardedAt\n    resultDigest\n    resultIsError\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpCallNow($id: ID!) {\n    approval(id: $id) {\n      id\n      mcpCall {\n        ...McpHeldCall\n      }\n    }\n  }\n"): (typeof documents)["\n  query McpCallNow($id: ID!) {\n    approval(id: $id) {\n      id\n      mcpCall {\n        ...McpHeldCall\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment QuorumProgress on Approval {\n    id\n    status\n    quorum {\n      required\n      count\n      met\n      revision\n      rejectionRejects\n      fromGroupNames\n      approvals {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n          email\n        }\n      }\n      rejections {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment QuorumProgress on Approval {\n    id\n    status\n    quorum {\n      required\n      count\n      met\n      revision\n      rejectionRejects\n      fromGroupNames\n      approvals {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n          email\n        }\n      }\n      rejections {\n        id\n        decidedAt\n        reviewer {\n          id\n          name\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ApprovalRevisions on Approval {\n    id\n    revision\n    revisions {\n      number\n      digest\n      action\n      createdAt\n      createdBy {\n        type\n        id\n        user {\n          id\n          name\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment ApprovalRevisions on Approval {\n    id\n    revision\n    revisions {\n      number\n      digest\n      action\n      createdAt\n      createdBy {\n        type\n        id\n        user {\n          id\n          name\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment InboxFilters on Query {\n    agents {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  fragment InboxFilters on Query {\n    agents {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment InboxRow on Approval {\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n    }\n    assignee {\n      id\n      name\n    }\n    assigneeGroup {\n      name\n    }\n    escalatedAt\n    riskRaisedFrom\n    command {\n      agentId\n    }\n    quorumRequired\n    quorumCount\n  }\n"): (typeof documents)["\n  fragment InboxRow on Approval {\n    task {\n      id\n      state\n    }\n    requester {\n      id\n      name\n    }\n    assignee {\n      id\n      name\n    }\n    assigneeGroup {\n      name\n    }\n    escalatedAt\n    riskRaisedFrom\n    command {\n      agentId\n    }\n    quorumRequired\n    quorumCount\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment InboxItem on Approval {\n    id\n    version\n    title\n    risk\n    status\n    createdAt\n    expiresAt\n    revision\n    digest\n    action\n    viewerCannotDecide\n    agent {\n      id\n      name\n      kind\n    }\n  }\n"): (typeof documents)["\n  fragment InboxItem on Approval {\n    id\n    version\n    title\n    risk\n    status\n    createdAt\n    expiresAt\n    revision\n    digest\n    action\n    viewerCannotDecide\n    agent {\n      id\n      name\n      kind\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InboxRequested {\n    approvalRequested {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n"): (typeof documents)["\n  subscription InboxRequested {\n    approvalRequested {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InboxChanged {\n    approvalChanged {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n"): (typeof documents)["\n  subscription InboxChanged {\n    approvalChanged {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxItemAgain($id: ID!) {\n    approval(id: $id) {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n"): (typeof documents)["\n  query InboxItemAgain($id: ID!) {\n    approval(id: $id) {\n      id\n      ...InboxItem\n      ...InboxRow\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxApprove($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxApprove($input: DecideInput!) {\n    approve(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxReject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxReject($input: DecideInput!) {\n    reject(input: $input) {\n      id\n      vote\n      approval {\n        id\n        ...InboxItem\n        ...InboxRow\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpServerTools($id: ID!) {\n    mcpServer(id: $id) {\n      id\n      tools {\n        error\n        tools {\n          name\n          title\n          description\n          readOnlyHint\n          destructiveHint\n          outcome\n          rule\n          argumentsMatter\n        }\n      }\n      recentCalls(first: 20) {\n        tool\n        createdAt\n        forwardedAt\n        resultIsError\n        approval {\n          id\n          status\n          title\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query McpServerTools($id: ID!) {\n    mcpServer(id: $id) {\n      id\n      tools {\n        error\n        tools {\n          name\n          title\n          description\n          readOnlyHint\n          destructiveHint\n          outcome\n          rule\n          argumentsMatter\n        }\n      }\n      recentCalls(first: 20) {\n        tool\n        createdAt\n        forwardedAt\n        resultIsError\n        approval {\n          id\n          status\n          title\n        }\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;