#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Builds @taskbay/agent: dist/ (ES modules and .d.ts) from src/ with the TypeScript compiler,
// one file per source file, nothing bundled (@taskbay/verify and the frameworks stay imports).
// `npm pack` runs it as prepack. It compiles against @taskbay/verify's declarations, so in a
// checkout where that workspace has not been built yet, it builds it first.
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const verify = dirname(require.resolve('@taskbay/verify/package.json'));
if (!existsSync(join(verify, 'dist/index.d.ts'))) execFileSync(process.execPath, [join(verify, 'build.mjs')], { stdio: 'inherit' });
rmSync(join(here, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
