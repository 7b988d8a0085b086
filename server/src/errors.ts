import { GraphQLError } from 'graphql';

// The error codes of the integration contract (docs/ARCHITECTURE.md "Integration contract (GraphQL)"), and nothing else.
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'STALE_REVISION',
  'NOT_PENDING',
  'EXPIRED',
  'SEPARATION_OF_DUTIES',
  'INVALID_ACTION',
  /** A reviewer already had their say on this revision (a quorum vote, decisions/quorum.ts). */
  'ALREADY_VOTED',
  'OUTCOME_NOT_ALLOWED',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class DomainError extends GraphQLError {
  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
    super(message, { extensions: { code, ...extra } });
  }
  get code(): ErrorCode {
    return this.extensions.code as ErrorCode;
  }
}

export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} not found`);
export const badInput = (message: string, extra?: Record<string, unknown>) => new DomainError('BAD_USER_INPUT', message, extra);
