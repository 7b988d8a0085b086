import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';

// README: `npm ci && npm start` runs Taskbay on an embedded Postgres. A start after a hard kill
// (the Postgres child left running on the data directory) must still come up.
const dir = mkdtempSync(join(tmpdir(), 'taskbay-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('embedded Postgres', () => {
  it('starts again after the previous owner was killed with SIGKILL, replacing the orphaned server', async () => {
    const port = await freePort();
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(new URL('../../src/db/embedded.ts', import.meta.url).pathname)};
      await startEmbeddedPostgres({ dir: ${JSON.stringify(dir)}, port: ${port}, persistent: true });
      process.kill(process.pid, 'SIGKILL');`;
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'ignore', timeout: 60_000 });
    const orphanPid = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(() => process.kill(orphanPid, 0)).not.toThrow(); // the orphan really is running

    const db = await startEmbeddedPostgres({ dir, port, persistent: true });
    try {
      const c = new pg.Client({ connectionString: db.url('taskbay') });
      await c.connect();
      expect((await c.query('select 1 as one')).rows[0].one).toBe(1);
      await c.end();
      expect(() => process.kill(orphanPid, 0)).toThrow(); // replaced, not adopted
    } finally {
      await db.stop();
    }
  }, 90_000);
});
