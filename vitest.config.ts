import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // JSX of the console (web/) with React's automatic runtime.
  oxc: { jsx: { runtime: 'automatic' } },
  resolve: {
    // graphql 16 has no "exports": Node gives dependencies its CommonJS build, Vite would give
    // test files the .mjs build, and two copies of graphql refuse each other's types.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Server tests (real Postgres) and the console's renderer tests (react-dom/server, no DOM
    // needed). Browser end-to-end tests are server/test/e2e/*.e2e.ts, run by `npm run test:e2e`.
    include: ['server/test/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}'],
    globalSetup: ['server/test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database; two files at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // In CI only: one retry for the few tests that wait on real timing (job backoff, a
    // subscription registering; graphql-ws has no per-subscription acknowledgement). A real
    // bug fails both tries; a retried pass is printed as such and is worth a look.
    retry: process.env.CI ? 1 : 0,
  },
});
