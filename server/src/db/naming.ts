import { UnderscoreNamingStrategy } from '@mikro-orm/core';

const SUFFIX = { primary: 'pkey', foreign: 'fkey', unique: 'key', index: 'idx', sequence: 'seq', check: 'check' } as const;

/**
 * Columns as UnderscoreNamingStrategy names them; constraints and indexes as Postgres names them
 * when the migration's SQL gives no name (`<table>_<columns>_key`, `_fkey`, `_check`, `_idx`,
 * `_pkey`), so the schema MikroORM derives from the entities uses the names the hand-written
 * migrations have (server/test/integration/db/entity-schema.test.ts compares the two).
 */
export class PostgresNamingStrategy extends UnderscoreNamingStrategy {
  override indexName(tableName: string, columns: string[], type: keyof typeof SUFFIX): string {
    const table = tableName.includes('.') ? tableName.slice(tableName.indexOf('.') + 1) : tableName;
    if (type === 'primary') return `${table}_pkey`;
    return [table, ...columns.map((c) => c.replace(/\./g, '_')), SUFFIX[type]].join('_');
  }
}
