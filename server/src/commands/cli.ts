import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { approvals } from './cli/approvals.js';
import { GUARD_EXIT } from './cli/client.js';
import { guard } from './cli/guard.js';

// The terminal side of command approvals: `taskbay guard -- CMD ...` (cli/guard.ts, the hook's
// client) and `taskbay approvals list|show|approve|reject|sweep|replay` (cli/approvals.ts, for
// reviewers who live in a terminal), over the client in cli/client.ts.

/** Entry from cli.ts. */
export async function runCli(command: 'guard' | 'approvals', args: string[]): Promise<never> {
  const code = command === 'guard' ? await guard(args) : await approvals(args);
  process.exit(code);
}

// Run directly (`tsx server/src/commands/cli.ts guard -- CMD`): the same commands without loading
// the server's modules, so a hook's guard starts in about a second instead of several.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'guard' || command === 'approvals') void runCli(command, rest);
  else {
    process.stderr.write('usage: cli.ts guard [options] -- COMMAND ... | approvals list|show|approve|reject|sweep|replay\n');
    process.exit(GUARD_EXIT.USAGE);
  }
}
