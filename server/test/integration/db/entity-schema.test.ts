import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, ormOptions } from '../../../src/db/orm.js';
import { ENTITIES } from '../../../src/modules.js';
import { createTestDatabase, roleUrls } from '../../support/harness.js';

// The entities and the migrations describe one schema. A fresh database is migrated with the
// committed migrations (as Taskbay does at startup), then MikroORM's schema generator derives the
// schema from the entity metadata and lists what it would change in that database: a column,
// relation (foreign key), unique, index or check declared on one side and not the other fails
// here. Triggers and functions are not part of the comparison (MikroORM does not model them).

/**
 * Tables in the database that no entity describes, each with its reason. Only the `public`
 * schema is compared: `graphile_worker` is graphile-worker's own, migrated by its own code.
 */
const TABLES_WITHOUT_ENTITY: Record<string, string> = {
  sign_in_limit: "rate-limiter-flexible's counters (auth/sign-in-limiter.ts): the library reads and writes them, the ORM never does",
  audit_verification:
    "the worker's signed verification state (audit/verification-store.ts): read and written with plain SQL under a row lock and a signature over the row, never through the ORM",
  audit_failure:
    'failed verifications of the audit log (audit/failures.ts): append-only, each row signed, read and written with plain SQL, never through the ORM',
};

let orm: MikroORM;

beforeAll(async () => {
  const { ownerUrl } = roleUrls(await createTestDatabase({ empty: true }));
  orm = await MikroORM.init({ ...ormOptions(ownerUrl, 2, ENTITIES), schemaGenerator: { skipTables: Object.keys(TABLES_WITHOUT_ENTITY) } });
  await migrate(orm, ownerUrl);
});

afterAll(async () => {
  await orm?.close(true);
});

describe('entity metadata and the migrated tables', () => {
  it('agree: the schema generator has nothing to change in a freshly migrated database', async () => {
    const changes = await orm.schema.getUpdateSchemaSQL({ wrap: false, schema: 'public' });
    expect(changes.trim()).toBe('');
  });

  it("cover every table: each table of the public schema is an entity's, or listed above with its reason", async () => {
    const rows = await orm.em
      .getConnection()
      .execute<{ name: string }[]>(`select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'mikro_orm_migrations' order by 1`);
    const entityTables = Object.values(orm.getMetadata().getAll()).map((meta) => meta.tableName);
    expect(rows.map((r) => r.name)).toEqual([...entityTables, ...Object.keys(TABLES_WITHOUT_ENTITY)].sort());
  });
});
