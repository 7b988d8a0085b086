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

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(at ?? '');
  if (!id || Number.isNaN(createdAt.getTime())) throw new DomainError('BAD_USER_INPUT', 'invalid cursor');
  return { createdAt, id };
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
