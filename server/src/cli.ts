import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { serve } from './main.js';
import { DEMO_VARIANTS, startFixtureAgent, VARIANTS } from './fixture-agent/agent.js';

// `taskbay serve | demo-agent [--port N]`
const [command = 'serve', ...rest] = process.argv.slice(2);

function onStop(stop: () => Promise<void>) {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
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
      const running = await serve(loadConfig());
      onStop(running.stop);
      break;
    }
    case 'demo-agent': {
      const { values } = parseArgs({ args: rest, options: { port: { type: 'string', default: '4010' }, host: { type: 'string', default: '127.0.0.1' } } });
      const agent = await startFixtureAgent({ port: Number(values.port), host: values.host });
      console.log('Fixture agent cards (the packaged demo variants first):');
      for (const v of DEMO_VARIANTS) console.log(`  ${agent.cardUrl(v)}`);
      for (const v of VARIANTS.filter((x) => !DEMO_VARIANTS.includes(x))) console.log(`  ${agent.cardUrl(v)}`);
      onStop(agent.close);
      break;
    }
    default:
      console.error(`unknown command ${command}; use: serve | demo-agent [--port N]`);
      process.exit(2);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
