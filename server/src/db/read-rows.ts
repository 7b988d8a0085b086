import { ReferenceKind, type EntityMetadata, type EntityName, type FilterQuery, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from './sql.js';

// Rows for reading only (the inbox, docs/PERFORMANCE.md): the entity's columns mapped to its properties and
// converted as MikroORM converts them (dates, JSON, ids of relations), without making managed
// entities. `em.find` registers each row in the unit of work, takes a snapshot of it (JSON
// columns serialised to compare later) and defines its relation accessors: about two thirds of
// the CPU of reading a page of 50 approvals, for rows that a list only shows; and building the
// statement through MikroORM's query builder and knex cost as much again as reading the rows. So
// the filter (the small language visibility and list filters use: properties equal to a value
// or null, $in, $lt/$lte/$gt/$gte/$ne, non-empty $and/$or) is written here straight into SQL with the
// entity's column names; a filter outside it goes through the query builder. The rows are plain
// objects with the entity's shape; nothing flushes them, so write through the entity manager's
// own entities (loaded by id), never these.

const COMPARISONS: Record<string, string> = { $lt: '<', $lte: '<=', $gt: '>', $gte: '>=', $ne: '<>' };

class Unsupported extends Error {}

function columnOf(meta: EntityMetadata, key: string): string {
  const prop = meta.properties[key as never] as EntityMetadata['props'][number] | undefined;
  if (!prop || prop.fieldNames?.length !== 1 || (prop.kind !== ReferenceKind.SCALAR && prop.kind !== ReferenceKind.MANY_TO_ONE)) throw new Unsupported(key);
  return `"${prop.fieldNames[0]}"`;
}

const isValue = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date;

function condition(meta: EntityMetadata, where: unknown, params: unknown[]): string {
  if (!where || typeof where !== 'object' || Array.isArray(where)) throw new Unsupported('filter');
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and' || key === '$or') {
      // Empty: MikroORM leaves the operator out (an empty $or matches everything there), so it decides.
      if (!Array.isArray(value) || !value.length) throw new Unsupported(key);
      parts.push(`(${value.map((w) => condition(meta, w, params)).join(key === '$and' ? ' and ' : ' or ')})`);
      continue;
    }
    const column = columnOf(meta, key);
    if (value === null) parts.push(`${column} is null`);
    else if (isValue(value)) {
      parts.push(`${column} = ?`);
      params.push(value);
    } else if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [op, operand] of Object.entries(value)) {
        if (op === '$in' && Array.isArray(operand) && operand.every(isValue)) {
          if (!operand.length) parts.push('false');
          else {
            parts.push(`${column} in (?)`);
            params.push(operand);
          }
        } else if (COMPARISONS[op] && isValue(operand)) {
          parts.push(`${column} ${COMPARISONS[op]} ?`);
          params.push(operand);
        } else throw new Unsupported(op);
      }
    } else throw new Unsupported(key);
  }
  return parts.length ? parts.join(' and ') : 'true';
}

export async function readRows<Row extends object>(
  em: EntityManager,
  entity: EntityName<Row>,
  where: FilterQuery<Row>,
  opts: { orderBy?: QueryOrderMap<Row>; limit?: number } = {},
): Promise<Row[]> {
  const meta = em.getMetadata().get<Row>(entity as never);
  const params: unknown[] = [];
  let text: string;
  try {
    const filter = condition(meta as EntityMetadata, where, params);
    const order = Object.entries(opts.orderBy ?? {}).map(([key, dir]) => {
      if (dir !== 'asc' && dir !== 'desc') throw new Unsupported(String(dir));
      return `${columnOf(meta as EntityMetadata, key)} ${dir}`;
    });
    text = `select * from "${meta.tableName}" where ${filter}`;
    if (order.length) text += ` order by ${order.join(', ')}`;
    if (opts.limit !== undefined) text += ` limit ${Number(opts.limit)}`;
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    const qb = em.createQueryBuilder(entity).select('*').where(where);
    if (opts.orderBy) qb.orderBy(opts.orderBy);
    if (opts.limit !== undefined) qb.limit(opts.limit);
    return (await qb.execute('all', true)) as Row[];
  }
  const driver = em.getDriver();
  return (await sql(em, text, params)).map((r) => driver.mapResult(r as never, meta) as Row);
}
