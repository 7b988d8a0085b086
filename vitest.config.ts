import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 has no "exports": Node gives dependencies its CommonJS build, Vite would give
    // test files the .mjs build, and two copies of graphql refuse each other's types.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['server/test/**/*.test.ts'],
    globalSetup: ['server/test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database; two files at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
  },
});
