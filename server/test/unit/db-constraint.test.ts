import { CheckConstraintViolationException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { describe, expect, it } from 'vitest';
import { violatedConstraint } from '../../src/db/constraint.js';

// db/constraint.ts: database errors are told apart by the constraint Postgres names, never by
// message text. The integration tests hit each real constraint (agents/registration.test.ts,
// agui/run-interrupt-resume.test.ts, auth/tenant-emails.test.ts, security/hostile-input.test.ts);
// this checks the reading of the error alone.

/** A pg error as the driver gives it: the message for people, the constraint as a field. */
const pgError = (message: string, constraint?: string) => Object.assign(new Error(message), { code: '23505', constraint });

describe('violatedConstraint', () => {
  it('names the constraint of a constraint violation, whatever the message says', () => {
    const e = new UniqueConstraintViolationException(pgError('doppelter Schlüsselwert verletzt Unique-Constraint', 'task_agent_id_remote_task_id_key'));
    expect(violatedConstraint(e)).toBe('task_agent_id_remote_task_id_key');
    expect(violatedConstraint(new CheckConstraintViolationException(pgError('check failed', 'agent_kind_shape')))).toBe('agent_kind_shape');
  });

  it('is null for a message naming a constraint without the field, and for errors that are not constraint violations', () => {
    expect(
      violatedConstraint(new UniqueConstraintViolationException(pgError('duplicate key value violates unique constraint "task_agent_id_remote_task_id_key"'))),
    ).toBeNull();
    expect(violatedConstraint(new DriverException(pgError('connection lost', 'task_agent_id_remote_task_id_key')))).toBeNull();
    expect(violatedConstraint(pgError('not from the ORM', 'task_agent_id_remote_task_id_key'))).toBeNull();
    expect(violatedConstraint(undefined)).toBeNull();
  });
});
