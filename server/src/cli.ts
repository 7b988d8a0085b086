// `taskbay serve | demo | demo-agent [--port N] [--streaming] [--push] | guard -- CMD | approvals ... | audit export|verify`
// Each command loads only its own modules, so the hook-facing `guard` starts fast.
const [command = 'serve', ...rest] = process.argv.slice(2);

function onStop(stop: () => Promise<void>) {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      stop().then(
        () => process.exit(0),
        (e) => {
          console.error(e);
          process.exit(1);
        },
      );
    });
  }
}

async function main() {
  switch (command) {
    case 'serve': {
      const [{ loadConfig }, { serve }] = await Promise.all([import('./config.js'), import('./main.js')]);
      onStop((await serve(loadConfig())).stop);
      return;
    }
    case 'guard':
    case 'approvals':
      return (await import('./grants/cli.js')).runCli(command, rest);
    case 'audit':
      return (await import('./audit/cli.js')).runAuditCli(rest);
    case 'demo':
      return onStop((await (await import('./fixture-agent/demo.js')).runDemo(rest)).stop);
    case 'demo-agent': {
      const agent = await (await import('./fixture-agent/demo.js')).runDemoAgent(rest);
      return onStop(agent.close);
    }
    default:
      console.error(`unknown command ${command}; use: serve | demo | demo-agent [--port N] | guard -- CMD | approvals list|show|approve|reject|sweep|replay | audit export|verify`);
      process.exit(2);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
