import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // JSX of the console (web/) with React's automatic runtime.
  oxc: { jsx: { runtime: 'automatic' } },
  resolve: {
    // graphql 16 has no "exports": Node gives dependencies its CommonJS build, Vite would give
    // test files the .mjs build, and two copies of graphql refuse each other's types.
    // @taskbay/verify by name (docs/samples/verify-sdk-executor.ts imports it as an agent does): its
    // sources, as the server uses them, not a dist/ that may not be built (tsconfig.json "paths").
    alias: [
      { find: /^graphql$/, replacement: require.resolve('graphql') },
      { find: /^@taskbay\/verify$/, replacement: fileURLToPath(new URL('packages/taskbay-verify/src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    // Server tests (real Postgres) and the console's renderer tests (react-dom/server, no DOM
    // needed). Browser end-to-end tests are server/test/e2e/*.e2e.ts, run by `npm run test:e2e`.
    // @taskbay/agent's tests live in its package, where the frameworks and their zod 4 resolve.
    include: ['server/test/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}', 'packages/taskbay-agent/test/**/*.test.ts'],
    globalSetup: ['server/test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database; two files at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // No retries, in CI or anywhere: a test passes on its first run or fails. Tests wait for
    // states (eventually) and prove a subscription live with a probe (support/harness.ts),
    // never for a guessed time.
    retry: 0,
  },
});
