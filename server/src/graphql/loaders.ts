import DataLoader from 'dataloader';
import { readRows } from '../db/read-rows.js';
import { sql } from '../db/sql.js';
import type { EntityManager } from '@mikro-orm/postgresql';

// Per-request batching; never module-level (a loader caches what one viewer may see). The rows
// are read as plain rows (db/read-rows.ts): fields only show them, and making managed entities of
// them (unit of work, snapshots) cost more than the statement (the inbox: docs/PERFORMANCE.md). Code that
// changes a row loads its own entity through the entity manager.

/** A loader by id that also answers, without a promise, for rows a batch has already read. */
export type RowLoader<T> = DataLoader<string, T | null> & { peek(id: string): T | null | undefined };

export function byId<T extends { id: string }>(em: EntityManager, entity: any): RowLoader<T> {
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

export function manyBy<T>(em: EntityManager, entity: any, key: string, orderBy: Record<string, 'asc' | 'desc'>) {
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

/**
 * The per-request loaders of every module, by name. Each module declares its own in its module.ts
 * (`loaders`) and adds their types here by declaration merging, so this kit names no domain.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each module's declaration merging
export interface Loaders {}

type LoaderFactory = (em: EntityManager) => object;
const factories: LoaderFactory[] = [];

/** Called once per module by modules.ts. */
export function registerLoaders(factory: LoaderFactory): void {
  factories.push(factory);
}

export function createLoaders(em: EntityManager): Loaders {
  const loaders: Record<string, unknown> = {};
  for (const factory of factories) {
    for (const [name, loader] of Object.entries(factory(em))) {
      if (name in loaders) throw new Error(`two modules declare the loader ${name}`);
      loaders[name] = loader;
    }
  }
  return loaders as unknown as Loaders;
}
