#!/usr/bin/env node
// Seed 003's reference command, as written there: `node scripts/fixture-form-agent.mjs 4010`.
// A thin entry to the fixture agent (server/src/fixture-agent/, the one implementation
// the tests exercise): it loads the TypeScript through tsx and prints the card URLs, the form,
// plain and invalid variants first, as the seed lists them. Same flags as `npm run demo-agent`.
import { register } from 'tsx/esm/api';

register();
const { runDemoAgent } = await import('../server/src/fixture-agent/demo.ts');
try {
  const agent = await runDemoAgent(process.argv.slice(2), ['form', 'plain', 'invalid']);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => agent.close().then(() => process.exit(0)));
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exit(64);
}
