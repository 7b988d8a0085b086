import { ConstraintViolationException } from '@mikro-orm/core';

/**
 * The constraint (or unique index) a database error violated, as Postgres names it (the pg
 * error's `constraint` field, which MikroORM's exception carries); null for any other error.
 * Callers tell errors apart by this name: the message is text for people, worded by the server's
 * version and locale.
 */
export function violatedConstraint(e: unknown): string | null {
  if (!(e instanceof ConstraintViolationException)) return null;
  const name = (e as { constraint?: unknown }).constraint;
  return typeof name === 'string' ? name : null;
}
