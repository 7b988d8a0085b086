import { createServer } from 'node:net';

// Start-up failures an operator can fix. Each message is one sentence that names the setting or
// the action that fixes it; the CLI prints it alone (no stack), tests match it. One place for
// the wording so the embedded Postgres, the HTTP listener and the docs say the same thing.

export class StartupError extends Error {
  override name = 'StartupError';
}

export type PostgresUserCannotReach = { what: 'data' | 'binaries'; blocked: string; target: string };

export const startupMessage = {
  portTaken: (setting: 'PORT' | 'TASKBAY_PG_PORT', host: string, port: number) =>
    setting === 'TASKBAY_PG_PORT'
      ? `Port ${port} on ${host} is already in use, so the embedded Postgres cannot listen on it: set TASKBAY_PG_PORT to a free port (or DATABASE_URL to use another Postgres).`
      : `Port ${port} on ${host} is already in use, so Taskbay cannot listen on it: set PORT to a free port.`,

  diskFull: (dir: string, setting: 'TASKBAY_DATA_DIR' | 'TMPDIR') =>
    `The disk holding ${dir} is full (no space left on device): free some space there or set ${setting} to a directory on another disk.`,

  /** Postgres refuses to run as root, so as root Taskbay runs it as the `postgres` system user. */
  postgresUserCannotReach: ({ what, blocked, target }: PostgresUserCannotReach) =>
    what === 'data'
      ? `The postgres system user, which runs the embedded Postgres because Postgres refuses to run as root, cannot enter ${blocked} to reach the database in ${target}: set TASKBAY_DATA_DIR to a directory it can enter (moving the existing data there) or run Taskbay as a non-root user.`
      : `The postgres system user, which runs the embedded Postgres because Postgres refuses to run as root, cannot run the Postgres binaries in ${target} (blocked at ${blocked}): set TMPDIR to a directory it can enter or run Taskbay as a non-root user.`,

  noPostgresUser: (detail: string) =>
    `Postgres refuses to run as root and there is no postgres system user to run it as, and creating one failed (${detail}): create it with \`useradd --system postgres\` or run Taskbay as a non-root user.`,

  dataDirInUse: (pgDir: string, pid: number) =>
    `Another Postgres (pid ${pid}) is still running on ${pgDir} and did not stop: stop it, or set TASKBAY_DATA_DIR to another directory.`,
};

/** ENOSPC from Node, or "No space left on device" in a Postgres program's output. */
export function isDiskFull(e: unknown, output = ''): boolean {
  return (e as { code?: string } | null)?.code === 'ENOSPC' || /no space left on device/i.test(output);
}

/** "could not bind IPv4 address ... Address already in use" in the postmaster's output. */
export function isPortTaken(e: unknown, output = ''): boolean {
  return (e as { code?: string } | null)?.code === 'EADDRINUSE' || /address already in use/i.test(output);
}

/**
 * Fails fast, before the database starts, when the HTTP port is taken. Only a first check (the
 * port can be taken between this and the real listen, which reports it the same way).
 */
export async function assertPortFree(setting: 'PORT', host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e) => (isPortTaken(e) ? reject(new StartupError(startupMessage.portTaken(setting, host, port))) : resolve()));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
