import type { EntityManager } from '@mikro-orm/postgresql';
import { stream } from '../audit/module.js';
import type { Access } from '../access.js';
import { sql } from '../db/sql.js';
import { DomainError } from '../errors.js';
import { getCommandView } from './service.js';

// Replay (seed 002 `get_executed_payload`): what ran, read from the EXECUTED event.

/**
 * Seed 002 `store.get_executed_payload()`: the commands that ran, as the EXECUTED event recorded
 * them. An approval whose command never ran cleanly has none (the seed: do not assume one).
 */
export async function executedPayload(
  em: EntityManager,
  access: Access,
  id: string,
): Promise<{ approvalId: string; commands: string[]; exitCode: number; executedAt: Date }> {
  const { command } = await getCommandView(em, access, id);
  const [row] = await sql<{ data: any; at: Date }>(em, `select data, at from audit_event where stream = ? and type = 'EXECUTED' order by seq limit 1`, [
    stream.approval(command.id),
  ]);
  if (!row) {
    throw new DomainError(
      'INVALID_ACTION',
      `${command.approvalId} has no EXECUTED event: its command did not run to a clean exit, so there is nothing to replay`,
      {
        reason: 'NOT_EXECUTED',
      },
    );
  }
  const data = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
  return { approvalId: command.approvalId, commands: data.commands as string[], exitCode: data.exit_code as number, executedAt: new Date(row.at) };
}
