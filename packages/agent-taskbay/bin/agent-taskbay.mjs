#!/usr/bin/env node
// The package's bin. Installed from a tarball (or a registry) it runs dist/cli.js as shipped. In
// a checkout of the repository, where build.mjs sits beside it, it first builds what is stale,
// so `npx agent-taskbay demo-agent` works in a fresh clone after `npm ci`, as seed 003 writes it.
import { existsSync } from 'node:fs';

const build = new URL('../build.mjs', import.meta.url);
if (existsSync(build)) {
  const { ensureBuilt } = await import(build.href);
  // Progress on stderr: stdout is the command's own (guard, approvals print there).
  await ensureBuilt({ ifStale: true, log: (line) => console.error(line) });
}
await import(new URL('../dist/cli.js', import.meta.url).href);
