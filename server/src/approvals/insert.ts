import { JsonType, ReferenceKind, type EntityMetadata } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { ApprovalRequest, Revision, type ApprovalRow, type RevisionRow } from './entities.js';

// A new request and its first revision in one statement (ingest, docs/PERFORMANCE.md: each statement is a
// round trip and a socket write on the server's one thread, and MikroORM's flush of two new
// entities cost about as much again). The columns come from the entities' metadata, so a
// property added to either entity is written without touching this file. The request is then
// known to the entity manager as a loaded row (merged, its snapshot taken), as after a flush.

type Row = Record<string, unknown>;

function columnsOf(meta: EntityMetadata, data: Row): { columns: string[]; values: unknown[] } {
  const columns: string[] = [];
  const values: unknown[] = [];
  for (const prop of meta.props) {
    if (prop.persist === false || prop.formula || prop.embedded) continue;
    if (prop.kind !== ReferenceKind.SCALAR && prop.kind !== ReferenceKind.MANY_TO_ONE && prop.kind !== ReferenceKind.ONE_TO_ONE) continue;
    const value = data[prop.name];
    if (value === undefined) continue;
    columns.push(`"${prop.fieldNames[0]}"`);
    values.push(value !== null && prop.customType instanceof JsonType ? JSON.stringify(value) : value);
  }
  return { columns, values };
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** Writes the request and its first revision (one INSERT ... WITH); returns the request as a managed entity. */
export async function insertApprovalWithRevision(tem: EntityManager, approval: ApprovalRow, revision: RevisionRow) {
  const a = columnsOf(tem.getMetadata().get(ApprovalRequest.meta.className), approval as unknown as Row);
  const r = columnsOf(tem.getMetadata().get(Revision.meta.className), revision as unknown as Row);
  await sql(
    tem,
    `with a as (insert into approval (${a.columns.join(', ')}) values (${placeholders(a.values.length)}))
     insert into approval_revision (${r.columns.join(', ')}) values (${placeholders(r.values.length)})`,
    [...a.values, ...r.values],
  );
  return tem.merge(ApprovalRequest, approval);
}
