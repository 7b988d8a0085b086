// The error codes of the Taskbay integration contract (GraphQL extensions.code), as typed errors.
// Keep CONTRACT_ERROR_CODES equal to ERROR_CODES in server/src/errors.ts: a test compares them.

/** The codes the server's contract names (docs/ARCHITECTURE.md, "Integration contract"). */
export const CONTRACT_ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'STALE_REVISION',
  'NOT_PENDING',
  'EXPIRED',
  'SEPARATION_OF_DUTIES',
  'INVALID_ACTION',
  'ALREADY_VOTED',
  'OUTCOME_NOT_ALLOWED',
] as const;
export type ContractErrorCode = (typeof CONTRACT_ERROR_CODES)[number];

/**
 * What a TaskbayError's `code` can be: a contract code, or
 * - INTERNAL_SERVER_ERROR: the server failed unexpectedly (it logged the cause and masked it), or
 *   answered with a code outside the contract (kept in `extensions.code`);
 * - NETWORK_ERROR: no GraphQL answer (unreachable, not JSON, connection lost).
 */
export type TaskbayErrorCode = ContractErrorCode | 'INTERNAL_SERVER_ERROR' | 'NETWORK_ERROR';

/**
 * Why a BAD_USER_INPUT was refused, when the server says (extensions.reason): request limits,
 * replies already sent, skill routing, command grants. Open: new reasons may appear.
 */
export type TaskbayErrorReason =
  | 'TOO_MANY_TOKENS'
  | 'TOO_DEEP'
  | 'TOO_MANY_ALIASES'
  | 'TOO_MANY_DIRECTIVES'
  | 'TOO_COSTLY'
  | 'INPUT_TOO_DEEP'
  | 'BODY_TOO_LARGE'
  | 'TOO_MANY_OPERATIONS'
  | 'RATE_LIMITED'
  | 'ALREADY_ANSWERED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'UNKNOWN_SKILL'
  | (string & {});

/**
 * What `extensions` carries beside `code` and `reason`, per code, when the server says more
 * (docs/CLIENT.md "Errors"). `isTaskbayError(e, code)` narrows `e.extensions` to it.
 */
export interface TaskbayErrorExtensions {
  UNAUTHENTICATED: { retryAfterSeconds?: number };
  FORBIDDEN: object;
  NOT_FOUND: object;
  BAD_USER_INPUT: { retryAfterSeconds?: number; failure?: string };
  /** The request moved on: decide again on currentRevision (its digest is currentDigest). */
  STALE_REVISION: { currentRevision: number; currentDigest: string };
  /** The request's (or command approval's) status now. */
  NOT_PENDING: { status?: string };
  EXPIRED: object;
  SEPARATION_OF_DUTIES: object;
  INVALID_ACTION: object;
  ALREADY_VOTED: object;
  /** The outcome asked for and the ones the request's policy allows. */
  OUTCOME_NOT_ALLOWED: { outcome: string; allowedOutcomes: string[] };
  INTERNAL_SERVER_ERROR: object;
  NETWORK_ERROR: object;
}

/** The extensions of an error with code C, as sent. */
export type ExtensionsOf<C extends TaskbayErrorCode> = Readonly<{ code: string; reason?: TaskbayErrorReason } & TaskbayErrorExtensions[C]> &
  Readonly<Record<string, unknown>>;

/** One GraphQL error as the server sends it. */
export interface GraphQLErrorEntry {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: Record<string, unknown>;
}

const KNOWN = new Set<string>(CONTRACT_ERROR_CODES);

export class TaskbayError extends Error {
  override readonly name = 'TaskbayError';
  readonly code: TaskbayErrorCode;
  /** extensions.reason of the (first) error, when given. */
  readonly reason: TaskbayErrorReason | undefined;
  /** extensions of the (first) error as sent (code, reason, retryAfterSeconds, ...). */
  readonly extensions: Readonly<Record<string, unknown>>;
  /** Every GraphQL error of the answer (the first one names code and message). */
  readonly errors: readonly GraphQLErrorEntry[];
  /** The HTTP status of the answer, when it came over HTTP. */
  readonly status: number | undefined;

  constructor(
    code: TaskbayErrorCode,
    message: string,
    opts: { extensions?: Record<string, unknown>; errors?: readonly GraphQLErrorEntry[]; status?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.extensions = opts.extensions ?? { code };
    this.reason = typeof this.extensions.reason === 'string' ? this.extensions.reason : undefined;
    this.errors = opts.errors ?? [{ message, extensions: this.extensions as Record<string, unknown> }];
    this.status = opts.status;
  }

  /** The error of a GraphQL answer's `errors` (the first names the code). */
  static fromGraphQL(errors: readonly GraphQLErrorEntry[], status?: number): TaskbayError {
    const first = errors[0] ?? { message: 'the server answered with an empty errors list' };
    const sent = first.extensions?.code;
    const code: TaskbayErrorCode = typeof sent === 'string' && KNOWN.has(sent) ? (sent as ContractErrorCode) : 'INTERNAL_SERVER_ERROR';
    return new TaskbayError(code, first.message, { extensions: { ...(first.extensions ?? {}), code: sent ?? code }, errors, status });
  }
}

/** Whether `e` is a TaskbayError, optionally with one of these codes (narrows `code`). */
export function isTaskbayError<C extends TaskbayErrorCode>(e: unknown, ...codes: C[]): e is TaskbayError & { code: C; extensions: ExtensionsOf<C> } {
  return e instanceof TaskbayError && (codes.length === 0 || (codes as TaskbayErrorCode[]).includes(e.code));
}
