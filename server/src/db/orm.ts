import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { runMigrations } from 'graphile-worker';
import { migrationsList } from './migrations/index.js';
import { log } from '../log.js';
import { PostgresNamingStrategy } from './naming.js';

/**
 * `entities`: every module's (modules.ts ENTITIES) for the server; none for an ORM that only
 * migrates, which reads no rows through entities.
 */
export function ormOptions(databaseUrl: string, poolMax = 10, entities: readonly unknown[] = []): Options {
  return {
    clientUrl: databaseUrl,
    entities: [...entities] as Options['entities'],
    extensions: [Migrator],
    migrations: { migrationsList, tableName: 'mikro_orm_migrations', transactional: true, allOrNothing: true, silent: true },
    pool: { min: 0, max: poolMax },
    allowGlobalContext: false,
    debug: false,
    discovery: { warnWhenNoEntities: entities.length > 0 },
    forceUtcTimezone: true,
    // knex's own warnings (a dropped pooled connection, say) as log lines, not console output.
    driverOptions: {
      log: {
        warn: (m: unknown) => log.warn(`[db] ${String(m)}`),
        error: (m: unknown) => log.error(`[db] ${String(m)}`),
        deprecate: (m: unknown) => log.warn(`[db] ${String(m)}`),
        debug: () => {},
      },
    },
    namingStrategy: PostgresNamingStrategy,
  };
}

export async function openOrm(databaseUrl: string, poolMax?: number, entities?: readonly unknown[]): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, poolMax, entities));
}

/** Applies the committed migrations, then graphile-worker's own schema. */
export async function migrate(orm: MikroORM, databaseUrl: string): Promise<void> {
  await orm.getMigrator().up();
  await runMigrations({ connectionString: databaseUrl, logger: quietLogger() });
}

import { Logger } from 'graphile-worker';
export function quietLogger(): Logger {
  return new Logger(() => (level: string, message: string) => {
    if (level === 'error') log.error(`[worker] ${message}`);
    else if (level === 'warning') log.warn(`[worker] ${message}`);
  });
}
