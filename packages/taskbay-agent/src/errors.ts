// The errors @taskbay/agent throws. Every one is a TaskbayAgentError; `code` says which.

export type TaskbayAgentErrorCode =
  /** Taskbay answered with a GraphQL error (its extensions.code is in `apiCode`), or with an HTTP error. */
  | 'API_ERROR'
  /** Taskbay could not be reached, or did not answer with GraphQL. */
  | 'NETWORK_ERROR'
  /** No decision within `timeoutMs`. The request stays open in Taskbay (until it expires). */
  | 'TIMEOUT'
  /** The request is APPROVED in Taskbay but its signed approval does not verify: nothing may run. */
  | 'VERIFICATION_FAILED'
  /** The approved action is not a tool call this adapter can run (another tool, no arguments). */
  | 'INVALID_APPROVED_ACTION';

export class TaskbayAgentError extends Error {
  override name = 'TaskbayAgentError';
  readonly code: TaskbayAgentErrorCode;
  /** The Taskbay request this is about, when one was opened. */
  readonly approvalId: string | undefined;

  constructor(code: TaskbayAgentErrorCode, message: string, opts: { approvalId?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.approvalId = opts.approvalId;
  }
}

/** Taskbay refused the request or failed: `apiCode` is the GraphQL error's extensions.code (UNAUTHENTICATED, BAD_USER_INPUT, ...). */
export class TaskbayApiError extends TaskbayAgentError {
  override name = 'TaskbayApiError';
  readonly apiCode: string;
  /** The HTTP status of the answer. */
  readonly status: number | undefined;
  readonly errors: readonly { message: string; extensions?: Record<string, unknown> }[];

  constructor(
    apiCode: string,
    message: string,
    opts: { status?: number; errors?: readonly { message: string; extensions?: Record<string, unknown> }[]; approvalId?: string; cause?: unknown } = {},
  ) {
    super('API_ERROR', message, opts);
    this.apiCode = apiCode;
    this.status = opts.status;
    this.errors = opts.errors ?? [{ message, extensions: { code: apiCode } }];
  }
}

/**
 * The request was approved, but what Taskbay sent does not prove it: the signature, the issuer,
 * the key, the digest of the action or the request it names did not check out. `reason` is the
 * verifier's (or this package's) reason. The approval is never returned and the tool never runs.
 */
export class ApprovalVerificationError extends TaskbayAgentError {
  override name = 'ApprovalVerificationError';
  readonly reason: string;

  constructor(reason: string, opts: { approvalId?: string } = {}) {
    super('VERIFICATION_FAILED', `the approval does not verify: ${reason}`, opts);
    this.reason = reason;
  }
}

/** No decision within timeoutMs; `approvalId` names the request, which stays open (waitForApproval can wait again). */
export class ApprovalTimeoutError extends TaskbayAgentError {
  override name = 'ApprovalTimeoutError';

  constructor(approvalId: string, timeoutMs: number) {
    super('TIMEOUT', `no decision on ${approvalId} within ${timeoutMs} ms`, { approvalId });
  }
}

export function isTaskbayAgentError(e: unknown, ...codes: TaskbayAgentErrorCode[]): e is TaskbayAgentError {
  return e instanceof TaskbayAgentError && (codes.length === 0 || codes.includes(e.code));
}
