import { MikroORM } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { migrationsList } from '../../../src/db/migrations/index.js';
import { migrate, ormOptions } from '../../../src/db/orm.js';
import { createTestDatabase, roleUrls } from '../../support/harness.js';

// The migrations run in the order of their names (db/migrations/index.ts). MikroORM records what
// ran by name only, and databases exist that ran two of them in another order, whole or part of
// the way (docs/choices.md "Issue 24: one place per rule"). Each must reach the schema a fresh
// database reaches in name order: the whole public schema (columns, constraints, indexes,
// functions, triggers) and the record of what ran are compared.

/** The other order: policies after evidence, grant_row_final after audit_full_verification_result. */
const EARLIER_ORDER = [
  ...names('Migration20261129000000_initial', 'Migration20261203000000_policy_contract'),
  'Migration20261203002000_quorum_votes',
  'Migration20261203003000_escalation',
  'Migration20261203004000_execution_evidence',
  'Migration20261203001000_policies',
  'Migration20261203005000_agui_agents',
  'Migration20261203006001_webhook_endpoint_changes',
  'Migration20261203006002_audit_full_verification_result',
  'Migration20261203000200_grant_row_final',
  ...names('Migration20261203007000_delivery_claim', migrationsList.at(-1)!.name),
];

/** The names of the list from `first` to `last`, both included. */
function names(first: string, last: string): string[] {
  const all = migrationsList.map((m) => m.name);
  return all.slice(all.indexOf(first), all.indexOf(last) + 1);
}

const inOrder = (order: string[]) => order.map((name) => migrationsList.find((m) => m.name === name)!);

/** A new empty database (template0) and the owner's URL, as Taskbay migrates with. */
async function emptyDatabase(): Promise<string> {
  return roleUrls(await createTestDatabase({ empty: true })).ownerUrl;
}

/** Runs `list`'s migrations in its order, up to and including `to` when given. */
async function runInOrder(url: string, list: typeof migrationsList, to?: string) {
  const base = ormOptions(url, 2);
  const orm = await MikroORM.init({ ...base, migrations: { ...base.migrations, migrationsList: list } });
  try {
    await orm.getMigrator().up(to ? { to } : undefined);
  } finally {
    await orm.close(true);
  }
}

/** Migrates as Taskbay does at startup (the committed list). */
async function migrateAsTaskbay(url: string) {
  const orm = await MikroORM.init(ormOptions(url, 2));
  try {
    await migrate(orm, url);
  } finally {
    await orm.close(true);
  }
}

/** Everything of the public schema that a migration makes, as definitions, and what ran. */
async function schemaOf(url: string): Promise<{ schema: string[]; ran: string[] }> {
  const orm = await MikroORM.init(ormOptions(url, 2));
  try {
    const rows = await orm.em.getConnection().execute<{ item: string }[]>(`
      select 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as item
        from information_schema.columns where table_schema = 'public'
      union all
      select 'constraint ' || conrelid::regclass || '.' || conname || ' ' || pg_get_constraintdef(oid)
        from pg_constraint where connamespace = 'public'::regnamespace
      union all
      select 'index ' || indexdef from pg_indexes where schemaname = 'public'
      union all
      select 'function ' || pg_get_functiondef(oid) from pg_proc where pronamespace = 'public'::regnamespace and prokind in ('f', 'p')
      union all
      select 'trigger ' || pg_get_triggerdef(t.oid)
        from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = 'public'::regnamespace and not t.tgisinternal
      order by 1`);
    const ran = await orm.em.getConnection().execute<{ name: string }[]>('select name from mikro_orm_migrations order by name');
    return { schema: rows.map((r) => r.item), ran: ran.map((r) => r.name) };
  } finally {
    await orm.close(true);
  }
}

describe('migrations in the order of their names', () => {
  it('a database migrated in the earlier order, whole or part of the way and then by Taskbay, has the schema of a fresh one', async () => {
    expect([...EARLIER_ORDER].sort()).toEqual(migrationsList.map((m) => m.name));
    expect(EARLIER_ORDER).not.toEqual(migrationsList.map((m) => m.name));

    const [fresh, earlier, partly] = await Promise.all([emptyDatabase(), emptyDatabase(), emptyDatabase()]);
    await migrateAsTaskbay(fresh);
    // The whole earlier order, then Taskbay's start: nothing is left to run.
    await runInOrder(earlier, inOrder(EARLIER_ORDER));
    await migrateAsTaskbay(earlier);
    // Up to where the earlier order had run quorum, escalation and evidence but not yet policies
    // (nor grant_row_final): Taskbay then runs the rest in name order.
    await runInOrder(partly, inOrder(EARLIER_ORDER), 'Migration20261203004000_execution_evidence');
    expect((await schemaOf(partly)).ran).not.toContain('Migration20261203001000_policies');
    await migrateAsTaskbay(partly);

    const expected = await schemaOf(fresh);
    expect(expected.ran).toEqual(migrationsList.map((m) => m.name));
    expect(expected.schema.some((item) => item.includes('approval_grant_final'))).toBe(true);
    expect(await schemaOf(earlier)).toEqual(expected);
    expect(await schemaOf(partly)).toEqual(expected);
  }, 120_000);
});
