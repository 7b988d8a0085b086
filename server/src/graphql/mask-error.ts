import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { ERROR_CODES } from '../errors.js';
import { errorForLog, log } from '../log.js';
import { limitError } from './limits.js';

// Errors leave the API with a contract code: domain errors as they are, Pothos input
// validation (a well-formed id of the wrong type) as BAD_USER_INPUT, anything unexpected
// masked as INTERNAL_SERVER_ERROR and logged here, never shown to the caller. Checks are by
// shape, not instanceof, so they hold even if two copies of `graphql` are loaded.
type Located = { message: string; nodes?: unknown; path?: unknown; originalError?: unknown; extensions?: Record<string, unknown>; name?: string };

/** maskError, with the numbers a refusal should name (Yoga's body limit says only "too large"). */
export function createMaskError(limits: { maxBodyBytes?: number } = {}) {
  return (error: unknown, message: string, isDev?: boolean): Error => mask(error, message, isDev, limits);
}

export const maskError = createMaskError();

function mask(error: unknown, message: string, isDev: boolean | undefined, limits: { maxBodyBytes?: number }): Error {
  const located = error as Located;
  const original = (located?.originalError ?? error) as Located;
  const code = original?.extensions?.code ?? located?.extensions?.code;
  const opts = { nodes: located?.nodes as never, path: located?.path as never };
  if (code === 'REQUEST_ENTITY_TOO_LARGE') {
    // Yoga's maxRequestBodySize: Content-Length over the limit, or the stream counted past it.
    const limit = limits.maxBodyBytes !== undefined ? `the limit is ${limits.maxBodyBytes} bytes` : 'over the limit';
    return limitError('BODY_TOO_LARGE', `the request body is too large; ${limit}`, 413);
  }
  if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) {
    return new GraphQLError(original.message, { ...opts, extensions: { ...(original.extensions ?? located.extensions) } });
  }
  if (original?.name === 'PothosValidationError') {
    return new GraphQLError(original.message, { ...opts, extensions: { code: 'BAD_USER_INPUT' } });
  }
  const masked = yogaMaskError(error, message, isDev);
  if (masked !== error) log.error({ err: errorForLog(original ?? error) }, '[graphql] unexpected error');
  return masked;
}
