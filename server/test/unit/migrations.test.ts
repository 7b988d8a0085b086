import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrationsList } from '../../src/db/migrations/index.js';

// Migrations run in the order of their names (db/migrations/index.ts): MikroORM runs the pending
// entries of migrationsList in list order and records each by name, so the list is the run order
// and must be the names' order, and every migration file must be in it.

const DIR = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
const names = migrationsList.map((m) => m.name);

describe('the migrations list', () => {
  it('is sorted by name, each name once', () => {
    expect(names).toEqual([...names].sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it('lists every migration file of db/migrations/, each under its own class name', () => {
    const files = readdirSync(DIR)
      .filter((f) => f !== 'index.ts')
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(names).toEqual(files);
    for (const m of migrationsList) expect(m.class.name).toBe(m.name);
  });

  it('names each migration Migration<14 digits>_<words>, so sorting by name sorts by its timestamp', () => {
    for (const name of names) expect(name).toMatch(/^Migration\d{14}_[a-z0-9_]+$/);
  });
});
