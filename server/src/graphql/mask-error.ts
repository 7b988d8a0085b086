import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { ERROR_CODES } from '../errors.js';

// Errors leave the API with a contract code: domain errors as they are, Pothos input
// validation (a well-formed id of the wrong type) as BAD_USER_INPUT, anything unexpected
// masked as INTERNAL_SERVER_ERROR and logged here, never shown to the caller. Checks are by
// shape, not instanceof, so they hold even if two copies of `graphql` are loaded.
type Located = { message: string; nodes?: unknown; path?: unknown; originalError?: unknown; extensions?: Record<string, unknown>; name?: string };

export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const located = error as Located;
  const original = (located?.originalError ?? error) as Located;
  const code = original?.extensions?.code ?? located?.extensions?.code;
  const opts = { nodes: located?.nodes as never, path: located?.path as never };
  if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) {
    return new GraphQLError(original.message, { ...opts, extensions: { ...(original.extensions ?? located.extensions) } });
  }
  if (original?.name === 'PothosValidationError') {
    return new GraphQLError(original.message, { ...opts, extensions: { code: 'BAD_USER_INPUT' } });
  }
  const masked = yogaMaskError(error, message, isDev);
  if (masked !== error) console.error('[graphql] unexpected error:', original ?? error);
  return masked;
}
