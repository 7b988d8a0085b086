#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Builds @taskbay/verify: dist/ (ES modules and .d.ts) from src/ with the TypeScript compiler,
// one file per source file. Nothing to bundle: the sources import node:crypto and each other
// only (.dependency-cruiser.cjs, taskbay-verify-stands-alone). `npm pack` runs it as prepack.
const here = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(join(here, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
