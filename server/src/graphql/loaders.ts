import DataLoader from 'dataloader';
import { rowToEvent, type AuditEventRow } from '../audit/log.js';
import { readRows } from '../db/read-rows.js';
import { sql } from '../db/sql.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent, CardSnapshot, type AgentRow, type CardSnapshotRow } from '../agents/entities.js';
import { ApprovalRequest, Revision, type ApprovalRow, type RevisionRow } from '../approvals/entities.js';
import { User, type UserRow } from '../auth/entities.js';
import { Decision, type DecisionRow } from '../decisions/entities.js';
import { Delivery, type DeliveryRow } from '../delivery/entities.js';
import { ReviewerGroup, ReviewerGroupMember, type ReviewerGroupMemberRow, type ReviewerGroupRow } from '../groups/entities.js';
import { Task, TaskStatusEntry, type TaskRow, type TaskStatusRow } from '../tasks/entities.js';
import { transcriptReader } from '../tasks/message-pages.js';

// Per-request batching; never module-level (a loader caches what one viewer may see). The rows
// are read as plain rows (db/read-rows.ts): fields only show them, and making managed entities of
// them (unit of work, snapshots) cost more than the statement (issue 11, the inbox). Code that
// changes a row loads its own entity through the entity manager.

/** A loader by id that also answers, without a promise, for rows a batch has already read. */
export type RowLoader<T> = DataLoader<string, T | null> & { peek(id: string): T | null | undefined };

function byId<T extends { id: string }>(em: EntityManager, entity: any): RowLoader<T> {
  const read = new Map<string, T | null>();
  const loader = new DataLoader<string, T | null>(async (ids) => {
    const rows = (await readRows(em, entity, { id: { $in: [...ids] } } as never)) as T[];
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => {
      const row = map.get(id) ?? null;
      read.set(id, row);
      return row;
    });
  });
  // What peek answers follows the loader's own cache: clearing one clears the other.
  return Object.assign(loader, {
    peek: (id: string) => read.get(id),
    clear: (id: string) => {
      read.delete(id);
      return DataLoader.prototype.clear.call(loader, id);
    },
    clearAll: () => {
      read.clear();
      return DataLoader.prototype.clearAll.call(loader);
    },
  });
}

/**
 * The row of `id`: at once when a batch has read it (a list prefetches what its items show, so
 * each item's fields complete without a promise of their own), else through the loader.
 */
export function rowOf<T>(loader: RowLoader<T>, id: string): T | null | Promise<T | null> {
  const row = loader.peek(id);
  return row !== undefined ? row : loader.load(id);
}

function manyBy<T>(em: EntityManager, entity: any, key: string, orderBy: Record<string, 'asc' | 'desc'>) {
  return new DataLoader<string, T[]>(async (ids) => {
    const rows = (await readRows(em, entity, { [key]: { $in: [...ids] } } as never, { orderBy } as never)) as any[];
    const map = new Map<string, T[]>();
    for (const r of rows) {
      const list = map.get(r[key]) ?? [];
      list.push(r);
      map.set(r[key], list);
    }
    return ids.map((id) => map.get(id) ?? []);
  });
}

export function createLoaders(em: EntityManager) {
  return {
    user: byId<UserRow>(em, User),
    agent: byId<AgentRow>(em, Agent),
    task: byId<TaskRow>(em, Task),
    approval: byId<ApprovalRow>(em, ApprovalRequest),
    reviewerGroup: byId<ReviewerGroupRow>(em, ReviewerGroup),
    /** A person's reviewer group memberships (by user id). */
    memberships: manyBy<ReviewerGroupMemberRow>(em, ReviewerGroupMember, 'userId', { addedAt: 'asc' }),
    revisions: manyBy<RevisionRow>(em, Revision, 'approvalId', { number: 'asc' }),
    decisions: manyBy<DecisionRow>(em, Decision, 'approvalId', { decidedAt: 'asc' }),
    deliveries: manyBy<DeliveryRow>(em, Delivery, 'approvalId', { createdAt: 'asc' }),
    snapshots: manyBy<CardSnapshotRow>(em, CardSnapshot, 'agentId', { number: 'desc' }),
    /** Transcript pages (Task.messages), within what one request may read (tasks/message-pages.ts). */
    messagePages: transcriptReader(em),
    statuses: manyBy<TaskStatusRow>(em, TaskStatusEntry, 'taskId', { at: 'asc' }),
    events: new DataLoader<string, AuditEventRow[]>(async (streams) => {
      const rows = (await sql(em, 'select * from audit_event where stream in (?) order by seq', [[...streams]])).map(rowToEvent);
      return streams.map((s) => rows.filter((r) => r.stream === s));
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
