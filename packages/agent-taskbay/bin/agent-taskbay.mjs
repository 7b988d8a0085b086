#!/usr/bin/env node
// The package's bin, installed as `taskbay` and `agent-taskbay`. Installed from a tarball (or a
// registry) it runs dist/cli.js as shipped. In a checkout of the repository, where build.mjs sits
// beside it, it first builds what is stale, so `npx agent-taskbay demo-agent` works in a fresh
// clone after `npm ci`, as seed 003 writes it.
import { existsSync } from 'node:fs';

try {
  const build = new URL('../build.mjs', import.meta.url);
  if (existsSync(build)) {
    const { ensureBuilt } = await import(build.href);
    // Progress on stderr: stdout is the command's own (hook, guard, approvals print there).
    await ensureBuilt({ ifStale: true, log: (line) => console.error(line) });
  }
  await import(new URL('../dist/cli.js', import.meta.url).href);
} catch (e) {
  // `taskbay hook` must block even when it cannot start: exit 2 with the reason is a denial on
  // both hosts' PreToolUse (any other code would let the command run).
  if (process.argv[2] !== 'hook') throw e;
  process.stderr.write(`Taskbay could not decide on this tool call, so it is blocked: taskbay hook failed to start (${e instanceof Error ? e.message : String(e)}). Nothing ran.\n`);
  process.exit(2);
}
