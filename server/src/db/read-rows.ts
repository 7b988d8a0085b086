import type { EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

// Rows for reading only (issue 11, the inbox): the entity's columns mapped to its properties and
// converted as MikroORM converts them (dates, JSON, ids of relations), without making managed
// entities. `em.find` registers each row in the unit of work, takes a snapshot of it (JSON
// columns serialised to compare later) and defines its relation accessors: about two thirds of
// the CPU of reading a page of 50 approvals, for rows that a list only shows. The rows are
// plain objects with the entity's shape; nothing flushes them, so write through the entity
// manager's own entities (loaded by id), never these.

export async function readRows<Row extends object>(
  em: EntityManager,
  entity: EntityName<Row>,
  where: FilterQuery<Row>,
  opts: { orderBy: QueryOrderMap<Row>; limit: number },
): Promise<Row[]> {
  const rows = await em.createQueryBuilder(entity).select('*').where(where).orderBy(opts.orderBy).limit(opts.limit).execute('all', true);
  return rows as Row[];
}
