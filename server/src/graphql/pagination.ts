import { DomainError } from '../errors.js';

// Cursor pagination over (createdAt desc, id desc): stable while new rows arrive at the top.
export const PAGE_MAX = 100;

export interface PageArgs {
  first?: number | null;
  after?: string | null;
}

export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

/** A cursor is ~82 characters; anything much longer is not one of ours. */
const CURSOR_MAX_LENGTH = 128;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECODED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** Exactly what encodeCursor makes, or BAD_USER_INPUT before anything reaches SQL. */
export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const invalid = () => new DomainError('BAD_USER_INPUT', 'invalid cursor');
  if (cursor.length > CURSOR_MAX_LENGTH || !BASE64URL.test(cursor)) throw invalid();
  const m = DECODED.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m) throw invalid();
  const createdAt = new Date(m[1]!);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== m[1]) throw invalid();
  return { createdAt, id: m[2]! };
}

/** The filter and limit for one page; fetch limit + 1 rows and pass them to toConnection. */
export function pageQuery(args: PageArgs): { where: Record<string, unknown>; limit: number } {
  const first = args.first ?? 50;
  if (!Number.isInteger(first) || first < 0 || first > PAGE_MAX) {
    throw new DomainError('BAD_USER_INPUT', `first must be between 0 and ${PAGE_MAX}`);
  }
  if (!args.after) return { where: {}, limit: first + 1 };
  const c = decodeCursor(args.after);
  return {
    where: { $or: [{ createdAt: { $lt: c.createdAt } }, { createdAt: c.createdAt, id: { $lt: c.id } }] },
    limit: first + 1,
  };
}

export function toConnection<T extends { createdAt: Date; id: string }>(rows: T[], limit: number, after?: string | null) {
  const hasNextPage = rows.length >= limit;
  const page = hasNextPage ? rows.slice(0, limit - 1) : rows;
  const edges = page.map((node) => ({ node, cursor: encodeCursor(node) }));
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: !!after,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

export const ORDER_NEWEST = { createdAt: 'desc', id: 'desc' } as const;
