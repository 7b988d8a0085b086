import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { readRows } from '../db/read-rows.js';
import { sqlWithParams } from '../db/sql.js';
import { badInput } from '../errors.js';
import { TRANSCRIPT_READ_LIMITS } from '../limits.js';
import { TaskMessage, type TaskMessageRow } from './entities.js';

// Reading transcripts a page at a time (GraphQL Task.messages): a task may hold thousands of
// messages and megabytes of agent content, so a read is bounded by TRANSCRIPT_READ_LIMITS before
// any message is loaded. The sizes come first (each message's `bytes`, no content), then only the
// messages that fit are read.

/** One page: the latest `last` messages of the task with a stepSeq below `before` (null: the latest). */
export interface MessagePageKey {
  taskId: string;
  last: number;
  before: number | null;
}

const keyOf = (k: MessagePageKey) => `${k.taskId} ${k.last} ${k.before ?? ''}`;

/** What one request may still read, shared by every page it reads. */
interface ReadBudget {
  bytes: number;
}

const tooMuch = () =>
  badInput(`this request reads more than ${TRANSCRIPT_READ_LIMITS.requestBytesMax} bytes of task messages; read fewer messages or tasks at once`, {
    reason: 'READ_TOO_LARGE',
  });

/**
 * The transcript pages one request reads (a per-request loader: graphql/loaders.ts). Pages are
 * batched and each distinct page is read once; every page answered counts against the
 * request's requestBytesMax, the same page answered again (another alias) too, so the answer
 * stays as bounded as the rows read.
 */
export function transcriptReader(em: EntityManager) {
  const budget: ReadBudget = { bytes: TRANSCRIPT_READ_LIMITS.requestBytesMax };
  const loader = new DataLoader<MessagePageKey, TaskMessageRow[], string>((keys) => readMessagePages(em, keys, budget), { cacheKeyFn: keyOf });
  const answered = new Set<string>();
  return {
    async page(key: MessagePageKey): Promise<TaskMessageRow[]> {
      const rows = await loader.load(key);
      // Its first answer was counted when it was read.
      if (!answered.has(keyOf(key))) {
        answered.add(keyOf(key));
        return rows;
      }
      const bytes = rows.reduce((n, r) => n + r.bytes, 0);
      if (bytes > budget.bytes) throw tooMuch();
      budget.bytes -= bytes;
      return rows;
    },
  };
}

/** Above every stepSeq (an int column). */
const NO_BOUND = 2_147_483_647;

/**
 * The pages of `keys`, in order, each in stepSeq order (oldest first). A page holds the latest
 * messages that fit in pageBytesMax (at least one); a page that does not fit in what the request
 * may still read is an error instead (BAD_USER_INPUT, reason READ_TOO_LARGE), and reads nothing.
 */
async function readMessagePages(em: EntityManager, keys: readonly MessagePageKey[], budget: ReadBudget): Promise<(TaskMessageRow[] | Error)[]> {
  const sizes = await sqlWithParams<{ ord: string; id: string; bytes: number }>(
    em,
    `select k.ord, m.id, m.bytes
       from unnest($1::uuid[], $2::int[], $3::int[]) with ordinality as k(task_id, lim, before, ord)
       cross join lateral (
         select id, step_seq, bytes from task_message
          where task_id = k.task_id and step_seq < k.before
          order by step_seq desc limit k.lim
       ) m
      order by k.ord, m.step_seq desc`,
    [keys.map((k) => k.taskId), keys.map((k) => k.last), keys.map((k) => k.before ?? NO_BOUND)],
  );
  const newestFirst = keys.map((): { id: string; bytes: number }[] => []);
  for (const r of sizes) newestFirst[Number(r.ord) - 1]!.push(r);
  const chosen = newestFirst.map((rows): string[] | Error => {
    const ids: string[] = [];
    let bytes = 0;
    for (const r of rows) {
      if (ids.length > 0 && bytes + r.bytes > TRANSCRIPT_READ_LIMITS.pageBytesMax) break;
      ids.push(r.id);
      bytes += r.bytes;
    }
    if (bytes > budget.bytes) return tooMuch();
    budget.bytes -= bytes;
    return ids;
  });
  const wanted = chosen.flatMap((c) => (c instanceof Error ? [] : c));
  const rows = wanted.length ? ((await readRows(em, TaskMessage, { id: { $in: wanted } } as never)) as TaskMessageRow[]) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return chosen.map((c) =>
    c instanceof Error
      ? c
      : c
          .map((id) => byId.get(id))
          .filter((r): r is TaskMessageRow => !!r)
          .reverse(),
  );
}
