import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditEventRow } from './entities.js';

// Work that must commit or roll back with the events that cause it: nothing is done for a change
// that rolled back, and nothing is lost for one that committed. A later module (webhooks/
// queues its deliveries here) registers one hook on the ORM; appendEvents, the one writer of the
// log, runs it in its transaction right after the events are inserted. Unlike committed.ts
// (after commit, for counting), a failing hook fails the change.

export type AppendedEventsHook = (tem: EntityManager, rows: readonly AuditEventRow[]) => Promise<void>;

const EXTENSION = 'taskbay:appended-events-hook';

export function registerAppendedEventsHook(orm: { config: { registerExtension(name: string, cb: () => unknown): void } }, hook: AppendedEventsHook) {
  orm.config.registerExtension(EXTENSION, () => hook);
}

/** Called by appendEvents inside its transaction. */
export async function runAppendedEventsHook(tem: EntityManager, rows: readonly AuditEventRow[]): Promise<void> {
  const hook = tem.config.getExtension<AppendedEventsHook>(EXTENSION);
  if (hook && rows.length) await hook(tem, rows);
}
