import { readFileSync, writeFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/modules.js';

// schema.graphql is printed from the Pothos schema; `--check` fails when it is stale (CI).
const path = new URL('../../schema.graphql', import.meta.url);
const printed = `# Generated from the Pothos schema by \`npm run schema:print\`; do not edit.\n\n${printSchema(lexicographicSortSchema(schema))}\n`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {}
  if (current !== printed) {
    console.error('schema.graphql is stale: run `npm run schema:print` and commit it.');
    process.exit(1);
  }
  console.log('schema.graphql matches the Pothos schema.');
} else {
  writeFileSync(path, printed);
  console.log('wrote schema.graphql');
}
