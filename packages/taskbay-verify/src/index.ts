// @taskbay/verify: what an agent needs to trust a Taskbay approval (docs/VERIFYING-APPROVALS.md).
// node:crypto only, no dependencies. Taskbay itself runs this same code: the server's
// verify-approval/ and approvals/digest.ts re-export it, and `agent-taskbay/verify-approval` is
// its bundle.

export { canonicalJson } from './canonical-json.js';
export {
  APPROVAL_REQUEST_EXTENSION,
  APPROVAL_REQUEST_MEDIA_TYPE,
  APPROVAL_TOKEN_TYPE,
  EVIDENCE_DETAIL_MAX_CHARS,
  EXECUTION_EVIDENCE_EXTENSION,
  EXECUTION_EVIDENCE_MEDIA_TYPE,
  JSON_MEDIA_TYPE,
  JWKS_PATH,
  SIGNED_FIELDS,
} from './constants.js';
export { actionDigest, digestInput, type ApprovalAction, type SendDataAction, type SendMessageAction } from './digest.js';
export { executionEvidencePart, type ExecutionEvidence, type ExecutionEvidencePart, type ExecutionOutcome } from './evidence.js';
export { fetchJwks, jwksUrl, type Jwk, type Jwks } from './jws.js';
export type { A2AWireMessage, A2AWirePart, ReceivedApprovedMessage, SdkMessage, SdkMessagePart } from './message.js';
export { MCP_APPROVAL_META_KEY, verifyToolCallApproval, type ToolCallParams, type VerifyToolCallOptions } from './mcp.js';
export { resumePayloadOf, verifyResumeEntry, type ReceivedResumeEntry, type VerifyResumeOptions } from './resume.js';
export {
  receivedAction,
  verifyApprovedMessage,
  verifySignedApproval,
  type ApprovalClaims,
  type OtherApprovedAction,
  type SignedApproval,
  type Verdict,
  type VerifyOptions,
  type VerifySignedOptions,
} from './verify.js';
