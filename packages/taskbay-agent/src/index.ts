// @taskbay/agent: ask Taskbay before an agent acts. requestApproval opens a request, waits for
// its decision and returns it once its signed approval verifies; the framework adapters are the
// subpaths ./ai-sdk, ./openai-agents and ./langgraph (docs/AGENT-FRAMEWORKS.md).

export {
  type ApprovalAction,
  type ApprovalClaims,
  type ApprovalExpectation,
  type ApprovalOutcome,
  type ApprovalRequestInput,
  type ApprovedOutcome,
  type NotApprovedOutcome,
  type OpenedApproval,
  openApproval,
  type PendingOutcome,
  type RequestApprovalOptions,
  type Reviewer,
  type Risk,
  readApproval,
  requestApproval,
  type SignedApproval,
  type WaitOptions,
  waitForApproval,
} from './approval.js';
export type { TaskbayConnection } from './connection.js';
export {
  ApprovalTimeoutError,
  ApprovalVerificationError,
  isTaskbayAgentError,
  TaskbayAgentError,
  type TaskbayAgentErrorCode,
  TaskbayApiError,
} from './errors.js';
export {
  approvedArguments,
  requestToolApproval,
  type ToolApprovalOptions,
  type ToolCall,
  type ToolCallAction,
  toolCallAction,
  type ToolCallDecision,
  type ToolCallDescription,
} from './tool-call.js';
