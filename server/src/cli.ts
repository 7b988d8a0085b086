#!/usr/bin/env node
import { constants as osConstants } from 'node:os';

// `taskbay serve | demo | demo-agent [PORT] | hook HOST | guard -- CMD | approvals ... | mcp-proxy [URL] | audit export|verify`:
// in the repository `npm run taskbay -- …`, packaged as `taskbay` and `agent-taskbay`
// (packages/agent-taskbay). Each command loads only its own modules, so the hook-facing `hook`
// and `guard` start fast.
const [command = 'serve', ...rest] = process.argv.slice(2);

const USAGE = `usage: taskbay COMMAND (agent-taskbay COMMAND when installed from npm)
  serve                 the API and the reviewer console (default; settings from the environment, see README)
  demo                  serve, plus the fixture agent with a showcase task waiting for approval
  demo-agent [PORT]     the fixture agent alone: [--port N] [--host H] [--streaming] [--push] [--skill-routing] [--http-json]
  hook claude-code|codex [--wait SECONDS] [--expires SECONDS]
                        a coding agent's hook: the host's hook JSON on stdin, its answer on stdout
                        and in the exit code (TASKBAY_URL, TASKBAY_TOKEN)
  guard [options] -- COMMAND [ARG ...]
                        run COMMAND once a person approved it (TASKBAY_URL, TASKBAY_TOKEN)
  approvals list|show|approve|reject|sweep|replay
  mcp-proxy [URL]       a stdio MCP server for hosts that start servers as processes (Claude Desktop),
                        relaying to a Streamable HTTP MCP URL (default TASKBAY_URL + /mcp) with
                        TASKBAY_TOKEN; stdout carries only the protocol
  audit export|verify`;

/**
 * How long a graceful stop may take before the process exits anyway. A delivery cut off this
 * way is like one cut off by a crash: the next start (or another instance) runs it again
 * (jobs/recovery.ts). Also the bound when the database went away under a running
 * server, where parts of the stop wait for a connection that does not come.
 */
const GRACEFUL_STOP_MS = 30_000;

/**
 * SIGINT/SIGTERM/SIGHUP from the start on: one that arrives while the command is still
 * starting stops it as soon as it has started (an unhandled signal would kill the process
 * without stopping the embedded Postgres). A second signal exits at once.
 */
function handleSignals(): { started(stop: () => Promise<void>): void } {
  let stop: (() => Promise<void>) | null = null;
  let signalled = false;
  const stopNow = (s: () => Promise<void>) => {
    setTimeout(() => {
      console.error(`Taskbay did not stop within ${GRACEFUL_STOP_MS / 1000} s; exiting now.`);
      process.exit(1);
    }, GRACEFUL_STOP_MS).unref();
    s().then(
      () => process.exit(0),
      (e) => {
        console.error(`Taskbay did not stop cleanly: ${e instanceof Error ? e.message : String(e)}`);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (signalled) {
        console.error(`${signal} again: exiting without waiting for the graceful stop.`);
        process.exit(128 + osConstants.signals[signal]);
      }
      signalled = true;
      if (stop) stopNow(stop);
    });
  }
  return {
    started(s) {
      stop = s;
      if (signalled) stopNow(s);
    },
  };
}

/**
 * The server runs as production unless NODE_ENV says otherwise, set before its modules load:
 * graphql-js checks every type test for a second copy of itself outside production (about 3 % of
 * the server's CPU on the inbox's list). Nothing of Taskbay's own behaviour reads it;
 * NODE_ENV=development still turns GraphiQL on (config.ts).
 */
function productionUnlessSaid() {
  process.env.NODE_ENV ??= 'production';
}

async function main() {
  switch (command) {
    case 'serve': {
      productionUnlessSaid();
      const signals = handleSignals();
      const [{ loadConfig }, { serve }] = await Promise.all([import('./config.js'), import('./main.js')]);
      signals.started((await serve(loadConfig())).stop);
      return;
    }
    case 'hook':
      return (await import('./hooks/cli.js')).runHookCli(rest);
    case 'guard':
    case 'approvals':
      return (await import('./commands/cli.js')).runCli(command, rest);
    case 'mcp-proxy':
      return (await import('./mcp/cli.js')).runMcpProxy(rest);
    case 'audit':
      return (await import('./audit/cli.js')).runAuditCli(rest);
    case 'demo': {
      productionUnlessSaid();
      const signals = handleSignals();
      return signals.started((await (await import('./fixture-agent/demo.js')).runDemo(rest)).stop);
    }
    case 'demo-agent': {
      const signals = handleSignals();
      const agent = await (await import('./fixture-agent/demo.js')).runDemoAgent(rest);
      return signals.started(agent.close);
    }
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      console.error(`unknown command ${command}\n${USAGE}`);
      process.exit(2);
  }
}

main().catch((e) => {
  const message = e instanceof Error ? e.message : String(e);
  // A hook that fails to start must still block (hooks/contracts.ts): exit 2 with the reason,
  // which both hosts' PreToolUse read as a denial; any other code would let the command run.
  if (command === 'hook') {
    process.stderr.write(`Taskbay could not decide on this tool call, so it is blocked: taskbay hook failed to start (${message}). Nothing ran.\n`);
    process.exit(2);
  }
  console.error(message);
  process.exit(1);
});
